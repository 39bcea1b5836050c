"""The SQLite response cache: keys, modes, hits without HTTP, concurrent writers, CLI."""

from __future__ import annotations

import json
import multiprocessing
import threading

import pytest
from PIL import Image
from typer.testing import CliRunner

from flaneur.cli.models import cache_app
from flaneur.models import ModelConfigError, ResponseCache, request_key, user
from flaneur.models.cache import default_cache_path
from flaneur.models.messages import key_form, normalize_messages

IDENT = {"backend": "openai-compatible", "base_url": "http://h/v1", "model": "m"}


def _key(ident=IDENT, params=None, msgs=None):
    msgs = msgs or [user("hi")]
    return request_key(ident, params or {"temperature": 0}, key_form(normalize_messages(msgs)))


def test_key_covers_every_part():
    base = _key()
    assert base == _key()
    assert base != _key(ident={**IDENT, "model": "m2"})
    assert base != _key(ident={**IDENT, "base_url": "http://other/v1"})
    assert base != _key(params={"temperature": 0.5})
    assert base != _key(params={"temperature": 0, "seed": 1})
    assert base != _key(msgs=[user("hi!")])
    red, blue = Image.new("RGB", (4, 4), "red"), Image.new("RGB", (4, 4), "blue")
    assert _key(msgs=[user("x", red)]) != _key(msgs=[user("x", blue)])
    assert _key(msgs=[user("x", red)]) == _key(msgs=[user("x", Image.new("RGB", (4, 4), "red"))])


def test_default_path_follows_env(monkeypatch, tmp_path):
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_path() == tmp_path / "c" / "llm.sqlite"
    monkeypatch.delenv("FLANEUR_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert default_cache_path() == tmp_path / "x" / "flaneur" / "llm.sqlite"


def test_bad_mode():
    with pytest.raises(ModelConfigError, match="use, refresh, off"):
        ResponseCache(mode="sometimes")


async def test_second_identical_call_is_a_hit_with_no_http(fake, make, cache):
    fake.configure("random-action", seed=1)
    model = make(cache=cache)
    img = Image.new("RGB", (16, 16), "green")
    msgs = [user("where?", img)]
    first = await model.complete(msgs, temperature=0, top_logprobs=5)
    assert fake.chat_count == 1 and not first.cached
    fake.reset_counts()
    second = await model.complete(
        [user("where?", Image.new("RGB", (16, 16), "green"))], temperature=0, top_logprobs=5
    )
    assert fake.chat_count == 0  # the server's own counter: no HTTP request at all
    assert second.cached and second.attempts == 0
    assert second.text == first.text and second.logprobs == first.logprobs
    assert second.usage == first.usage
    assert model.usage.run.cached_calls == 1 and model.usage.run.calls == 1
    await model.complete(msgs, temperature=0.7, top_logprobs=5)  # other params: a miss
    assert fake.chat_count == 1


async def test_modes_refresh_and_off(fake, make, tmp_path):
    fake.configure(["first", "second", "third"])
    path = tmp_path / "m.sqlite"
    msgs = [user("q")]
    use = ResponseCache(path, "use")
    assert (await make(cache=use).complete(msgs)).text == "first"
    refresh = ResponseCache(path, "refresh")
    assert (await make(cache=refresh).complete(msgs)).text == "second"  # not read ...
    assert (await make(cache=use).complete(msgs)).text == "second"  # ... but written
    off_dir = tmp_path / "off"
    off = ResponseCache(off_dir / "x.sqlite", "off")
    assert (await make(cache=off).complete(msgs)).text == "third"
    assert not off_dir.exists()  # mode off never touches the disk
    assert fake.chat_count == 3
    for c in (use, refresh, off):
        c.close()


def test_concurrent_thread_writers(tmp_path):
    cache = ResponseCache(tmp_path / "t.sqlite")
    errors: list[BaseException] = []

    def writer(t: int) -> None:
        try:
            for i in range(50):
                cache.put(f"{t}-{i}", backend="b", model=f"m{t % 2}", response={"text": str(i)})
                assert cache.get(f"{t}-{i}") == {"text": str(i)}
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert cache.stats()["entries"] == 400
    cache.close()


def _process_writer(path: str, worker: int, n: int) -> None:
    cache = ResponseCache(path)
    for i in range(n):
        cache.put(f"p{worker}-{i}", backend="b", model="m", response={"text": f"{worker}:{i}"})
        cache.put("shared", backend="b", model="m", response={"text": f"{worker}:{i}"})
    cache.close()


def test_concurrent_process_writers(tmp_path):
    path = str(tmp_path / "p.sqlite")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_process_writer, args=(path, w, 60)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    cache = ResponseCache(path)
    assert cache.stats()["entries"] == 4 * 60 + 1
    assert cache.get("p3-59") == {"text": "3:59"}
    cache.close()


def test_cache_cli_stats_and_clear(tmp_path):
    path = tmp_path / "cli.sqlite"
    cache = ResponseCache(path)
    for i in range(3):
        cache.put(f"k{i}", backend="b", model="vllm/a" if i else "openai/b", response={"text": ""})
    cache.close()
    runner = CliRunner()
    out = runner.invoke(cache_app, ["stats", "--path", str(path), "--json"])
    assert out.exit_code == 0, out.output
    stats = json.loads(out.stdout)
    assert stats["entries"] == 3 and stats["models"] == {"vllm/a": 2, "openai/b": 1}
    out = runner.invoke(cache_app, ["clear", "--path", str(path), "--model", "vllm/a", "--json"])
    assert json.loads(out.stdout)["removed"] == 2
    out = runner.invoke(cache_app, ["clear", "--path", str(path), "--json"])
    assert json.loads(out.stdout)["removed"] == 1
    out = runner.invoke(cache_app, ["stats", "--path", str(path)])
    assert "0 replies" in " ".join(out.stdout.split())  # rich may wrap the line
    missing = runner.invoke(cache_app, ["stats", "--path", str(tmp_path / "none.sqlite"), "--json"])
    assert json.loads(missing.stdout)["exists"] is False
