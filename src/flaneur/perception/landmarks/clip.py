"""``CLIPLandmarks``: image-text similarity standardised per landmark (VELMA).

For a landmark ``l`` with caption ``"picture of {l}"``, the similarity ``s(view, l)`` is
standardised over a reference set of views: ``z = (s - mean_l) / std_l``; the landmark is
visible when ``z >= tau`` (VELMA uses ``tau = 3.5``).  The similarity comes from a
backend with ``embed_images`` and ``embed_texts`` (unit vectors): :class:`OpenCLIPBackend`
(``pip install flaneur[clip]``; users bring weights) or the tiny
:class:`RandomProjectionBackend` in numpy that tests use to exercise the code path.
"""

from __future__ import annotations

import zlib
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from flaneur.errors import FlaneurError
from flaneur.perception.landmarks.base import LandmarkObservation, LandmarkScorer, unique_landmarks
from flaneur.perception.ocr import image_digest
from flaneur.views.base import View


class CLIPError(FlaneurError):
    """open_clip is missing, or the scorer is used before it has a reference set."""


@runtime_checkable
class EmbeddingBackend(Protocol):
    """Joint image/text embeddings (rows are unit vectors)."""

    name: str

    def embed_images(self, images: Sequence[Image.Image]) -> NDArray[np.float32]:
        """``(n, d)`` image embeddings."""
        ...

    def embed_texts(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``(n, d)`` text embeddings."""
        ...


def _unit(x: NDArray) -> NDArray[np.float32]:
    x = np.asarray(x, dtype=np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


class RandomProjectionBackend:
    """A tiny, deterministic stand-in for CLIP: random projections of pixels and of
    character trigrams. It proves the code path; its similarities mean little.

    Parameters
    ----------
    dim
        Embedding size.
    seed
        Seed of the random projections.
    thumb
        Images are reduced to ``thumb x thumb`` RGB pixels before projection.
    """

    name = "random-projection"

    def __init__(self, dim: int = 64, seed: int = 0, thumb: int = 16, buckets: int = 2048):
        rng = np.random.default_rng(seed)
        self.thumb, self.buckets = thumb, buckets
        self._w_img = rng.standard_normal((thumb * thumb * 3, dim)).astype(np.float32)
        self._w_txt = rng.standard_normal((buckets, dim)).astype(np.float32)

    def embed_images(self, images: Sequence[Image.Image]) -> NDArray[np.float32]:
        """Project mean-removed thumbnails."""
        rows = []
        for img in images:
            a = np.asarray(img.convert("RGB").resize((self.thumb, self.thumb)), np.float32)
            a = a.ravel() / 255.0
            rows.append(a - a.mean())
        return _unit(np.asarray(rows) @ self._w_img)

    def embed_texts(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Project hashed character-trigram counts."""
        rows = np.zeros((len(texts), self.buckets), np.float32)
        for i, text in enumerate(texts):
            t = f"  {text.lower()}  "
            for k in range(len(t) - 2):
                rows[i, zlib.crc32(t[k : k + 3].encode()) % self.buckets] += 1.0
        return _unit(rows @ self._w_txt)


class OpenCLIPBackend:
    """CLIP through ``open_clip`` (imported on first use; install ``flaneur[clip]``).

    Parameters
    ----------
    model
        open_clip architecture name (``"ViT-B-32"``, ...).
    pretrained
        A weights file path or an open_clip pretrained tag; None = random initialisation
        (only for tests of the code path).
    device
        Torch device.
    """

    def __init__(
        self, model: str = "ViT-B-32", pretrained: str | Path | None = None, device: str = "cpu"
    ) -> None:
        try:
            # optional extra flaneur[clip]
            import open_clip
            import torch
        except ImportError as err:
            raise CLIPError(
                "CLIPLandmarks needs open_clip and torch: pip install 'flaneur[clip]'"
            ) from err
        self._torch = torch
        kwargs: dict[str, Any] = {"device": device}
        if pretrained is not None:
            kwargs["pretrained"] = str(pretrained)
        self.model, _, self.preprocess = open_clip.create_model_and_transforms(model, **kwargs)
        self.model.eval()
        self.tokenizer = open_clip.get_tokenizer(model)
        self.device = device
        self.name = f"open_clip/{model}/{pretrained or 'random'}"

    def embed_images(self, images: Sequence[Image.Image]) -> NDArray[np.float32]:
        """Encode images with the CLIP image tower."""
        torch = self._torch
        batch = torch.stack([self.preprocess(im.convert("RGB")) for im in images]).to(self.device)
        with torch.no_grad():
            return _unit(self.model.encode_image(batch).float().cpu().numpy())

    def embed_texts(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Encode captions with the CLIP text tower."""
        torch = self._torch
        with torch.no_grad():
            tokens = self.tokenizer(list(texts)).to(self.device)
            return _unit(self.model.encode_text(tokens).float().cpu().numpy())


def standardize(scores: NDArray, mean: NDArray, std: NDArray) -> NDArray[np.float64]:
    """``z = (s - mean) / std`` per landmark (columns), guarding zero spread."""
    return (np.asarray(scores, float) - mean) / np.maximum(np.asarray(std, float), 1e-9)


def _image(x: View | Image.Image) -> Image.Image:
    return x.image if isinstance(x, View) else x


class CLIPLandmarks(LandmarkScorer):
    """Landmarks whose standardised image-text similarity reaches ``tau``.

    Parameters
    ----------
    backend
        An :class:`EmbeddingBackend`.
    reference
        Views or images to standardise against (e.g. a few hundred random views of the
        city); also settable later with :meth:`fit`.
    tau
        Visibility threshold on the z-score (VELMA: 3.5).
    caption
        Caption template with ``{landmark}``.
    """

    name = "clip"

    def __init__(
        self,
        backend: EmbeddingBackend,
        reference: Sequence[View | Image.Image] | None = None,
        *,
        tau: float = 3.5,
        caption: str = "picture of {landmark}",
        cache_items: int = 4096,
    ) -> None:
        self.backend = backend
        self.tau = tau
        self.caption = caption
        self._ref: NDArray[np.float32] | None = None
        self._stats: dict[str, tuple[float, float, NDArray[np.float32]]] = {}
        self._images: OrderedDict[str, NDArray[np.float32]] = OrderedDict()
        self.cache_items = cache_items
        if reference is not None:
            self.fit(reference)

    def fit(self, reference: Sequence[View | Image.Image]) -> CLIPLandmarks:
        """Embed the reference set (at least two images) and forget old statistics."""
        if len(reference) < 2:
            raise CLIPError("the reference set needs at least two images")
        self._ref = self.backend.embed_images([_image(r) for r in reference])
        self._stats.clear()
        return self

    def stats(self, landmark: str) -> tuple[float, float]:
        """``(mean, std)`` of the landmark's similarity over the reference set."""
        mean, std, _ = self._landmark(landmark)
        return mean, std

    def _landmark(self, landmark: str) -> tuple[float, float, NDArray[np.float32]]:
        hit = self._stats.get(landmark)
        if hit is None:
            if self._ref is None:
                raise CLIPError("CLIPLandmarks needs a reference set: pass reference= or fit()")
            text = self.backend.embed_texts([self.caption.format(landmark=landmark)])[0]
            sims = self._ref @ text
            hit = (float(sims.mean()), float(sims.std()), text)
            self._stats[landmark] = hit
        return hit

    def _embed(self, view: View | Image.Image) -> NDArray[np.float32]:
        key = image_digest(view)
        emb = self._images.get(key)
        if emb is None:
            emb = self.backend.embed_images([_image(view)])[0]
            self._images[key] = emb
            while len(self._images) > self.cache_items:
                self._images.popitem(last=False)
        return emb

    def zscores(self, view: View | Image.Image, landmarks: Sequence[str]) -> NDArray[np.float64]:
        """Standardised similarity of each landmark to ``view``."""
        emb = self._embed(view)
        stats = [self._landmark(name) for name in landmarks]
        sims = np.array([emb @ t for _, _, t in stats], dtype=float)
        return standardize(
            sims, np.array([m for m, _, _ in stats]), np.array([s for _, s, _ in stats])
        )

    def score(self, view: View, landmarks: Sequence[str]) -> list[LandmarkObservation]:
        """z-score per landmark; visible when ``z >= tau``; direction = the view heading."""
        names = unique_landmarks(landmarks)
        z = self.zscores(view, names) if names else np.zeros(0)
        return [
            LandmarkObservation(
                landmark=name,
                visible=bool(zi >= self.tau),
                score=round(float(zi), 4),
                heading=view.heading,
                relative_bearing=0.0,
                source=self.name,
                node=view.node,
            )
            for name, zi in zip(names, z, strict=True)
        ]
