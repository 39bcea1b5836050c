"""Six real street photographs with known signs, for the OCR and the storefront detector on
real imagery (``tests/perception/test_street_photos.py``, ``benchmarks/views.py``).

The photographs are OpenCV's scene-text examples (``scenetext01.jpg`` ... ``06.jpg``, from
opencv_contrib's text module), which Debian ships in its ``opencv-doc`` package under
``/usr/share/doc/opencv-doc/examples/text``. Their licence is OpenCV's: Debian's copyright
file for the package covers them by its ``Files: *`` section (Apache-2.0 and BSD-3-Clause),
and the package is in Debian main (Debian removed the images it judged not free, such as
Lena, and kept these). Upstream does not name the photographer. Nothing of them is copied
into this repository: the tests read the installed files. ``.ci/run`` installs the package (``apt-get install
--no-install-recommends opencv-doc``); ``$FLANEUR_STREET_PHOTOS`` points elsewhere (a folder
holding the six files). Without them the tests skip and the benchmark says so.

The labels were read by eye from the photographs: the sign texts (:data:`PHOTOS`, what
OCR must read) and the place types a passer-by would take from them (what the storefront
detector must label). The photographs are of UK, US and Indian streets (a parking notice,
a campus direction sign, a copy shop, a generator's model plate, two barriers, a gallery's
shop front and hanging sign), 640x480 to 1280x960 pixels.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from flaneur.views.base import View

DEFAULT_DIR = Path("/usr/share/doc/opencv-doc/examples/text")
INSTALL_HINT = "apt-get install --no-install-recommends opencv-doc (or set FLANEUR_STREET_PHOTOS)"


@dataclass(frozen=True)
class Photo:
    """One photograph: its file, the sign texts in it and the place types they show."""

    file: str
    signs: tuple[str, ...]
    places: tuple[str, ...]


PHOTOS = (
    Photo(
        "scenetext01.jpg",
        ("NOTICE", "DOUBLE PARKING", "PROHIBITED", "AT ALL TIMES", "The Washington Post"),
        ("parking",),
    ),
    Photo(
        "scenetext02.jpg",
        ("Sports Centre", "Wivenhoe Park", "Conference Centre", "Car Parks"),
        ("sports_center", "parking"),
    ),
    Photo("scenetext03.jpg", ("the copy centre",), ("copy_shop",)),
    Photo("scenetext04.jpg", ("GM 125",), ()),
    Photo("scenetext05.jpg", ("NO PARKING",), ("parking",)),
    Photo("scenetext06.jpg", ("Priory Galleries at the Ship",), ("art_gallery",)),
)
"""The photographs and their labels (see the module's docstring)."""
DISTRACTORS = ("cafe", "pharmacy", "bank", "restaurant")
"""Place types in none of the photographs, asked for beside the right ones."""


def photo_dir() -> Path:
    """``$FLANEUR_STREET_PHOTOS``, else Debian's ``opencv-doc`` examples folder."""
    raw = os.environ.get("FLANEUR_STREET_PHOTOS", "").strip()
    return Path(raw).expanduser() if raw else DEFAULT_DIR


def available() -> bool:
    """Whether all six photographs are there."""
    folder = photo_dir()
    return all((folder / photo.file).is_file() for photo in PHOTOS)


def photo_views() -> list[View]:
    """The photographs as views (node: the file's stem; heading 0, 60-degree field)."""
    folder = photo_dir()
    views = []
    for photo in PHOTOS:
        with Image.open(folder / photo.file) as image:
            rgb = image.convert("RGB")
        views.append(View(rgb, node=Path(photo.file).stem, heading=0.0, source="photo"))
    return views


def ocr_recall(scorer: Any, views: list[View]) -> dict[str, Any]:
    """Recall of the sign texts by an :class:`~flaneur.perception.landmarks.ocr.OCRLandmarks`
    (the synthetic benchmark's test: fuzzy ratio >= 0.8, lines side by side or stacked
    joined), with the signs missed per photograph."""
    found, missed = 0, {}
    for photo, view in zip(PHOTOS, views, strict=True):
        seen = {o.landmark for o in scorer.visible(view, list(photo.signs))}
        found += len(seen)
        lost = [s for s in photo.signs if s not in seen]
        if lost:
            missed[photo.file] = lost
    total = sum(len(photo.signs) for photo in PHOTOS)
    return {"recall": round(found / total, 4), "signs": total, "missed": missed}


def detection_recall(detector: Any, views: list[View]) -> dict[str, Any]:
    """Recall of the photographs' place types by a detector asked for all of them and the
    :data:`DISTRACTORS`; ``false`` lists the types it reported where they are not."""
    labels = sorted({p for photo in PHOTOS for p in photo.places} | set(DISTRACTORS))
    found, false = 0, {}
    for photo, dets in zip(PHOTOS, detector.detect_batch(views, labels), strict=True):
        said = {d.label for d in dets}
        found += len(said & set(photo.places))
        wrong = sorted(said - set(photo.places))
        if wrong:
            false[photo.file] = wrong
    total = sum(len(photo.places) for photo in PHOTOS)
    return {"recall": round(found / total, 4), "places": total, "false": false}
