"""The offline renderer on the toy city."""

from __future__ import annotations

import time

import numpy as np
import pytest

from flaneur.errors import UnknownNodeError
from flaneur.views.base import ViewError
from flaneur.views.cache import ViewCache
from flaneur.views.synthetic import SyntheticViews
from flaneur.views.synthetic.lettering import glyphs, render_text, wrap
from flaneur.views.synthetic.signs import SignParams


def test_scene_has_real_and_synthetic_walls(toy_views):
    kinds = set(toy_views.scene.walls.kind.tolist())
    assert {0, 1, 2} <= kinds
    assert len(toy_views.signs.unplaced) == 0
    assert set(toy_views.signs.text) == {n for n in toy_views.city.places.names if n}


def test_view_looks_like_a_street(toy_views):
    view = toy_views.view("n100_100", 90.0)  # along the east-west street, eastwards
    a = view.array().astype(int)
    assert view.image.size == (800, 460) and view.source == "synthetic"
    top, bottom = a[5, 400], a[450, 400]
    assert top[2] > top[0] + 40  # blue sky straight ahead above the street
    assert abs(bottom[0] - bottom[2]) < 15 and bottom.mean() < 120  # grey asphalt below
    left = a[120:300, 5:100].reshape(-1, 3).std(axis=0).mean()
    assert left > 5  # facades with windows at the sides, not empty space


def test_deterministic_across_providers(toy):
    a = SyntheticViews(toy).view("n080_100", 30.0, size=(320, 180))
    b = SyntheticViews(toy).view("n080_100", 30.0, size=(320, 180))
    assert a.digest() == b.digest()
    assert not a.cached


def test_signs_name_places_in_view(toy_views):
    view = toy_views.view("n100_060", 90.0)  # looks east at the Stockmann facade
    names = {s["name"] for s in view.metadata["signs"]}
    assert "Stockmann" in names
    box = next(s["box"] for s in view.metadata["signs"] if s["name"] == "Stockmann")
    assert 0 <= box[0] < box[2] <= 800 and box[3] - box[1] > 20


def test_pitch_and_fov_change_the_view(toy_views):
    flat = toy_views.view("n100_100", 0.0, size=(200, 120)).array()
    up = toy_views.view("n100_100", 0.0, pitch=30.0, size=(200, 120)).array()
    wide = toy_views.view("n100_100", 0.0, fov=120.0, size=(200, 120)).array()
    sky = lambda a: (a[..., 2].astype(int) - a[..., 0] > 30).mean()  # noqa: E731
    assert sky(up) > sky(flat)
    assert not np.array_equal(flat, wide)


def test_cache_hits(toy, tmp_path):
    provider = SyntheticViews(toy, cache=ViewCache(tmp_path))
    first = provider.view("n100_100", 45.0)
    t0 = time.perf_counter()
    second = provider.view("n100_100", 45.0)
    assert second.cached and not first.cached
    assert time.perf_counter() - t0 < 0.02
    disk = SyntheticViews(toy, cache=ViewCache(tmp_path)).view("n100_100", 45.0)
    assert disk.cached and disk.digest() == first.digest()
    assert disk.metadata == first.metadata


def test_bad_requests(toy_views):
    with pytest.raises(UnknownNodeError):
        toy_views.view("no-such-node", 0.0)
    with pytest.raises(ViewError, match="fov"):
        toy_views.view("n100_100", 0.0, fov=180.0)
    with pytest.raises(ViewError, match="fov"):
        toy_views.view("n100_100", 0.0, fov=0.0)


def test_render_speed(toy_views):
    rng = np.random.default_rng(0)
    nodes = rng.integers(0, toy_views.city.graph.n_nodes, 20)
    t0 = time.perf_counter()
    for n, h in zip(nodes, rng.uniform(0, 360, 20), strict=True):
        toy_views.render(int(n), float(h))
    assert (time.perf_counter() - t0) / 20 < 0.1


def test_lettering_handles_accents():
    assert glyphs("Kämp") == [("K", ()), ("a", ("\u0308",)), ("m", ()), ("p", ())]
    assert "".join(b for b, _ in glyphs("Straße—Øst")) == "Strasse-Ost"
    img = render_text("Café Ekberg", 40, (0, 0, 0), (255, 255, 255))
    assert img.mode == "RGBA" and img.width > img.height * 3
    assert wrap("Original Sokos Hotel Vaakuna") == "Original\nSokos Hotel\nVaakuna"


