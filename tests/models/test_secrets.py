"""The API key never shows up in logs, errors, reprs, results or cache files."""

from __future__ import annotations

import json
import logging
import pickle
import traceback

import pytest
from typer.testing import CliRunner

from flaneur.cli.models import cache_app
from flaneur.models import ModelError, ModelHTTPError, make_model, user
from flaneur.models.secrets import Secret
from flaneur.testing import FaultPlan


async def test_api_key_never_leaks(fake, tmp_path, monkeypatch, caplog, fake_key):
    FAKE_KEY = fake_key
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    fake.api_key = FAKE_KEY  # the server only answers requests that carry the key
    cache_path = tmp_path / "secret-test.sqlite"
    model = make_model(
        "vllm/fake-model",
        base_url=fake.base_url,
        cache_mode="use",
        cache_path=cache_path,
        backoff_base=0.01,
        max_retries=2,
        timeout=0.5,
    )
    texts: list[str] = []

    ok = await model.complete([user("hello")], top_logprobs=3)  # sent with the key, cached
    assert ok.text == "hello"
    texts += [json.dumps(ok.to_dict()), repr(ok), repr(model), str(vars(model))]

    errors: list[BaseException] = []
    for plan in ({0: "echo-auth"}, FaultPlan.first(3, "500"), FaultPlan.first(3, "timeout")):
        fake.configure("echo", faults=plan)
        fake.api_key = FAKE_KEY
        with pytest.raises(ModelError) as info:
            await model.complete([user("fails")])
        errors.append(info.value)
    echoed = errors[0]
    assert isinstance(echoed, ModelHTTPError) and echoed.status == 401
    assert "Incorrect API key provided: Bearer ***" in str(echoed)  # the server did echo it

    monkeypatch.setenv("FLANEUR_TEST_KEY", "wrong-key-0000")
    wrong = make_model("vllm/fake-model", base_url=fake.base_url, api_key_env="FLANEUR_TEST_KEY")
    with pytest.raises(ModelHTTPError, match="invalid API key"):
        await wrong.complete([user("x")])

    for err in errors:
        texts += [str(err), repr(err), "".join(traceback.format_exception(err))]
    texts.append(caplog.text)
    assert "retry" in caplog.text  # retries were logged ...
    texts.append(json.dumps(model.usage.summary()))
    model.cache.close()
    for suffix in ("", "-wal", "-shm"):
        p = cache_path.with_name(cache_path.name + suffix)
        if p.exists():
            texts.append(p.read_bytes().decode("latin-1"))
    stats = CliRunner().invoke(cache_app, ["stats", "--path", str(cache_path), "--json"])
    texts.append(stats.stdout)
    for text in texts:
        assert FAKE_KEY not in text
        assert FAKE_KEY[8:24] not in text  # not even a part of it
    await model.aclose()
    await wrong.aclose()


def test_secret_is_masked_and_unpicklable(fake_key):
    FAKE_KEY = fake_key
    s = Secret(FAKE_KEY, source="OPENAI_API_KEY")
    assert FAKE_KEY not in repr(s) and FAKE_KEY not in str(s) and FAKE_KEY not in f"{s}"
    assert s.redact(f"key={FAKE_KEY}!") == "key=***!"
    with pytest.raises(TypeError):
        pickle.dumps(s)
