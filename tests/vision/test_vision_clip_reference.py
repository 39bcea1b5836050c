"""``flaneur perception clip-reference``: VELMA's CLIP threshold set for any city and imagery,
through the installed console script with the tiny open_clip CLIP of ``conftest.py``.

The command draws views of the built-in Helsinki (synthetic views) and of a panorama folder
the test paints (a dozen of Helsinki's viewpoints: the rest have no imagery and are skipped),
embeds them and stores them in the city pack; a VELMA run with ``--landmarks clip`` on one
episode of ``helsinki-virl-vln-v1`` then standardises on the stored set (its first record
names it), and a run with no set stored for its weights stops with one line naming the
command. In process: Ling standardises on a stored set when one exists, else on views she
makes herself and says so once.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

EXTRA = "pip install -e '.[vision]' && pip install --no-deps open_clip_torch==3.3.0"
if importlib.util.find_spec("open_clip") is None:
    pytest.skip(f"open_clip is not installed (the vision extra: {EXTRA})", allow_module_level=True)
pytest.importorskip("torch", reason=f"torch is not installed (the vision extra: {EXTRA})")

from flaneur.agents.virl import sight  # noqa: E402
from flaneur.env.toy import toy_city  # noqa: E402
from flaneur.perception.landmarks.clip import OpenCLIPBackend  # noqa: E402
from flaneur.perception.landmarks.reference import (  # noqa: E402
    ReferenceSet,
    build_reference,
    find_reference,
    writable_folder,
)
from flaneur.testing import FakeOpenAIServer  # noqa: E402
from flaneur.views import SyntheticViews  # noqa: E402

FLANEUR = Path(sys.executable).with_name("flaneur")
pytestmark = pytest.mark.skipif(not FLANEUR.is_file(), reason="console script not installed")
TASK = "helsinki-virl-vln-v1"


@pytest.fixture(scope="module")
def world(tmp_path_factory, tiny_clip) -> dict[str, Any]:
    """A private cache, the tiny CLIP, a fake model server answering STOP and the start
    viewpoint of the task set's first episode (read in process from the same cache)."""
    root = tmp_path_factory.mktemp("clip-reference")
    cache = root / "cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FLANEUR_CACHE_DIR", str(cache))
        # lazy: the task registry builds Helsinki (seconds), only for this module
        from flaneur.tasks.registry import load_task

        city, episodes = load_task(TASK)
    with FakeOpenAIServer("constant:STOP") as server:
        yield {
            "root": root,
            "cache": cache,
            "clip": str(tiny_clip.folder),
            "server": server.base_url,
            "city": city,
            "start": str(episodes[0].start_node),
        }


def flaneur(world: dict[str, Any], *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "FLANEUR_CACHE_DIR": str(world["cache"]), "NO_COLOR": "1"}
    env.pop("FLANEUR_DOWNLOAD_WEIGHTS", None)
    return subprocess.run(
        [str(FLANEUR), *args], env=env, capture_output=True, text=True, timeout=300
    )


