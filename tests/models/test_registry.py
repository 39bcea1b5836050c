"""Model strings, providers, API keys and ModelConfig."""

from __future__ import annotations

import pytest

from flaneur.models import (
    ModelConfig,
    ModelConfigError,
    OpenAICompatible,
    make_model,
    parse_model_string,
)


@pytest.mark.parametrize(
    ("string", "provider", "model", "base_url"),
    [
        ("openai/gpt-4o-mini", "openai", "gpt-4o-mini", "https://api.openai.com/v1"),
        (
            "vllm/Qwen2.5-VL-7B-Instruct",
            "vllm",
            "Qwen2.5-VL-7B-Instruct",
            "http://localhost:8000/v1",
        ),
        (
            "vllm/Qwen/Qwen2.5-VL-7B-Instruct",
            "vllm",
            "Qwen/Qwen2.5-VL-7B-Instruct",
            "http://localhost:8000/v1",
        ),
        ("sglang/qwen", "sglang", "qwen", "http://localhost:30000/v1"),
        ("ollama/llava", "ollama", "llava", "http://localhost:11434/v1"),
        ("llama-server/gemma", "llama-server", "gemma", "http://localhost:8080/v1"),
        ("llamacpp/models/x.gguf", "llamacpp", "models/x.gguf", None),
    ],
)
def test_parse_model_string(string, provider, model, base_url):
    spec = parse_model_string(string)
    assert (spec.provider, spec.model, spec.base_url) == (provider, model, base_url)


def test_base_url_overrides_and_custom_names():
    assert (
        parse_model_string("vllm/m", base_url="http://gpu:9000/v1").base_url == "http://gpu:9000/v1"
    )
    spec = parse_model_string("Qwen/Qwen2.5-VL-7B-Instruct", base_url="http://gpu:9000/v1")
    assert (spec.provider, spec.model) == ("custom", "Qwen/Qwen2.5-VL-7B-Instruct")


@pytest.mark.parametrize("bad", ["", "vllm/", "llamacpp/", "Qwen2.5-VL-7B-Instruct"])
def test_bad_model_strings(bad):
    with pytest.raises(ModelConfigError):
        parse_model_string(bad)


def test_unknown_prefix_explains_base_url():
    with pytest.raises(ModelConfigError, match="--llm-base-url"):
        parse_model_string("mistral-7b")


def test_openai_needs_a_key(monkeypatch):
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY is not set"):
        make_model("openai/gpt-4o-mini")
    with pytest.raises(ModelConfigError, match="MY_LLM_KEY"):
        make_model("openai/gpt-4o-mini", api_key_env="MY_LLM_KEY")
    monkeypatch.setenv("MY_LLM_KEY", "sk-x-123456")
    model = make_model("openai/gpt-4o-mini", api_key_env="MY_LLM_KEY")
    assert isinstance(model, OpenAICompatible) and model.name == "openai/gpt-4o-mini"
    assert "sk-x-123456" not in repr(model)


def test_local_servers_accept_empty_key(monkeypatch):
    model = make_model("ollama/llava")
    assert model._key.reveal() == "EMPTY" and model._key.is_placeholder
    monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")
    assert make_model("vllm/x")._key.reveal() == "EMPTY"


@pytest.mark.parametrize("url", ["localhost:8000", "ftp://x/v1", "http://user:pw@host/v1"])
def test_bad_base_urls(url):
    with pytest.raises(ModelConfigError):
        make_model("vllm/x", base_url=url)


def test_model_config_build(tmp_path):
    cfg = ModelConfig(
        "vllm/m",
        base_url="http://127.0.0.1:1/v1",
        cache_path=tmp_path / "c.sqlite",
        token_budget=1000,
        prices={"m": (1.0, 1.0)},
        max_in_flight=3,
        params={"temperature": 0},
    )
    model = cfg.build()
    assert model.cache.mode == "use" and model.cache.path == tmp_path / "c.sqlite"
    assert model.usage.token_budget == 1000 and model.max_in_flight == 3
    assert model.default_params == {"temperature": 0}


def test_make_model_default_cache_location(tmp_path):
    model = make_model("vllm/m", cache_mode="refresh")
    assert model.cache.path == tmp_path / "cache-dir" / "llm.sqlite"
    assert make_model("vllm/m").cache is None
