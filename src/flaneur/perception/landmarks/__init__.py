"""Landmark scorers: which named landmarks are visible in a view (one interface)."""

from flaneur.perception.landmarks.base import (
    LandmarkObservation,
    LandmarkScorer,
    best_per_landmark,
)
from flaneur.perception.landmarks.clip import (
    CLIPLandmarks,
    OpenCLIPBackend,
    RandomProjectionBackend,
    standardize,
)
from flaneur.perception.landmarks.map import MapLandmarks
from flaneur.perception.landmarks.ocr import OCRLandmarks
from flaneur.perception.landmarks.vlm import VLMLandmarks

__all__ = [
    "CLIPLandmarks",
    "LandmarkObservation",
    "LandmarkScorer",
    "MapLandmarks",
    "OCRLandmarks",
    "OpenCLIPBackend",
    "RandomProjectionBackend",
    "VLMLandmarks",
    "best_per_landmark",
    "standardize",
]
