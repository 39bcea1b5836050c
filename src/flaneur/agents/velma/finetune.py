"""Export gold-path verbalizations as a chat fine-tuning dataset (``flaneur export finetune``).

VELMA fine-tunes its model on the text of gold trajectories, with the loss on the action
words (and its response-based learning trains on the same sequences). The export walks
every episode with the ``turns`` teacher, verbalizes it exactly as :class:`VelmaAgent` does
(rule-based landmark extraction, map landmarks) and writes chat JSONL, the format read by
common trainers (TRL's ``SFTTrainer``, axolotl's ``chat_template`` datasets, OpenAI-style
fine-tuning):

``step`` (default)
    One record per decision: ``{"messages": [system, user, assistant]}``, where the user
    message is the very prompt the agent sends at that step (with ``k_shot`` examples) and
    the assistant message the gold action word. Training and inference see the same text.
``episode``
    One record per episode: a multi-turn chat whose first user message holds the task,
    instructions and first observations up to the first cue, whose assistant messages are
    the gold actions, and whose later user messages add the next numbered lines and cue.
    Train on all assistant turns (e.g. ``assistant_only_loss``).

With ``metadata=True`` each record also has ``"metadata": {"task", "episode_id", "step"}``
(some services reject unknown keys, so it is off by default).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flaneur.agents.prompts import load_prompt
from flaneur.agents.velma.examples import examples_text
from flaneur.agents.velma.verbalize import (
    MapLandmarkObserver,
    ObservationTracker,
    Trajectory,
    landmarks_text,
    word_of,
)
from flaneur.env.schemes.turns import TurnsScheme
from flaneur.env.teacher import TeacherError, gold_rollout
from flaneur.errors import FlaneurError
from flaneur.perception.extraction import rule_based_landmarks
from flaneur.tasks.episode import Episode
from flaneur.world.city import City

FORMATS = ("step", "episode")


@dataclass
class ExportStats:
    """What an export wrote."""

    records: int = 0
    episodes: int = 0
    steps: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "records": self.records,
            "episodes": self.episodes,
            "steps": self.steps,
            "skipped": len(self.skipped),
            "skipped_examples": self.skipped[:5],
        }


def gold_prompts(
    scheme: TurnsScheme,
    city: City,
    episode: Episode,
    *,
    pool: Sequence[Episode] = (),
    k_shot: int = 0,
    seed: int = 0,
    observer: MapLandmarkObserver | None = None,
) -> Iterator[tuple[str, str, str]]:
    """``(prompt, new lines, gold action word)`` at every step of the gold path.

    ``prompt`` is the user message :class:`VelmaAgent` (``extract="rules"``) sends at that
    step; ``new lines`` are the numbered lines added since the previous action, cue included.

    Raises
    ------
    TeacherError, UnknownNodeError
        If the teacher cannot walk the episode.
    """
    observer = observer or MapLandmarkObserver(city)
    prompt = load_prompt("velma", "navigate")
    examples, _ = examples_text(scheme, city, pool, episode, k_shot, seed=seed, observer=observer)

    landmarks = rule_based_landmarks(episode.instruction)
    actions, states = gold_rollout(scheme, city.graph, episode)
    tracker = ObservationTracker(city.graph.degree)
    trajectory = Trajectory()
    for action, state in zip(actions, states, strict=False):
        before = len(trajectory.lines)
        seen = observer.seen(state.node, state.heading, landmarks)
        trajectory.observe(tracker.text(state.node, landmarks_text(seen)))
        rendered = trajectory.render()
        text, _ = prompt.fill(
            examples=examples, instructions=episode.instruction, trajectory=rendered
        )
        new_lines = "\n".join(rendered.split("\n")[before:])
        word = word_of(action)
        yield text, new_lines, word
        trajectory.act(word)


def episode_records(
    scheme: TurnsScheme,
    city: City,
    episode: Episode,
    *,
    fmt: str = "step",
    task: str = "",
    pool: Sequence[Episode] = (),
    k_shot: int = 0,
    seed: int = 0,
    metadata: bool = False,
    observer: MapLandmarkObserver | None = None,
) -> list[dict[str, Any]]:
    """The chat records of one episode (see the module docstring for ``fmt``)."""
    if fmt not in FORMATS:
        raise FlaneurError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    system_text, _ = load_prompt("velma", "system").fill()
    steps = list(
        gold_prompts(scheme, city, episode, pool=pool, k_shot=k_shot, seed=seed, observer=observer)
    )
    records: list[dict[str, Any]] = []
    if fmt == "step":
        for i, (text, _, word) in enumerate(steps):
            record: dict[str, Any] = {
                "messages": [
                    {"role": "system", "content": system_text},
                    {"role": "user", "content": text},
                    {"role": "assistant", "content": word},
                ]
            }
            if metadata:
                record["metadata"] = {"task": task, "episode_id": episode.id, "step": i}
            records.append(record)
        return records
    messages = [{"role": "system", "content": system_text}]
    for i, (text, new_lines, word) in enumerate(steps):
        messages.append({"role": "user", "content": text if i == 0 else new_lines})
        messages.append({"role": "assistant", "content": word})
    record = {"messages": messages}
    if metadata:
        record["metadata"] = {"task": task, "episode_id": episode.id, "steps": len(steps)}
    return [record]


def export_finetune(
    tasks: Sequence[tuple[str, City, Sequence[Episode]]],
    out: str | Path,
    *,
    fmt: str = "step",
    k_shot: int = 0,
    seed: int = 0,
    limit: int | None = None,
    metadata: bool = False,
) -> ExportStats:
    """Write the chat JSONL of the gold paths of ``tasks`` to ``out``.

    Parameters
    ----------
    tasks
        ``[(task_id, city, episodes), ...]``.
    out
        Output file (parent folders are created).
    fmt
        ``"step"`` or ``"episode"``.
    k_shot
        In-context examples in each prompt (0 for a fine-tuned model, as in VELMA).
    seed
        Seed of the example choice.
    limit
        At most this many episodes per task set.
    metadata
        Add a ``metadata`` key to every record.
    """
    if fmt not in FORMATS:
        raise FlaneurError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    stats = ExportStats()
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for task, city, episodes in tasks:
            scheme = TurnsScheme(city.graph)
            observer = MapLandmarkObserver(city)
            chosen = list(episodes)[:limit] if limit is not None else list(episodes)
            for episode in chosen:
                try:
                    records = episode_records(
                        scheme,
                        city,
                        episode,
                        fmt=fmt,
                        task=task,
                        pool=episodes,
                        k_shot=k_shot,
                        seed=seed,
                        metadata=metadata,
                        observer=observer,
                    )
                except (TeacherError, FlaneurError) as err:
                    stats.skipped.append(
                        {"task": task, "episode_id": episode.id, "error": str(err)}
                    )
                    continue
                for record in records:
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                stats.records += len(records)
                stats.episodes += 1
                stats.steps += sum(
                    1 for r in records for m in r["messages"] if m["role"] == "assistant"
                )
    tmp.replace(path)
    return stats


__all__ = ["FORMATS", "ExportStats", "episode_records", "export_finetune", "gold_prompts"]
