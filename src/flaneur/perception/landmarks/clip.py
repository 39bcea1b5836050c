"""``CLIPLandmarks``: image-text similarity standardised per landmark (VELMA).

For a landmark ``l`` with caption ``"picture of {l}"``, the similarity ``s(view, l)`` is
standardised over a reference set of views: ``z = (s - mean_l) / std_l``; the landmark is
visible when ``z >= tau`` (VELMA uses ``tau = 3.5``).  The similarity comes from a
backend with ``embed_images`` and ``embed_texts`` (unit vectors): :class:`OpenCLIPBackend`
(``flaneur[vision]`` or ``flaneur[clip]``; users bring weights, nothing is downloaded unless
allowed) or the tiny :class:`RandomProjectionBackend` in numpy that tests of the scoring
use.
"""

from __future__ import annotations

import enum
import importlib
import importlib.util
import json
import os
import sys
import types
import zlib
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
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


# ---------------------------------------------------------------- open_clip, offline
OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
"""open_clip's default image mean (OpenAI's CLIP)."""
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)
"""open_clip's default image standard deviation (OpenAI's CLIP)."""
DOWNLOAD_ENV = "FLANEUR_DOWNLOAD_WEIGHTS"
"""Set to ``1`` to let model libraries download weights (off by default)."""
_INSTALL = (
    "CLIPLandmarks needs open_clip and torch: pip install 'flaneur[vision]' and "
    "pip install --no-deps open_clip_torch (or 'flaneur[clip]')"
)
_TORCHVISION_NAMES = (
    "Normalize",
    "Compose",
    "RandomResizedCrop",
    "ToTensor",
    "Resize",
    "CenterCrop",
    "ColorJitter",
    "Grayscale",
)


def downloads_allowed(download: bool | None = None) -> bool:
    """``download`` if given, else whether the environment sets ``FLANEUR_DOWNLOAD_WEIGHTS=1``."""
    return bool(download) if download is not None else os.environ.get(DOWNLOAD_ENV) == "1"


class _InterpolationMode(enum.Enum):
    NEAREST = "nearest"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"


