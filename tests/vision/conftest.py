"""Tiny, randomly initialised vision models built with the libraries' own config classes and
saved in the libraries' own formats, for tests that load them through flaneur's code.

Nothing is downloaded: the tokenizers are built here from vocabulary files written here
(open_clip's BPE vocabulary ships inside open_clip). The builders need the ``vision`` extra;
the test modules skip without it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from flaneur.perception.landmarks.clip import import_open_clip
from flaneur.views.base import View

CLIP_MEAN = (0.25, 0.5, 0.75)
"""A mean unlike open_clip's default, saved in the tiny CLIP's preprocessing config."""
CLIP_STD = (0.5, 0.25, 0.125)
"""A standard deviation unlike open_clip's default, saved beside it."""
OWL_WORDS = ("a", "photo", "of", "bench", "waste", "basket", "kiosk", "trash", "bin")
"""Words the tiny OWL tokenizer has merges for (others are spelled out in bytes)."""
BERT_WORDS = ("bench", "waste", "basket", "kiosk", "trash", "bin", "fire", "hydrant")
"""Words of the tiny BERT vocabulary (besides the special tokens, "." and the letters)."""


def noise_view(width: int, height: int, seed: int, node: str = "n1") -> View:
    """A view of seeded random pixels."""
    pixels = np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)
    return View(Image.fromarray(pixels), node, 90.0)


# ------------------------------------------------------------------------ CLIP
@dataclass
class TinyCLIP:
    """A tiny open_clip CLIP saved in open_clip's folder format, and the model in memory."""

    folder: Path
    model: Any
    config: dict
    mean: tuple[float, ...] = CLIP_MEAN
    std: tuple[float, ...] = CLIP_STD


def build_clip(folder: Path) -> TinyCLIP:
    """``open_clip_config.json`` (model and preprocessing configs) and
    ``open_clip_model.safetensors`` of a 1.6 M-parameter ViT CLIP (32 px images, patches of
    8, one layer per tower, 16-token context)."""
    # lazy: the vision extra is optional, and this conftest loads in every test run
    import torch
    from safetensors.torch import save_file

    open_clip, _ = import_open_clip()  # as flaneur imports it (torchvision may be absent)
    config = {
        "embed_dim": 16,
        "vision_cfg": {
            "image_size": 32,
            "layers": 1,
            "width": 32,
            "patch_size": 8,
            "head_width": 16,
        },
        "text_cfg": {
            "context_length": 16,
            "vocab_size": 49408,
            "width": 32,
            "heads": 2,
            "layers": 1,
        },
    }
    torch.manual_seed(0)
    model = open_clip.CLIP(**config).eval()
    folder.mkdir(parents=True, exist_ok=True)
    preprocess = {"mean": list(CLIP_MEAN), "std": list(CLIP_STD), "interpolation": "bicubic"}
    (folder / "open_clip_config.json").write_text(
        json.dumps({"model_cfg": config, "preprocess_cfg": preprocess}), encoding="utf-8"
    )
    save_file(model.state_dict(), str(folder / "open_clip_model.safetensors"))
    return TinyCLIP(folder, model, config)


# ------------------------------------------------------------------------ OWL-ViT, OWLv2
def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2/CLIP's byte-level alphabet (each byte as a printable character)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), 256)]
    codes, extra = list(keep), 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            codes.append(256 + extra)
            extra += 1
    return dict(zip(keep, (chr(c) for c in codes), strict=True))


def clip_tokenizer_files(folder: Path) -> tuple[Path, Path]:
    """``vocab.json`` and ``merges.txt`` of a tiny CLIP BPE: the byte alphabet (alone and
    word-final), merges that spell :data:`OWL_WORDS`, and the start and end tokens."""
    alphabet = list(_bytes_to_unicode().values())
    vocab = {c: k for k, c in enumerate([*alphabet, *(c + "</w>" for c in alphabet)])}
    merges: list[str] = []
    for word in OWL_WORDS:
        head = word[0]
        for k, ch in enumerate(word[1:]):
            last = k == len(word) - 2
            merge = f"{head} {ch}</w>" if last else f"{head} {ch}"
            head += ch
            vocab.setdefault(head + ("</w>" if last else ""), len(vocab))
            if merge not in merges:
                merges.append(merge)
    for special in ("<|startoftext|>", "<|endoftext|>"):
        vocab[special] = len(vocab)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text(
        "#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8"
    )
    return folder / "vocab.json", folder / "merges.txt"


@dataclass
class TinyDetector:
    """A tiny detector saved with ``save_pretrained`` (model and processor), and both in
    memory for the tests' reference computations."""

    folder: Path
    model: Any
    processor: Any