def test_line_of_sight_labels(toy):
    # from (-80, 0) looking east along the street, the shop fronts of Café Ekberg and
    # Ravintola Savoy face the street edge-on: both get a label turned to the camera
    with_labels = SyntheticViews(toy).view("n020_100", 90.0)
    kinds = {(s["name"], s["kind"]) for s in with_labels.metadata["signs"]}
    assert {("Café Ekberg", "label"), ("Ravintola Savoy", "label")} <= kinds
    plain = SyntheticViews(toy, labels=False).view("n020_100", 90.0)
    assert all(s["kind"] != "label" for s in plain.metadata["signs"])
    # a place hidden behind another building gets no label
    behind = SyntheticViews(toy).view("n100_100", 180.0)
    assert "Hotel Kämp" not in {s["name"] for s in behind.metadata["signs"]}


def test_fascia_boards_never_overlap(toy_views):
    signs = toy_views.signs
    fascia = [i for i in range(len(signs)) if signs.kind[i] == 0]
    for i in fascia:
        for j in fascia:
            if i >= j or not np.allclose(signs.direction[i], signs.direction[j]):
                continue
            same_row = abs(signs.bottom[i] - signs.bottom[j]) < 1e-6
            gap = float(np.hypot(*(signs.centre[i] - signs.centre[j])))
            d, off = signs.direction[i], signs.centre[j] - signs.centre[i]
            if same_row and abs(d[0] * off[1] - d[1] * off[0]) < 0.5:  # on one facade line
                assert gap >= (signs.width[i] + signs.width[j]) / 2


def test_nodes_without_position_are_skipped_and_refused(toy):
    """CitySeeker graphs can hold nodes without coordinates: the scene skips their streets,
    and a view from such a node is a clear error."""
    from flaneur.views.base import NoImageryError
    from flaneur.world import City, StreetGraph

    g = toy.graph
    n = g.n_nodes
    ids = [*g.ids.tolist(), "lost"]
    lat, lng = np.append(g.lat, np.nan), np.append(g.lng, np.nan)
    src = [*g.edge_sources.tolist(), 0, n]
    dst = [*g.targets.tolist(), n, 0]
    graph = StreetGraph.from_edges(
        ids,
        lat,
        lng,
        src,
        dst,
        headings=[*g.headings.tolist(), 0.0, 180.0],
        lengths=[*g.lengths.tolist(), 10.0, 10.0],
    )
    city = City(
        name="toy-lost",
        graph=graph,
        places=toy.places,
        buildings=toy.buildings,
        building_heights=toy.building_heights,
    )
    views = SyntheticViews(city, cache=False)
    assert views.view(0, 90.0).image.size == (800, 460)
    with pytest.raises(NoImageryError, match="'lost' has no known position"):
        views.view("lost", 0.0)


def test_scene_cache_on_disk_is_reused_and_survives_a_broken_file(toy, tmp_path, monkeypatch):
    from flaneur.views.synthetic import provider as provider_module

    first = SyntheticViews(toy, scene_cache=tmp_path).prepare()
    files = list(tmp_path.glob("*.pkl"))
    assert len(files) == 1 and files[0].name.startswith(f"{toy.name}-")
    node = "n080_100"
    expected = np.asarray(first.view(node, 90.0).image)

    def no_build(*args, **kwargs):
        raise AssertionError("the scene was rebuilt although it is cached")

    with monkeypatch.context() as patch:
        patch.setattr(provider_module.Scene, "build", no_build)
        again = SyntheticViews(toy, scene_cache=tmp_path)
        assert np.array_equal(np.asarray(again.view(node, 90.0).image), expected)

    files[0].write_bytes(b"not a pickle")  # a cut file is rebuilt and rewritten
    rebuilt = SyntheticViews(toy, scene_cache=tmp_path)
    assert np.array_equal(np.asarray(rebuilt.view(node, 90.0).image), expected)
    assert files[0].stat().st_size > 100
    other = SyntheticViews(toy, scene_cache=tmp_path, sign_params=SignParams(radius=30.0))
    other.prepare()
    assert len(list(tmp_path.glob("*.pkl"))) == 2  # other parameters, another file


def test_scene_cache_is_safe_for_threads_and_unwritable_folders(toy, tmp_path):
    import threading

    shared = SyntheticViews(toy, scene_cache=tmp_path / "scenes")
    errors: list[BaseException] = []

    def look() -> None:
        try:
            shared.view("n080_100", 90.0, size=(160, 90))
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=look) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert [p.suffix for p in (tmp_path / "scenes").iterdir()] == [".pkl"]  # no temp left
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    views = SyntheticViews(toy, scene_cache=blocked / "scenes")  # cannot be created
    assert views.view("n080_100", 90.0, size=(160, 90)).image.size == (160, 90)
