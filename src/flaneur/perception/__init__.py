"""Perception: OCR, landmark scorers, box-to-place matching and landmark extraction."""

from flaneur.perception.extraction import (
    aextract_landmarks,
    extract_landmarks,
    rule_based_landmarks,
)
from flaneur.perception.landmarks import (
    CLIPLandmarks,
    LandmarkObservation,
    LandmarkScorer,
    MapLandmarks,
    OCRLandmarks,
    OpenCLIPBackend,
    RandomProjectionBackend,
    VLMLandmarks,
    best_per_landmark,
)
from flaneur.perception.matching import BoxMatch, fuzzy_ratio, match_box, normalize_name
from flaneur.perception.ocr import OCR, OCRError, TextBox

__all__ = [
    "OCR",
    "BoxMatch",
    "CLIPLandmarks",
    "LandmarkObservation",
    "LandmarkScorer",
    "MapLandmarks",
    "OCRError",
    "OCRLandmarks",
    "OpenCLIPBackend",
    "RandomProjectionBackend",
    "TextBox",
    "VLMLandmarks",
    "aextract_landmarks",
    "best_per_landmark",
    "extract_landmarks",
    "fuzzy_ratio",
    "match_box",
    "normalize_name",
    "rule_based_landmarks",
]
