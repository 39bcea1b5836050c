"""Real street photographs with known signs (``harness/street_photos.py``: six of OpenCV's
scene-text examples, from Debian's ``opencv-doc``) through OCR and the storefront detector.

The recall floors are what the default reader reaches minus a margin for other backends
and library versions: ONNX Runtime reads 12 of the 13 sign texts (all but the small, skewed
"The Washington Post" on a newspaper box) and the detector labels all six place types."""

from __future__ import annotations

import pytest

from flaneur.perception.detection import StorefrontDetector
from flaneur.perception.landmarks.ocr import OCRLandmarks
from flaneur.perception.ocr import OCR
from harness import street_photos
from harness.street_photos import PHOTOS

pytestmark = pytest.mark.skipif(
    not street_photos.available(),
    reason=f"the street photographs are missing: {street_photos.INSTALL_HINT}",
)


@pytest.fixture(scope="module")
def views():
    return street_photos.photo_views()


def test_ocr_reads_the_signs_of_real_street_photographs(views):
    figures = street_photos.ocr_recall(OCRLandmarks(OCR()), views)
    assert figures["signs"] == 13
    assert figures["recall"] >= 0.85, figures["missed"]
    # the large signs of every photograph, whatever the backend
    for must in ("NOTICE", "Sports Centre", "Car Parks", "NO PARKING", "GM 125"):
        photo = next(p for p in PHOTOS if must in p.signs)
        assert must not in figures["missed"].get(photo.file, []), figures["missed"]


def test_the_reader_keeps_where_a_sign_is(views):
    view = views[4]  # two barriers, each with a NO PARKING plate
    lines = [b for b in OCR().read(view) if "PARKING" in b.text.replace(" ", "")]
    assert len(lines) == 2
    left, right = sorted(lines, key=lambda b: b.centre[0])
    assert left.bbox[2] < right.bbox[0]  # two boards side by side, the left one further away
    assert (left.bbox[3] - left.bbox[1]) < (right.bbox[3] - right.bbox[1])


def test_the_storefront_detector_labels_the_places_the_signs_show(views):
    figures = street_photos.detection_recall(StorefrontDetector(ocr=OCR()), views)
    assert figures["places"] == 6
    assert figures["recall"] >= 5 / 6, figures
    distractors = {d for wrong in figures["false"].values() for d in wrong}
    assert not distractors & set(street_photos.DISTRACTORS), figures["false"]
