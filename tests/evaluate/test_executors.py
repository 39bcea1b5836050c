"""The local executor (rows delivered as episodes finish, stop and interrupt), the Ctrl-C
handler, the environment pool and the summary of a resumed run."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from flaneur.env.toy import toy_city, toy_episodes
from flaneur.errors import FlaneurError
from flaneur.evaluate.envpool import EnvPool, env_pool
from flaneur.evaluate.executors import LocalExecutor, RunStop
from flaneur.evaluate.interrupt import InterruptHandler, RunInterrupted
from flaneur.evaluate.runlog import read_rows
from flaneur.evaluate.runner import RunConfig, run_benchmark


def spin(seconds: float) -> None:
    """Busy CPU work that never gives the event loop a turn (like a model-free agent)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_rows_are_delivered_while_cpu_bound_jobs_go_on():
    events: list[str] = []

    async def work(i):
        events.append(f"start {i}")
        spin(0.002)
        return {"i": i}

    def finish(batch):
        return batch

    LocalExecutor(4, batch_rows=1).run(
        range(6), work, finish, lambda row: events.append(f"row {row['i']}"), RunStop()
    )
    # each row is written before the next episode starts, whatever the concurrency
    assert events == [f"{kind} {i}" for i in range(6) for kind in ("start", "row")]


def test_batches_are_bounded_by_size_and_age():
    sizes: list[int] = []

    async def work(i):
        spin(0.03 if i >= 8 else 0.0)
        return i

    def finish(batch):
        sizes.append(len(batch))
        return [{"i": i} for i in batch]

    delivered: list[int] = []
    LocalExecutor(1, batch_rows=4, batch_s=0.05).run(
        range(14), work, finish, lambda row: delivered.append(row["i"]), RunStop()
    )
    assert delivered == list(range(14))
    # fast episodes fill batches; slow ones are written before their batch is full
    assert sizes[:2] == [4, 4] and max(sizes) <= 4 and min(sizes[2:]) < 4


def test_a_finished_row_is_written_while_the_next_episode_waits():
    delivered: list[float] = []

    async def work(i):
        if i == 1:
            await asyncio.sleep(1.0)  # a slow model call
        return i

    started = time.monotonic()
    LocalExecutor(1, batch_rows=32, batch_s=0.05).run(
        range(2),
        work,
        lambda b: [{"i": i} for i in b],
        lambda row: delivered.append(time.monotonic() - started),
        RunStop(),
    )
    assert delivered[0] < 0.9 <= delivered[1]


def test_a_stop_ends_scheduling_and_an_interrupt_cancels_jobs_in_flight():
    stop = RunStop()
    delivered: list[int] = []

    async def work(i):
        if i == 3:
            asyncio.get_running_loop().call_later(
                0.05, lambda: stop.request("Ctrl-C", interrupt=True)
            )
            await asyncio.sleep(30)  # a model call that the interrupt cancels
        return i

    started = time.monotonic()
    LocalExecutor(1, batch_rows=8).run(
        range(10), work, lambda b: [{"i": i} for i in b], lambda r: delivered.append(r["i"]), stop
    )
    assert time.monotonic() - started < 5
    assert delivered == [0, 1, 2]  # finished rows kept, the one in flight dropped
    assert stop.interrupted and stop.reason == "Ctrl-C"

    budget = RunStop()

    async def spend(i):
        if i == 2:
            budget.request("token budget")
            return None
        return i

    got: list[int] = []
    LocalExecutor(1).run(
        range(10), spend, lambda b: [{"i": i} for i in b], lambda r: got.append(r["i"]), budget
    )
    assert got == [0, 1] and not budget.interrupted


def test_second_ctrl_c_exits_at_once(tmp_path):
    stop, notes, exits = RunStop(), [], []
    handler = InterruptHandler(
        stop, note=notes.append, log_path=tmp_path / "episodes.jsonl", exit_now=exits.append
    )
    with handler:
        assert signal.getsignal(signal.SIGINT) == handler.handle
        handler.handle(signal.SIGINT, None)
        assert stop.interrupted and not exits and "Ctrl-C again" in notes[0]
        handler.handle(signal.SIGINT, None)
        assert exits == [130]
    assert signal.getsignal(signal.SIGINT) is not handler.handle  # restored


