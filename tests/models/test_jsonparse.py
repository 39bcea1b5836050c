"""Lenient JSON extraction from model replies."""

from __future__ import annotations

import pytest

from flaneur.models import extract_json


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"action": "LEFT"}', {"action": "LEFT"}),
        (
            'Sure!\n```json\n{"action": "LEFT", "why": "shop"}\n```\nDone.',
            {"action": "LEFT", "why": "shop"},
        ),
        ('```\n{"a": 1}\n```', {"a": 1}),
        (
            'My answer is {"a": [1, 2, ], "b": {"c": 3,},} as requested',
            {"a": [1, 2], "b": {"c": 3}},
        ),
        ("{'action': 'STOP', 'done': True}", {"action": "STOP", "done": True}),
        ('{"ok": True, "x": None}', {"ok": True, "x": None}),
        ('I don\'t know, maybe {"a": "it\'s }"} works', {"a": "it's }"}),
        ('{\n  // the next step\n  "a": 1\n}', {"a": 1}),
        ('first {broken: } then {"good": 2}', {"good": 2}),
        ("no json here", None),
        ("", None),
        ('{"unterminated": ', None),
    ],
)
def test_extract_json(text, expected):
    assert extract_json(text) == expected


def test_extract_json_lists():
    assert extract_json("steps: [1, 2, 3]", want=list) == [1, 2, 3]
    assert extract_json("steps: [1, 2, 3]") is None
    assert extract_json('[{"a": 1}]', want=object) == [{"a": 1}]