class _NoTorchvision:
    """Stands for a torchvision transform class that open_clip names at import."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise CLIPError(
            "open_clip's own image transforms need torchvision, which is not installed; "
            "OpenCLIPBackend prepares images itself (open_clip_pixels)"
        )


def _placeholder_modules() -> dict[str, types.ModuleType]:
    names = ("torchvision", "transforms", "transforms.functional", "ops", "ops.misc")
    root, transforms, functional, ops, misc = (
        types.ModuleType(n if n == "torchvision" else f"torchvision.{n}") for n in names
    )
    for name in _TORCHVISION_NAMES:
        setattr(transforms, name, type(name, (_NoTorchvision,), {}))
    setattr(transforms, "InterpolationMode", _InterpolationMode)  # noqa: B010
    setattr(misc, "FrozenBatchNorm2d", type("FrozenBatchNorm2d", (_NoTorchvision,), {}))  # noqa: B010
    for parent, attr, child in (
        (root, "transforms", transforms),
        (transforms, "functional", functional),
        (root, "ops", ops),
        (ops, "misc", misc),
    ):
        setattr(parent, attr, child)
    return {m.__name__: m for m in (root, transforms, functional, ops, misc)}


@contextmanager
def _torchvision_placeholders() -> Iterator[None]:
    """Placeholder ``torchvision`` modules in ``sys.modules`` while open_clip is imported.

    open_clip imports torchvision at module level for its training and evaluation
    transforms (and a batch-norm class used in fine-tuning); flaneur uses none of them. The
    placeholders name those classes and raise a :class:`CLIPError` if one is ever built; they
    leave ``sys.modules`` when the import is done, so anything else still finds no
    torchvision. transformers is imported first when it is installed (open_clip imports
    it), so it records torchvision as absent before the placeholders exist.
    """
    if importlib.util.find_spec("transformers") is not None:
        importlib.import_module("transformers")
    modules = _placeholder_modules()
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name, module in modules.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]


def import_open_clip() -> tuple[Any, Any]:
    """``(open_clip, torch)``, imported on first use.

    Where torchvision is not installed (PyTorch's CPU wheels have no torchvision beside
    them here), open_clip is imported with placeholders for the torchvision names it
    imports (:func:`_torchvision_placeholders`): flaneur never runs open_clip's transforms.

    Raises
    ------
    CLIPError
        open_clip or torch is missing, or open_clip does not import (one line, with the
        library's reason).
    """
    try:
        # lazy: optional extra flaneur[vision] / flaneur[clip] (torch takes ~2 s to import)
        import torch
    except ImportError as err:
        raise CLIPError(_INSTALL) from err
    if importlib.util.find_spec("open_clip") is None:
        raise CLIPError(_INSTALL)
    try:
        if "open_clip" not in sys.modules and importlib.util.find_spec("torchvision") is None:
            with _torchvision_placeholders():
                return importlib.import_module("open_clip"), torch
        return importlib.import_module("open_clip"), torch
    except (ImportError, RuntimeError) as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise CLIPError(
            f"open_clip does not import ({reason}); a torchvision that does not match torch "
            "breaks it: uninstall torchvision (flaneur does not need it) or match the two"
        ) from err


def _hf_needs(cfg: Mapping[str, Any], *, local: bool) -> str | None:
    """What of a model config open_clip fetches from the Hugging Face hub, if anything."""
    text = cfg.get("text_cfg") or {}
    if text.get("hf_model_name"):
        return f"the text tower {text['hf_model_name']!r}"
    if text.get("hf_tokenizer_name") and not local:
        return f"the tokenizer {text['hf_tokenizer_name']!r}"
    return None


def _open_clip_source(
    open_clip: Any, model: str, pretrained: str | Path | None, allow: bool
) -> tuple[str, str | None]:
    """``(model name for open_clip, weights file or tag)``, refusing what would download."""
    hint = f"pass download=True or set {DOWNLOAD_ENV}=1"
    for candidate in (pretrained, model):
        folder = Path(str(candidate)).expanduser() if candidate else None
        if folder is not None and folder.is_dir():
            config = folder / "open_clip_config.json"
            if not config.is_file():
                raise CLIPError(
                    f"{folder} has no open_clip_config.json (open_clip's folder format)"
                )
            try:
                cfg = json.loads(config.read_text(encoding="utf-8")).get("model_cfg") or {}
            except (OSError, ValueError, AttributeError) as err:
                raise CLIPError(f"{config}: not an open_clip config ({err})") from None
            needs = _hf_needs(cfg, local=True)
            if needs and not allow:
                raise CLIPError(f"{folder}: open_clip would download {needs}: {hint}")
            return f"local-dir:{folder}", None
    cfg = open_clip.get_model_config(model)
    if cfg is None:
        raise CLIPError(
            f"unknown open_clip architecture {model!r}: an open_clip model name or a folder "
            "with open_clip_config.json"
        )
    needs = _hf_needs(cfg, local=False)
    if needs and not allow:
        raise CLIPError(f"open_clip {model!r} would download {needs}: {hint}")
    if pretrained is None or not str(pretrained).strip():
        return model, None
    weights = Path(str(pretrained)).expanduser()
    if weights.is_file():
        return model, str(weights)
    if not allow:
        raise CLIPError(
            f"pretrained={str(pretrained)!r} is not a weights file; as an open_clip tag its "
            f"weights would be downloaded: {hint}"
        )
    return model, str(pretrained)


# ---------------------------------------------------------------- image preparation
def _height_width(size: Any) -> tuple[int, int]:
    if isinstance(size, int | float):
        return int(size), int(size)
    values = [int(v) for v in size]
    return (values[0], values[0]) if len(values) == 1 else (values[-2], values[-1])


def _resized(image: Image.Image, height: int, width: int, resample: Any) -> Image.Image:
    return image if image.size == (width, height) else image.resize((width, height), resample)


def _shortest_side(image: Image.Image, side: int) -> tuple[int, int]:
    """torchvision ``Resize(side)``: the short side becomes ``side``, the long one is
    truncated (``(height, width)``)."""
    w, h = image.size
    short, long = (w, h) if w <= h else (h, w)
    new_long = int(side * long / short)
    return (new_long, side) if w <= h else (side, new_long)


def _keep_ratio(image: Image.Image, height: int, width: int, *, longest: bool) -> tuple[int, int]:
    """open_clip's ``ResizeKeepRatio``: the longest (or shortest) side fits the target."""
    w, h = image.size
    ratio_h, ratio_w = h / height, w / width
    ratio = max(ratio_h, ratio_w) if longest else min(ratio_h, ratio_w)
    return round(h / ratio), round(w / ratio)


def _centre_crop(image: Image.Image, height: int, width: int, fill: int) -> Image.Image:
    """torchvision's ``CenterCrop`` (open_clip's ``CenterCropOrPad``): pad with ``fill``
    where the image is smaller, then crop the centre (offsets rounded as torchvision does)."""
    w, h = image.size
    if width > w or height > h:
        canvas = Image.new("RGB", (max(w, width), max(h, height)), (fill,) * 3)
        canvas.paste(
            image, ((width - w) // 2 if width > w else 0, (height - h) // 2 if height > h else 0)
        )
        image = canvas
        w, h = image.size
        if (w, h) == (width, height):
            return image
    top, left = round((h - height) / 2.0), round((w - width) / 2.0)
    return image.crop((left, top, left + width, top + height))


def _channels(value: Any, default: tuple[float, ...]) -> NDArray[np.float32]:
    values = default if value is None else value
    if isinstance(values, int | float):
        values = (values,) * 3
    return np.asarray(values, dtype=np.float32)


def open_clip_pixels(image: Image.Image, cfg: Mapping[str, Any]) -> NDArray[np.float32]:
    """``(3, height, width)`` float32: open_clip's evaluation transform, without torchvision.

    ``cfg`` is the model's preprocessing config (``open_clip.get_model_preprocess_cfg``):
    ``size``, ``resize_mode`` (``shortest``: the short side to the size and a centre crop;
    ``longest``: the long side to the size and padding with ``fill_color``; ``squash``: both
    sides to the size), ``interpolation`` (``bicubic`` or ``bilinear``, PIL's), ``mean`` and
    ``std``. The image is converted to RGB first (the same for RGB and greyscale images),
    then scaled to [0, 1] and normalised per channel: ``(x - mean) / std``.
    """
    height, width = _height_width(cfg.get("size", 224))
    mode = cfg.get("resize_mode") or "shortest"
    bicubic = Image.Resampling.BICUBIC
    resample = Image.Resampling.BILINEAR if cfg.get("interpolation") == "bilinear" else bicubic
    img = image.convert("RGB")
    if mode == "squash":
        img = _resized(img, height, width, resample)
    elif mode == "longest":
        img = _resized(img, *_keep_ratio(img, height, width, longest=True), resample)
        img = _centre_crop(img, height, width, int(cfg.get("fill_color") or 0))
    elif mode == "shortest":
        if height == width:
            img = _resized(img, *_shortest_side(img, height), resample)
        else:  # open_clip's ResizeKeepRatio, always bicubic
            img = _resized(img, *_keep_ratio(img, height, width, longest=False), bicubic)
        img = _centre_crop(img, height, width, 0)
    else:
        raise CLIPError(f"unknown open_clip resize_mode {mode!r} (shortest, longest, squash)")
    pixels = np.asarray(img, dtype=np.float32) / np.float32(255.0)
    mean, std = _channels(cfg.get("mean"), OPENAI_MEAN), _channels(cfg.get("std"), OPENAI_STD)
    return np.ascontiguousarray(((pixels - mean) / std).transpose(2, 0, 1))


class OpenCLIPBackend:
    """CLIP through ``open_clip`` (imported on first use; install ``flaneur[vision]``).

    Parameters
    ----------
    model
        open_clip architecture name (``"ViT-B-32"``, ...), or a folder in open_clip's own
        format (``open_clip_config.json`` with the model and preprocessing configs, and a
        weights file such as ``open_clip_model.safetensors``; what open_clip calls
        ``local-dir:``).
    pretrained
        A weights file of ``model``, or such a folder; None = random initialisation (only
        for tests of the code path). An open_clip pretrained tag (``"laion2b_s34b_b79k"``)
        downloads its weights, so it is refused unless downloads are allowed.
    device
        Torch device.
    download
        Allow open_clip to download weights or Hugging Face files; None = only when the
        environment sets ``FLANEUR_DOWNLOAD_WEIGHTS=1``.
    batch_size
        Images encoded at once.

    Notes
    -----
    Images are prepared by :func:`open_clip_pixels` from the model's own preprocessing
    config (size, resize mode, interpolation, mean and std), as open_clip's evaluation
    transform does, so torchvision is not needed (see :func:`import_open_clip`).
    """

    def __init__(
        self,
        model: str = "ViT-B-32",
        pretrained: str | Path | None = None,
        device: str = "cpu",
        *,
        download: bool | None = None,
        batch_size: int = 32,
    ) -> None:
        open_clip, torch = import_open_clip()
        allow = downloads_allowed(download)
        source, weights = _open_clip_source(open_clip, model, pretrained, allow)
        self._torch = torch
        self.model = open_clip.create_model(source, pretrained=weights, device=device)
        self.model.eval()
        self.tokenizer = open_clip.get_tokenizer(source)
        self.preprocess_cfg: dict[str, Any] = dict(open_clip.get_model_preprocess_cfg(self.model))
        self.device = device
        self.batch_size = max(1, int(batch_size))
        folder = source.startswith("local-dir:")
        self.name = f"open_clip/{source}" if folder else f"open_clip/{model}/{weights or 'random'}"

    def pixels(self, images: Sequence[Image.Image]) -> NDArray[np.float32]:
        """``(n, 3, h, w)``: the images as the model's input (:func:`open_clip_pixels`)."""
        return np.stack([open_clip_pixels(im, self.preprocess_cfg) for im in images])

    def embed_images(self, images: Sequence[Image.Image]) -> NDArray[np.float32]:
        """Encode images with the CLIP image tower, ``batch_size`` at a time."""
        torch = self._torch
        rows = []
        for start in range(0, len(images), self.batch_size):
            batch = torch.from_numpy(self.pixels(images[start : start + self.batch_size]))
            with torch.no_grad():
                out = self.model.encode_image(batch.to(self.device))
            rows.append(out.float().cpu().numpy())
        return _unit(np.concatenate(rows)) if rows else np.zeros((0, 0), np.float32)

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
        city); also settable later with :meth:`fit`, or as stored embeddings with
        :meth:`fit_embeddings` (``flaneur perception clip-reference``,
        :mod:`flaneur.perception.landmarks.reference`).
    tau
        Visibility threshold on the z-score (VELMA: 3.5).
    caption
        Caption template with ``{landmark}``.
    cache_items
        View embeddings kept in memory.
    ddof
        Delta degrees of freedom of the standard deviation over the reference set: 0 (the
        population one, the default) or 1 (the sample one, torch's ``std`` as VELMA's
        ``vln/clip.py`` computes it).
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
        ddof: int = 0,
    ) -> None:
        if ddof not in (0, 1):
            raise CLIPError(f"ddof must be 0 (population) or 1 (sample), not {ddof!r}")
        self.backend = backend
        self.ddof = int(ddof)
        self.tau = tau
        self.caption = caption
        self._ref: NDArray[np.float32] | None = None
        self.reference: str | None = None
        """The name of the stored reference set in use (:meth:`fit_embeddings`), else None."""
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
        self.reference = None
        return self

    def fit_embeddings(self, embeddings: NDArray, name: str | None = None) -> CLIPLandmarks:
        """Standardise against reference image embeddings made before by the same backend
        (rows, at least two; a stored reference set named ``name``) and forget old
        statistics."""
        ref = np.asarray(embeddings, dtype=np.float32)
        if ref.ndim != 2 or len(ref) < 2:
            raise CLIPError("the reference set needs at least two image embeddings")
        self._ref = _unit(ref)
        self._stats.clear()
        self.reference = name
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
            hit = (float(sims.mean()), float(sims.std(ddof=self.ddof)), text)
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
