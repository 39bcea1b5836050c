"""Interactive maps work offline: Leaflet ships in the package, pages load nothing from the web."""

from __future__ import annotations

import hashlib
import re

import pytest

from flaneur.env.toy import toy_city
from flaneur.report import web_assets
from flaneur.report.city_map import save_city_map
from flaneur.report.episode_folium import save_episode_map
from flaneur.report.leaflet_map import offline_map, save_map
from harness.html_check import page_parts, web_references


def test_packaged_leaflet_matches_its_manifest_and_carries_its_licence():
    manifest = web_assets.manifest()
    assert manifest["package"] == f"leaflet@{web_assets.LEAFLET_VERSION}"
    assert manifest["integrity"] == web_assets.LEAFLET_INTEGRITY
    assert set(manifest["files"]) == set(web_assets.LEAFLET_FILES)
    for name, digest in manifest["files"].items():
        data = (web_assets.LEAFLET_DIR / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest, name
    licence = (web_assets.LEAFLET_DIR / "LICENSE").read_text()
    assert "BSD 2-Clause License" in licence and "Volodymyr Agafonkin" in licence


def test_inlined_leaflet_cannot_end_its_element_early():
    head = web_assets.inline_head()
    assert head.lower().count("</script") == 1 and head.lower().count("</style") == 1
    assert "url(images/" not in web_assets.leaflet_css()  # images are data: URIs
    assert web_assets.leaflet_css().count("url(data:image/png;base64,") == 3


def test_city_map_is_self_contained_and_has_no_tiles_by_default(tmp_path):
    page = save_city_map(toy_city(), tmp_path / "city.html").read_text(encoding="utf-8")
    parts = page_parts(page)
    assert parts.references == [] and web_references(page) == []
    assert web_assets.leaflet_js() in parts.scripts  # Leaflet inside the page
    assert "L.tileLayer" not in page and "openstreetmap.org" not in page
    assert "sourceMappingURL" not in page  # no source map is shipped, none is asked for
    assert "L.polyline" in page  # the streets of the graph are the background
    assert not re.search(r"jquery|bootstrap|awesome-markers|fontawesome", page, re.IGNORECASE)


def test_tiles_are_an_option_and_load_no_script(tmp_path):
    page = save_city_map(toy_city(), tmp_path / "city.html", tiles=True).read_text("utf-8")
    assert "L.tileLayer" in page and "tile.openstreetmap.org" in page
    assert "OpenStreetMap contributors" in page  # attribution of the tiles
    assert web_references(page) == []


def test_episode_maps_share_one_linked_copy_of_leaflet(tmp_path):
    city = toy_city()
    graph = city.graph
    path = graph.indices(["W1", "X4", "E1"]).tolist()
    pages = [
        save_episode_map(city, tmp_path / f"ep{k}.html", path, path[: k + 2], assets_dir=tmp_path)
        for k in range(2)
    ]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        refs = page_parts(text).references
        assert sorted(refs) == ["leaflet-1.9.4/leaflet.css", "leaflet-1.9.4/leaflet.js"]
        assert all((tmp_path / r).is_file() for r in refs) and web_references(text) == []
        assert len(text) < 50_000  # Leaflet is not repeated in every page
    assert (tmp_path / "leaflet-1.9.4" / "LICENSE").is_file()
    assert (tmp_path / "leaflet-1.9.4" / "leaflet.js").read_text() == web_assets.leaflet_js()


def test_linked_assets_must_sit_next_to_the_page(tmp_path):
    with pytest.raises(ValueError, match="folder of the page"):
        save_map(offline_map([60, 25]), tmp_path / "a" / "map.html", assets_dir=tmp_path)
