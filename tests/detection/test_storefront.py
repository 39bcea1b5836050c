"""The OCR storefront detector on a toy-city view with a café sign."""

from __future__ import annotations

from flaneur.perception.detection import StorefrontDetector
from flaneur.perception.detection.storefront import label_texts
from flaneur.views.synthetic import SyntheticViews
from flaneur.views.toy import grid_city


def test_label_texts_use_taxonomy_synonyms():
    texts = label_texts("trash can")
    assert texts[0] == "trash can" and "trash bin" in texts and "litter bin" in texts
    assert label_texts("flux capacitor") == ["flux capacitor"]


def test_cafe_sign_is_labelled_cafe_inside_its_sign_box():
    views = SyntheticViews(grid_city())
    view = views.view("n060_100", 30.0, fov=90.0, size=(640, 480))
    fascia = next(s for s in view.metadata["signs"] if s["kind"] == "fascia")
    det = StorefrontDetector()
    found = det.detect(view, ["cafe", "pharmacy", "hotel"])
    assert [d.label for d in found] == ["cafe"]
    x0, y0, x1, y1 = found[0].box
    fx0, fy0, fx1, fy1 = fascia["box"]
    assert fx0 - 3 <= x0 < x1 <= fx1 + 3 and fy0 - 3 <= y0 < y1 <= fy1 + 3
    assert found[0].score >= 0.35
    assert det.detect(view, ["pharmacy"]) == []  # "Café Ekberg" says nothing of a pharmacy
