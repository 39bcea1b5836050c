"""Local feature matching between two image crops (OpenCV ORB), for de-duplication.

V-IRL decides that two detections on real imagery show the same object when a feature
matcher (LightGlue) finds more than 100 matches between the two views. Here the matcher is
OpenCV's ORB: keypoints and binary descriptors on each crop (grey, scaled so the longer
side is ``side`` pixels), brute-force Hamming matching with Lowe's ratio test, and a
RANSAC homography over the surviving matches; the *inliers* of that homography are the
evidence, so repeated texture that matches by chance but not by geometry does not count.
Crops of the same object from two overlapping or zoomed views share many inliers; crops of
different objects share few. Synthetic views do not need this (the renderer's geometry and
the bearing rays settle it), so the visual memory uses it only for sightings that carry a
crop, which the detection step attaches for real imagery.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from flaneur.errors import FlaneurError


class FeatureMatchingError(FlaneurError):
    """Feature matching cannot run (OpenCV missing or unusable settings)."""


def _cv2() -> Any:
    try:
        # opencv-python; a clear error if its wheel is broken
        import cv2
    except ImportError:  # pragma: no cover - opencv-python is a dependency
        raise FeatureMatchingError(
            "feature matching needs OpenCV: pip install opencv-python"
        ) from None
    return cv2


@dataclass(frozen=True)
class FeatureMatcher:
    """Counts geometrically consistent ORB matches between two crops.

    Parameters
    ----------
    features
        ORB keypoints per crop.
    side
        The crops are scaled so that their longer side has this many pixels.
    ratio
        Lowe's ratio test: keep a match when its distance is below ``ratio`` times that of
        the second-best candidate.
    min_inliers
        Two crops show the same object with at least this many homography inliers.
    """

    features: int = 500
    side: int = 256
    ratio: float = 0.75
    min_inliers: int = 15

    def __post_init__(self) -> None:
        if self.features < 10 or self.side < 32:
            raise FeatureMatchingError("feature matcher needs features >= 10 and side >= 32")
        if not 0.0 < self.ratio < 1.0:
            raise FeatureMatchingError(f"ratio must lie in (0, 1), not {self.ratio}")
        if self.min_inliers < 4:
            raise FeatureMatchingError("min_inliers must be at least 4 (a homography)")

    def _grey(self, image: np.ndarray) -> np.ndarray:
        cv2 = _cv2()
        arr = np.asarray(image)
        if arr.ndim == 3:
            arr = cv2.cvtColor(arr[..., :3].astype(np.uint8), cv2.COLOR_RGB2GRAY)
        arr = arr.astype(np.uint8)
        scale = self.side / max(arr.shape[:2])
        size = (max(1, round(arr.shape[1] * scale)), max(1, round(arr.shape[0] * scale)))
        return cv2.resize(
            arr, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
        )

    def inliers(self, a: np.ndarray, b: np.ndarray) -> int:
        """Homography inliers among the ratio-tested ORB matches of crops ``a`` and ``b``."""
        cv2 = _cv2()
        orb = cv2.ORB_create(nfeatures=self.features)
        ka, da = orb.detectAndCompute(self._grey(a), None)
        kb, db = orb.detectAndCompute(self._grey(b), None)
        if da is None or db is None or len(ka) < 2 or len(kb) < 2:
            return 0
        pairs = cv2.BFMatcher(cv2.NORM_HAMMING).knnMatch(da, db, k=2)
        good = [p[0] for p in pairs if len(p) == 2 and p[0].distance < self.ratio * p[1].distance]
        if len(good) < 4:
            return 0
        src = np.array([ka[m.queryIdx].pt for m in good], dtype=np.float32).reshape(-1, 1, 2)
        dst = np.array([kb[m.trainIdx].pt for m in good], dtype=np.float32).reshape(-1, 1, 2)
        _, mask = cv2.findHomography(src, dst, cv2.RANSAC, 5.0)
        return int(mask.sum()) if mask is not None else 0

    def same(self, a: np.ndarray, b: np.ndarray) -> bool:
        """Whether crops ``a`` and ``b`` show the same object (``min_inliers`` or more)."""
        return self.inliers(a, b) >= self.min_inliers


def crop(image: Any, box: tuple[float, float, float, float], *, margin: float = 0.1) -> np.ndarray:
    """The pixels of ``box`` (grown by ``margin`` of its size each side) as an RGB array."""
    arr = np.asarray(image.convert("RGB")) if hasattr(image, "convert") else np.asarray(image)
    h, w = arr.shape[:2]
    x0, y0, x1, y1 = box
    mx, my = margin * (x1 - x0), margin * (y1 - y0)
    c0, r0 = max(0, int(x0 - mx)), max(0, int(y0 - my))
    c1, r1 = min(w, int(np.ceil(x1 + mx))), min(h, int(np.ceil(y1 + my)))
    return arr[r0 : max(r1, r0 + 1), c0 : max(c1, c0 + 1)].copy()