def build_owl(folder: Path, *, v2: bool) -> TinyDetector:
    """OWL-ViT (or OWLv2) with 32 px images in patches of 8 (16 boxes), one layer per tower.

    The box head's last layer is zeroed, so every box is the model's prior for its patch
    (centre at the patch's lower right corner, the patch's size): the tests know where each
    box must land in the view's pixels.
    """
    # lazy: the vision extra is optional, and this conftest loads in every test run
    import torch
    import transformers as tf

    vocab_file, merges_file = clip_tokenizer_files(folder / "tokenizer")
    tokenizer = tf.CLIPTokenizer(
        vocab=str(vocab_file), merges=str(merges_file), model_max_length=32
    )
    vocab = tokenizer.get_vocab()
    text = {
        "vocab_size": len(vocab),
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "max_position_embeddings": 32,
        "bos_token_id": vocab["<|startoftext|>"],
        "eos_token_id": vocab["<|endoftext|>"],
        "pad_token_id": vocab["<|endoftext|>"],
    }
    vision = {
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "image_size": 32,
        "patch_size": 8,
    }
    config_class = tf.Owlv2Config if v2 else tf.OwlViTConfig
    config = config_class(text_config=text, vision_config=vision, projection_dim=32)
    torch.manual_seed(1)
    model = (tf.Owlv2ForObjectDetection if v2 else tf.OwlViTForObjectDetection)(config).eval()
    with torch.no_grad():
        model.box_head.dense2.weight.zero_()
        model.box_head.dense2.bias.zero_()
    size = {"height": 32, "width": 32}
    if v2:
        image_processor = tf.Owlv2ImageProcessorPil(size=size)
        processor = tf.Owlv2Processor(image_processor=image_processor, tokenizer=tokenizer)
    else:
        image_processor = tf.OwlViTImageProcessorPil(size=size, crop_size=size)
        processor = tf.OwlViTProcessor(image_processor=image_processor, tokenizer=tokenizer)
    model.save_pretrained(folder / "model")
    processor.save_pretrained(folder / "model")
    return TinyDetector(folder / "model", model, processor)


# ------------------------------------------------------------------------ Grounding DINO
def bert_vocab_file(folder: Path) -> Path:
    """``vocab.txt`` of a tiny BERT WordPiece: special tokens, ".", :data:`BERT_WORDS`, the
    letters and their continuations."""
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", *BERT_WORDS, *letters]
    words += [f"##{c}" for c in letters]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    return folder / "vocab.txt"


def build_grounding_dino(folder: Path) -> TinyDetector:
    """Grounding DINO (95 k parameters): a two-stage Swin backbone of 16 channels, a one-layer
    BERT of 32, one encoder and two decoder layers of 32, 12 queries; images resized to a
    short side of 32 px (at most 64 px long)."""
    # lazy: the vision extra is optional, and this conftest loads in every test run
    import torch
    import transformers as tf

    tokenizer = tf.BertTokenizer(vocab=str(bert_vocab_file(folder / "tokenizer")))
    config = tf.GroundingDinoConfig(
        backbone_config=tf.SwinConfig(
            image_size=32,
            patch_size=4,
            embed_dim=16,
            depths=[1, 1],
            num_heads=[1, 1],
            window_size=4,
            out_features=["stage1", "stage2"],
        ),
        text_config=tf.BertConfig(
            vocab_size=tokenizer.vocab_size,
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=64,
        ),
        num_queries=12,
        encoder_layers=1,
        decoder_layers=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        d_model=32,
        num_feature_levels=2,
        encoder_n_points=2,
        decoder_n_points=2,
        max_text_len=32,
    )
    torch.manual_seed(2)
    model = tf.GroundingDinoForObjectDetection(config).eval()
    image_processor = tf.GroundingDinoImageProcessorPil(
        size={"shortest_edge": 32, "longest_edge": 64}
    )
    processor = tf.GroundingDinoProcessor(image_processor=image_processor, tokenizer=tokenizer)
    model.save_pretrained(folder / "model")
    processor.save_pretrained(folder / "model")
    return TinyDetector(folder / "model", model, processor)


# ------------------------------------------------------------------------ fixtures
@pytest.fixture
def noise() -> Callable[..., View]:
    """:func:`noise_view`: ``noise(width, height, seed)``."""
    return noise_view


@pytest.fixture(scope="session")
def tiny_clip(tmp_path_factory: pytest.TempPathFactory) -> TinyCLIP:
    """The tiny CLIP, built once per test process."""
    return build_clip(tmp_path_factory.mktemp("clip"))


@pytest.fixture(scope="session")
def tiny_owlvit(tmp_path_factory: pytest.TempPathFactory) -> TinyDetector:
    """The tiny OWL-ViT, built once per test process."""
    return build_owl(tmp_path_factory.mktemp("owlvit"), v2=False)


@pytest.fixture(scope="session")
def tiny_owlv2(tmp_path_factory: pytest.TempPathFactory) -> TinyDetector:
    """The tiny OWLv2, built once per test process."""
    return build_owl(tmp_path_factory.mktemp("owlv2"), v2=True)


@pytest.fixture(scope="session")
def tiny_grounding_dino(tmp_path_factory: pytest.TempPathFactory) -> TinyDetector:
    """The tiny Grounding DINO, built once per test process."""
    return build_grounding_dino(tmp_path_factory.mktemp("grounding-dino"))
