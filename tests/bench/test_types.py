"""V-IRL type lists and their mapping onto the taxonomy."""

from __future__ import annotations

from pathlib import Path

import pytest

from flaneur.bench.types import (
    TYPES_20,
    TYPES_96,
    VIRL_TO_FLANEUR,
    TypeListError,
    load_type_list,
    place_virl_types,
)
from flaneur.world.taxonomy import CATEGORIES


def test_lists_and_mapping() -> None:
    assert len(TYPES_96) == 96 and len(TYPES_20) == 20 and set(TYPES_20) <= set(TYPES_96)
    assert all(VIRL_TO_FLANEUR[t] for t in TYPES_20)  # every one of the 20 has a counterpart
    assert all(c in CATEGORIES for cats in VIRL_TO_FLANEUR.values() for c in cats)
    assert VIRL_TO_FLANEUR["movie_theater"] == ("cinema",) and VIRL_TO_FLANEUR["store"] == ()


def test_place_types_follow_list_order_and_parents() -> None:
    assert place_virl_types(("fast_food", "restaurant"), TYPES_96) == (
        "meal_takeaway",
        "restaurant",
    )
    assert place_virl_types(("sauna",), TYPES_20) == ("spa",)
    assert place_virl_types(("bench",), TYPES_96) == ()


def test_load_type_list_forms(tmp_path: Path) -> None:
    assert load_type_list("20") == TYPES_20
    assert load_type_list("bank,cafe,bank") == ("bank", "cafe")
    f = tmp_path / "types.txt"
    f.write_text("# mine\nbank\nmovie theater\n\n", encoding="utf-8")
    assert load_type_list(str(f)) == ("bank", "movie_theater")


def test_unknown_types_named_in_one_line(tmp_path: Path) -> None:
    f = tmp_path / "types.txt"
    f.write_text("bank\ncoffee_shop\nspaceport\n", encoding="utf-8")
    with pytest.raises(TypeListError) as err:
        load_type_list(str(f))
    msg = str(err.value)
    assert "\n" not in msg and str(f) in msg and "'coffee_shop'" in msg and "'spaceport'" in msg
    with pytest.raises(TypeListError, match="no place types"):
        load_type_list([])
    with pytest.raises(TypeListError, match="cannot read"):
        load_type_list(str(tmp_path / "missing.txt"))
