"""Run lists and tables are kept while a run folder's files are unchanged, and computed
again as soon as its log, summary or manifest changes; the state is always fresh."""

from __future__ import annotations

import json
import os
import shutil

from flaneur.evaluate.summary import MANIFEST
from flaneur.web import create_app
from flaneur.web.folder_cache import FolderCache, folder_stamp
from harness.web_client import local_client


def test_a_result_is_kept_until_a_file_of_the_folder_changes(tmp_path):
    (tmp_path / "episodes.jsonl").write_text('{"a": 1}\n')
    cache, calls = FolderCache(), []

    def compute() -> int:
        calls.append(1)
        return len(calls)

    assert cache.get("x", tmp_path, compute) == 1
    assert cache.get("x", tmp_path, compute) == 1 and cache.hits == 1
    with open(tmp_path / "episodes.jsonl", "a") as log:
        log.write('{"a": 2}\n')  # the size changes even within one mtime tick
    assert cache.get("x", tmp_path, compute) == 2
    (tmp_path / "summary.json").write_text("{}")
    assert cache.get("x", tmp_path, compute) == 3
    assert cache.get("y", tmp_path, compute) == 4  # another result of the same folder


def test_the_oldest_result_leaves_first(tmp_path):
    cache = FolderCache(size=2)
    folders = [tmp_path / name for name in "abc"]
    for k, folder in enumerate(folders):
        folder.mkdir()
        cache.get("x", folder, lambda k=k: k)
    assert cache.get("x", folders[0], lambda: "again") == "again"
    assert cache.get("x", folders[2], lambda: "again") == 2


def test_a_stamp_names_the_run_files_present(tmp_path):
    assert folder_stamp(tmp_path) == ()
    (tmp_path / "run.json").write_text("{}")
    (tmp_path / "other.txt").write_text("not a run file")
    assert [name for name, _, _ in folder_stamp(tmp_path)] == ["run.json"]


def test_the_runs_list_follows_a_growing_log_and_a_dying_process(served, tmp_path):
    run = tmp_path / "runs" / "run"
    shutil.copytree(served / "agents", run)
    app = create_app([run.parent])
    with local_client(app) as client:
        (first,) = client.get("/api/runs").json()
        assert client.get("/api/runs").json() == [first]
        log = run / "episodes.jsonl"
        rows = log.read_text().splitlines()
        log.write_text("\n".join([*rows, rows[0]]) + "\n")
        (grown,) = client.get("/api/runs").json()
        assert grown["rows"] == first["rows"] + 1
        tables = client.get(f"/api/runs/{first['key']}").json()
        assert tables["totals"]["rows"] == first["rows"] + 1
        episodes = client.get(f"/api/runs/{first['key']}/episodes").json()["episodes"]
        assert len(episodes) == first["rows"] + 1
        manifest = json.loads((run / MANIFEST).read_text())
        (run / "summary.json").unlink()
        os.utime(run / MANIFEST)
        (run / MANIFEST).write_text(json.dumps({**manifest, "pid": os.getpid()}))
        assert client.get("/api/runs").json()[0]["status"] == "running"