def test_a_real_sigint_interrupts_a_python_api_run(tmp_path):
    episodes = [replace(e, id=f"{e.id}-{k}") for k in range(400) for e in toy_episodes()]
    config = RunConfig(agents=("random", "forward"), tasks=("toy",))
    log = tmp_path / "run" / "episodes.jsonl"
    done = threading.Event()
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN when started in the background by sh

    def interrupt_once_rows_exist() -> None:
        # fire only while the run is under way (a finished run would pass the signal to pytest)
        while not done.is_set():
            if log.exists() and log.stat().st_size > 0:
                signal.raise_signal(signal.SIGINT)
                return
            time.sleep(0.01)

    watcher = threading.Thread(target=interrupt_once_rows_exist, daemon=True)
    watcher.start()
    try:
        with pytest.raises(RunInterrupted) as caught:
            run_benchmark(
                config, tmp_path / "run", progress="none", loaded={"toy": (toy_city(), episodes)}
            )
    finally:
        done.set()
        watcher.join()
    rows, _ = read_rows(tmp_path / "run" / "episodes.jsonl")
    assert caught.value.summary["partial"] and caught.value.summary["episodes"] == len(rows)
    assert 0 < len(rows) < 4000
    assert signal.getsignal(signal.SIGINT) is before


def test_env_pool_builds_once_and_resets_per_episode():
    city, episodes = toy_city(), toy_episodes()
    pool = env_pool(city, episodes, "turns")
    assert env_pool(city, episodes, "turns") is pool
    assert env_pool(city, episodes, "headings") is not pool
    pool.check()
    with pool.borrow() as env:
        env.reset(options={"episode": episodes[1]})
        with pool.borrow() as other:  # a second episode in flight gets its own environment
            assert other is not env
    assert pool.built == 2
    with pool.borrow() as again:
        assert again.reset(options={"episode": episodes[0]})[1]["episode_id"] == episodes[0].id
    assert pool.built == 2
    with pytest.raises(FlaneurError, match="scheme"):
        EnvPool(city, episodes, "zigzag").check()


def test_resumed_summary_keeps_every_agent_or_refuses(tmp_path: Path):
    loaded = {"toy": (toy_city(), toy_episodes())}
    out = tmp_path / "run"
    run_benchmark(
        RunConfig(agents=("random",), tasks=("toy",)), out, progress="none", loaded=loaded
    )
    # adding an agent to a run folder: the summary covers both
    summary = run_benchmark(
        RunConfig(agents=("random", "forward"), tasks=("toy",)),
        out,
        resume=True,
        progress="none",
        loaded=loaded,
    )
    assert [r["agent"] for r in summary["runs"]] == ["random", "forward"]
    assert summary["episodes"] == 10 and summary["partial"] is False
    # leaving one out would drop its rows from the summary but not from the reports
    with pytest.raises(FlaneurError, match=r"'forward' on 'toy'.*does not name"):
        run_benchmark(
            RunConfig(agents=("random",), tasks=("toy",)),
            out,
            resume=True,
            progress="none",
            loaded=loaded,
        )
    # a resume on a smaller selection still summarises every row of the folder
    summary = run_benchmark(
        RunConfig(agents=("random", "forward"), tasks=("toy",), limit=2),
        out,
        resume=True,
        progress="none",
        loaded=loaded,
    )
    assert summary["episodes"] == 10 and {r["episodes"] for r in summary["runs"]} == {5}


def test_a_failure_while_writing_a_batch_ends_the_run_with_it():
    async def work(i):
        if i == 1:
            await asyncio.sleep(0.3)  # the first row's batch is flushed by its timer meanwhile
        return i

    def finish(batch):
        raise RuntimeError("scoring broke")

    with pytest.raises(RuntimeError, match="scoring broke"):
        LocalExecutor(1, batch_s=0.05).run(range(3), work, finish, lambda row: None, RunStop())
