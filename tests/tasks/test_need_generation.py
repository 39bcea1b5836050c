"""Need-task generation on a hand-made straight street.

Nodes 0..40 run east along a street, 20 m apart. Two cafes stand 5 m north of nodes 10 and 30,
a wheelchair-accessible bank 5 m north of node 36. With a 50 m linking radius each place is
visible from the five nodes around it (|k - 10| * 20 m <= ~50 m), so the hops from node s to
the cafe at 10 are max(0, |s - 10| - 2).
"""

import numpy as np
import pytest

from flaneur.errors import FlaneurError
from flaneur.geo import destination
from flaneur.tasks.generate import GoalField, generate_need_tasks
from flaneur.tasks.needs import NeedTemplate, PlaceMatcher, load_templates
from flaneur.tasks.validate import check_need_tasks
from flaneur.world import City, Places, StreetGraph

N = 41


def street_city() -> City:
    lat, lng = destination(np.full(N, 60.0), np.full(N, 25.0), 90.0, np.arange(N) * 20.0)
    ids = [f"v{k}" for k in range(N)]
    src = list(range(N - 1)) + list(range(1, N))
    dst = list(range(1, N)) + list(range(N - 1))
    graph = StreetGraph.from_edges(ids, lat, lng, src, dst)

    def at(k, name, cats, **attrs):
        la, ln = destination(lat[k], lng[k], 0.0, 5.0)
        return {
            "id": name,
            "name": name,
            "lat": float(la),
            "lng": float(ln),
            "categories": cats,
            "attributes": attrs,
        }

    places = Places.from_records(
        [
            at(10, "Cafe A", ["cafe"]),
            at(30, "Cafe B", ["cafe"]),
            at(36, "Bank C", ["bank", "atm"], wheelchair="yes"),
        ]
    )
    return City(name="street", graph=graph, places=places)


CAFE = NeedTemplate(
    "basic_poi:cafe", "basic_poi", "Please find the nearest cafe.", (PlaceMatcher(("cafe",)),)
)


def test_goal_field_hops_and_uniqueness():
    city = street_city()
    field = GoalField.build(city, PlaceMatcher(("cafe",)), 50.0)
    assert field.linked[0].tolist() == [8, 9, 10, 11, 12]
    assert field.hops[0, 0] == 8 and field.hops[0, 20] == 8 and field.hops[1, 20] == 8
    best, best_hops, second = field.nearest()
    assert best_hops[0] == 8 and second[0] == 28 and best[0] == 0
    assert best_hops[20] == second[20] == 8  # a tie: node 20 cannot be a start


def test_generated_cafe_tasks_are_valid_and_unique_nearest():
    city = street_city()
    report = generate_need_tasks(city, seed=3, per_template=50, templates=[CAFE])
    starts = sorted(int(e.start_node[1:]) for e in report.episodes)
    # hops to the nearest cafe within [5, 25] and strictly nearer than the other cafe
    expected = [
        s
        for s in range(N)
        if 5 <= min(max(0, abs(s - 10) - 2), max(0, abs(s - 30) - 2)) <= 25
        and max(0, abs(s - 10) - 2) != max(0, abs(s - 30) - 2)
    ]
    assert starts == expected
    for episode in report.episodes:
        s = int(episode.start_node[1:])
        target = "Cafe A" if abs(s - 10) < abs(s - 30) else "Cafe B"
        assert episode.goal_place_ids == (target,)
        path = [int(v[1:]) for v in episode.reference_path]
        assert path[0] == s and len(path) - 1 == episode.metadata["hops"][0]
        assert abs(path[-1] - (10 if target == "Cafe A" else 30)) == 2  # the first linked viewpoint
    assert check_need_tasks(city, report.episodes).valid == len(report.episodes)


def test_generation_is_deterministic_by_seed():
    city = street_city()
    a = generate_need_tasks(city, seed=1, per_template=3, templates=[CAFE]).episodes
    b = generate_need_tasks(city, seed=1, per_template=3, templates=[CAFE]).episodes
    c = generate_need_tasks(city, seed=2, per_template=3, templates=[CAFE]).episodes
    assert [e.to_json() for e in a] == [e.to_json() for e in b]
    assert [e.start_node for e in a] != [e.start_node for e in c]


def test_attribute_and_multi_goal_templates():
    city = street_city()
    accessible = NeedTemplate(
        "inclusive:bank",
        "inclusive_infrastructure",
        "An accessible bank.",
        (PlaceMatcher(("bank",), attributes=(("wheelchair", ("yes",)),)),),
    )
    both = NeedTemplate(
        "multi_goal:cafe+bank",
        "multi_goal",
        "Cafe then bank.",
        (PlaceMatcher(("cafe",)), PlaceMatcher(("bank",))),
    )
    report = generate_need_tasks(city, seed=0, per_template=40, templates=[accessible, both])
    multi = [e for e in report.episodes if e.category == "multi_goal"]
    assert multi and all(e.metadata["ordered"] for e in multi)
    for e in multi:
        assert len(e.goal_nodes) == 2 and e.goal_place_ids[1] == "Bank C"
    assert check_need_tasks(city, report.episodes).valid == len(report.episodes)


def test_validator_catches_a_broken_task():
    city = street_city()
    episode = generate_need_tasks(city, seed=0, per_template=1, templates=[CAFE]).episodes[0]
    data = episode.to_json()
    data["reference_path"] = data["reference_path"][:-1]
    from flaneur.tasks.episode import Episode

    report = check_need_tasks(city, [Episode.from_json(data)])
    assert report.valid == 0
    assert any("does not end at the last goal" in p for p in report.problems[episode.id])


def test_too_few_places_is_a_clear_error():
    city = street_city()
    with pytest.raises(
        FlaneurError, match=r"too few places for task categor\(y/ies\) \['transit_hub'\]"
    ):
        generate_need_tasks(city, categories=("transit_hub",))
    with pytest.raises(FlaneurError, match="unknown task categor"):
        generate_need_tasks(city, categories=("nonsense",))


def test_packaged_table_covers_the_seven_categories_and_multi_goal():
    templates = load_templates()
    assert {t.category for t in templates} == {
        "basic_poi",
        "brand",
        "transit_hub",
        "latent_poi",
        "abstract_need",
        "inclusive_infrastructure",
        "semantic_preference",
        "multi_goal",
    }
    thirsty = next(t for t in templates if t.text == "I'm thirsty.")
    assert {"convenience_store", "cafe", "supermarket", "vending_machine", "drinking_water"} <= set(
        thirsty.goals[0].categories
    )
