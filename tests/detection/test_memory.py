"""De-duplication rules and the persistent visual memory, with hand-computed sightings."""

from __future__ import annotations

import json
import math

import pytest

from flaneur.errors import DataError
from flaneur.perception.detection import Sighting
from flaneur.perception.memory import VisualMemory


def seen(node, heading, label="waste_basket", size_px=50.0, focal=500.0, oid=None):
    return Sighting(
        node,
        label,
        0.8,
        heading,
        (heading - 1, heading + 1),
        (0, 0, 10, size_px),
        heading,
        0.0,
        60.0,
        size_px,
        focal,
        oid,
    )


def test_range_from_known_height():
    memory = VisualMemory()
    assert memory.range_m(seen("a", 0.0, size_px=45.0)) == pytest.approx(10.0)  # 0.9*500/45
    assert memory.range_m(seen("a", 0.0, label="cafe")) == 10.0  # no known size


def test_same_viewpoint_within_ten_degrees_is_one_object():
    memory = VisualMemory()
    a = memory.add(seen("a", 10.0), (0.0, 0.0))
    assert memory.add(seen("a", 18.0), (0.0, 0.0)) is a
    assert memory.add(seen("a", 29.0), (0.0, 0.0)) is not a  # 11 degrees from the nearest
    assert memory.add(seen("a", 12.0, label="bench", size_px=45.0), (0.0, 0.0)).category == "bench"
    assert memory.counts() == {"bench": 1, "waste_basket": 2}


def test_crossing_rays_from_two_viewpoints():
    # object at (0, 10): seen from (0, 0) heading 0 and from (10, 10) heading 270
    memory = VisualMemory()
    first = memory.add(seen("a", 0.0, size_px=45.0), (0.0, 0.0))
    assert memory.add(seen("b", 270.0, size_px=45.0), (10.0, 10.0)) is first
    assert first.position == pytest.approx((0.0, 10.0), abs=1e-6)
    # rays that cross 10 m from where the sizes put the objects: different objects
    other = memory.add(seen("c", 315.0, size_px=45.0 / 3), (20.0, 0.0))  # range 30 m
    assert other is not first
    # a trash bin 40 m away is never merged with one at the first spot
    far = memory.add(seen("d", 0.0, size_px=45.0), (0.0, 40.0))
    assert far is not first and len(memory) == 3


def test_nearly_parallel_rays_use_the_range_points():
    memory = VisualMemory()
    first = memory.add(seen("a", 0.0, size_px=45.0 / 2), (0.0, 0.0))  # 20 m ahead
    assert memory.add(seen("b", 0.0, size_px=45.0), (0.0, 10.0)) is first  # 10 m ahead of b


def test_retrieve_save_load_and_corrupt_file(tmp_path):
    memory = VisualMemory()
    memory.add(seen("a", 0.0, size_px=45.0, oid="o1"), (0.0, 0.0))
    memory.add(seen("a", 90.0, label="bench", size_px=45.0), (0.0, 0.0))
    memory.add(seen("z", 0.0, size_px=45.0), (500.0, 0.0))
    near = memory.near((0.0, 9.0), 5.0)
    assert [o.category for o in near] == ["waste_basket"]
    assert [o.category for o in memory.near((0.0, 0.0), 15.0, category="bench")] == ["bench"]
    assert memory.near((0.0, 0.0), 15.0, category="trash can")[0].nodes == ["a"]
    path = memory.save(tmp_path / "memory.json")
    back = VisualMemory.load(path)
    assert back.counts() == memory.counts()
    assert back.objects[0].sightings[0] == memory.objects[0].sightings[0]
    assert math.dist(back.objects[1].position, (10.0, 0.0)) < 1e-9
    path.write_text(path.read_text()[:40], "utf-8")
    with pytest.raises(DataError, match=r"memory\.json.*invalid JSON") as info:
        VisualMemory.load(path)
    assert "\n" not in str(info.value)
    path.write_text('{"format": "flaneur-visual-memory", "version": 1, "objects": [{"id": 0}]}')
    with pytest.raises(DataError, match="damaged visual memory"):
        VisualMemory.load(path)
    with pytest.raises(DataError, match="not found"):
        VisualMemory.load(tmp_path / "missing.json")


def test_memory_as_data_round_trips_and_refuses_other_data():
    memory = VisualMemory()
    memory.add(seen("a", 0.0, size_px=45.0), (0.0, 0.0))
    memory.add(seen("b", 90.0, size_px=45.0), (5.0, 5.0))
    data = json.loads(json.dumps(memory.to_dict()))  # as a row holds it
    again = VisualMemory.from_dict(data)
    assert again.to_dict() == memory.to_dict() and again.counts() == memory.counts()
    with pytest.raises(DataError, match="not a visual memory"):
        VisualMemory.from_dict({"format": "something else"})
