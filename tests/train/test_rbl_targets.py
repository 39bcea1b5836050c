"""RBL's targets (VELMA's Algorithm 1) pinned by hand on the toy city: a student that stops
off the goal gets the teacher's action from each state it stood in; one that stops within
a node of the goal keeps its own actions. Needs no torch: the student is a scripted model."""

from __future__ import annotations

import asyncio
from typing import Any

from flaneur.env import toy_city, toy_episodes
from flaneur.env.schemes.turns import TurnsScheme
from flaneur.models.base import BaseChatModel
from flaneur.models.completion import Completion
from flaneur.train.examples import corrected_examples, gold_examples, student_walk


class Scripted(BaseChatModel):
    """Replies with the next word of a script."""

    def __init__(self, words: list[str]) -> None:
        super().__init__("scripted")
        self.words = list(words)
        self.prompts: list[str] = []

    def identity(self) -> dict[str, Any]:
        return {"backend": "scripted"}

    async def _complete(self, messages: Any, params: dict[str, Any]) -> Completion:
        self.prompts.append(messages[-1].text)
        return Completion(text=self.words.pop(0))


def episode(name: str):
    return next(e for e in toy_episodes() if e.id == name)


def walk(name: str, words: list[str]):
    city = toy_city()
    model = Scripted(words)
    done = asyncio.run(student_walk(model, city, episode(name)))
    examples, own = corrected_examples(done, TurnsScheme(city.graph), city)
    return city, model, done, examples, own


def test_a_student_off_the_goal_gets_the_teachers_actions_from_where_it_stood():
    # toy-fork: X4 -> E1 -> T3, then right to Y3 and left to YL; the student goes straight
    # on at the T junction to E3 and stops there (two nodes from the goal)
    city, model, done, examples, own = walk("toy-fork", ["FORWARD", "FORWARD", "FORWARD", "STOP"])
    ids = city.graph.ids
    assert [str(ids[s.node]) for s in done.states] == ["X4", "E1", "T3", "E3"]
    assert done.words == ["FORWARD", "FORWARD", "FORWARD", "STOP"]
    assert not own
    # at T3 facing east the goal's shortest path turns right; at E3 it goes back west
    assert [e.target for e in examples] == ["FORWARD", "FORWARD", "RIGHT", "TURN_AROUND"]
    # the prompts are the student's own (they end with its trajectory, not the gold one)
    assert [e.user for e in examples] == done.prompts == model.prompts
    assert examples[-1].user.endswith("4. There is a 3-way intersection.\n5. FORWARD\n6.")


def test_a_student_stopping_next_to_the_goal_keeps_its_own_actions():
    # toy-east ends at D; stopping at E3 (a neighbour of D) completes the task (TC)
    _, _, done, examples, own = walk(
        "toy-east", ["FORWARD", "FORWARD", "FORWARD", "FORWARD", "STOP"]
    )
    assert own and done.stopped
    assert [e.target for e in examples] == ["FORWARD", "FORWARD", "FORWARD", "FORWARD", "STOP"]


def test_teacher_forcing_uses_the_exporters_prompts():
    city = toy_city()
    gold = gold_examples(TurnsScheme(city.graph), city, episode("toy-fork"))
    # (Y3 is reached facing south: the left branch YL lies to the walker's right)
    assert [e.target for e in gold] == [
        "FORWARD",
        "FORWARD",
        "RIGHT",
        "FORWARD",
        "RIGHT",
        "FORWARD",
        "STOP",
    ]
    model = Scripted([e.target for e in gold])
    done = asyncio.run(student_walk(model, city, episode("toy-fork")))
    assert done.prompts == [e.user for e in gold]  # training and inference see the same text