def build(world: dict[str, Any], views: str, *more: str) -> dict[str, Any]:
    """Run the command with ``--json`` and return its object (the command must succeed)."""
    args = ["perception", "clip-reference", "helsinki", "--views", views]
    done = flaneur(world, *args, "--clip-weights", world["clip"], "--size", "8", *more, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def velma(
    world: dict[str, Any], views: str, weights: str, out: Path
) -> subprocess.CompletedProcess:
    return flaneur(
        world,
        *("run", "--agent", "velma", "--tasks", TASK, "--scheme", "turns", "--limit", "1"),
        *("--llm", "fake-model", "--llm-base-url", world["server"], "--cache", "off"),
        *("--views", views, "--landmarks", "clip", "--option", "velma.extract=rules"),
        *("--option", f"velma.clip_weights={weights}", "--progress", "none"),
        *("--out", str(out), "--json"),
    )


def first_record(out: Path) -> dict[str, Any]:
    rows = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["termination"] == "stopped", rows
    return rows[0]["records"][0]


def panoramas(folder: Path, node_ids: list[str]) -> Path:
    """One 128 x 64 equirectangular panorama per node, each of its own seeded noise."""
    folder.mkdir()
    for k, node in enumerate(node_ids):
        pixels = np.random.default_rng(k).integers(0, 256, (64, 128, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(folder / f"{node}.png")
    return folder


def test_clip_reference_on_helsinki_synthetic_views_then_velma_uses_it(world, tmp_path):
    info = build(world, "synthetic")
    path = Path(info["path"])
    assert info["stored_in"] == "pack" and info["city"] == "helsinki" and info["size"] == 8
    assert path.parent.name == "clip_reference"
    assert path.parent.parent.parent == world["cache"] / "cities"  # the built-in pack
    assert info["dim"] == 16 and info["skipped"] == 0 and info["views_per_second"] > 0
    stored = ReferenceSet.load(path)
    meta = stored.meta
    assert meta["views"] == {"spec": "synthetic", "identity": meta["views"]["identity"]}
    assert meta["fov"] == 60.0 and meta["image_size"] == [800, 460]
    assert meta["standardise"]["tau"] == 3.5 and meta["city"]["name"] == "helsinki"
    assert stored.embeddings.shape == (8, 16) and len(set(stored.nodes)) == 8
    assert np.allclose(np.linalg.norm(stored.embeddings, axis=1), 1.0, atol=1e-5)
    # the stored rows are the embeddings of the recorded views
    views = SyntheticViews(world["city"])
    again = [
        views.view(str(n), float(h), fov=60.0)
        for n, h in zip(stored.nodes[:2], stored.headings[:2], strict=True)
    ]
    expected = OpenCLIPBackend(world["clip"]).embed_images([v.image for v in again])
    assert np.allclose(stored.embeddings[:2], expected, atol=1e-5)

    done = velma(world, "synthetic", world["clip"], tmp_path / "run")
    assert done.returncode == 0, done.stderr
    record = first_record(tmp_path / "run")
    assert record["landmark_source"] == "clip" and record["clip_reference"] == info["name"]


def test_clip_reference_on_a_panorama_folder_then_velma_uses_it(world, tmp_path):
    ids = [str(i) for i in world["city"].graph.ids[world["city"].graph.located][:11]]
    painted = [world["start"], *(i for i in ids if i != world["start"])]
    folder = panoramas(tmp_path / "panos", painted)
    spec = f"panorama:{folder}"
    info = build(world, spec, "--seed", "3")
    assert info["views"] == f"panorama:{folder.resolve()}" and info["stored_in"] == "pack"
    assert info["skipped"] > 0  # the viewpoints without a panorama
    stored = ReferenceSet.load(Path(info["path"]))
    assert set(stored.nodes) <= set(painted) and stored.meta["seed"] == 3
    assert Path(info["path"]).parent.parent.parent == world["cache"] / "cities"

    done = velma(world, spec, world["clip"], tmp_path / "run")
    assert done.returncode == 0, done.stderr
    record = first_record(tmp_path / "run")
    assert record["clip_reference"] == info["name"] and info["name"].startswith("panorama-panos")


def test_velma_without_a_stored_set_says_which_command_builds_it(world, tmp_path, tiny_clip):
    weights = str(tiny_clip.folder / "open_clip_model.safetensors")  # no set for these
    done = velma(world, "synthetic", weights, tmp_path / "run")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    command = (
        f"flaneur perception clip-reference helsinki --views synthetic --clip-weights {weights}"
    )
    assert (
        lines[0].startswith("error: velma --landmarks clip: no CLIP reference set")
        and command in lines[0]
    )
    helped = flaneur(world, "perception", "clip-reference", "--help")
    assert helped.returncode == 0 and "VELMA" in helped.stdout and "--clip-weights" in helped.stdout


def test_ling_standardises_on_the_stored_set_else_says_once_and_makes_one(
    tiny_clip, monkeypatch, tmp_path, caplog
):
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sight, "_CLIP", {})
    city = toy_city()  # made in memory: no pack, so the set goes to the cache
    views = SyntheticViews(city)
    weights = str(tiny_clip.folder)
    backend = OpenCLIPBackend(weights)
    made = build_reference(
        city, views, backend, model="ViT-B-32", weights=weights, size=6, fov=90.0
    )
    again = build_reference(
        city, views, backend, model="ViT-B-32", weights=weights, size=6, fov=90.0
    )
    assert list(made.nodes) == list(again.nodes) and np.allclose(made.embeddings, again.embeddings)
    folder, where = writable_folder(city, made.meta["city"]["fingerprint"])
    assert where == "cache" and str(folder).startswith(str(tmp_path / "cache"))
    made.save(folder)
    assert find_reference(city, views, "ViT-B-32", weights, fov=90.0).name == made.name
    scorer = sight.clip_scorer(city, views, "ViT-B-32", weights)
    assert scorer.reference == made.name

    with caplog.at_level(logging.WARNING, logger="flaneur.agents.virl"):
        other = weights + "/open_clip_model.safetensors"  # nothing stored for these weights
        monkeypatch.setattr(sight, "clip_backend", lambda model, weights: backend)
        first = sight.clip_scorer(city, views, "ViT-B-32", other, reference=4)
        monkeypatch.setattr(sight, "_CLIP", {})
        sight.clip_scorer(city, views, "ViT-B-32", other, reference=4)
    assert first.reference is None and first.stats("Cafe Aalto")[1] > 0
    said = [r.getMessage() for r in caplog.records if "clip-reference" in r.getMessage()]
    assert len(said) == 1 and "4 random views made in this process" in said[0]
