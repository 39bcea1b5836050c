"""Text models that run offline without PyTorch: the sentence embedder (all-MiniLM-L6-v2)."""

from flaneur.text.embedder import (
    DIM,
    INSTALL_HINT,
    EmbedderError,
    SentenceEmbedder,
    TextEmbedder,
    default_model_dir,
    shared_embedder,
)

__all__ = [
    "DIM",
    "INSTALL_HINT",
    "EmbedderError",
    "SentenceEmbedder",
    "TextEmbedder",
    "default_model_dir",
    "shared_embedder",
]
