"""The model layer: every flaneur agent thinks through a :class:`ChatModel`.

Build a model from a model string, call it, score literal actions, parse JSON::

    from flaneur.models import make_model, user, score_actions, extract_json

    model = make_model("vllm/Qwen2.5-VL-7B-Instruct", cache_mode="use")
    reply = await model.complete([user("Where next?", pil_image)], temperature=0)
    score, reply = await score_actions(model, messages)   # score.choice: "LEFT" or None
    data = extract_json(reply.text)                        # dict or None

See ``docs/models.md`` for model strings, environment variables and cache modes.
"""

from __future__ import annotations

from flaneur.models.base import BaseChatModel, ChatModel, prepare_params
from flaneur.models.cache import CACHE_MODES, ResponseCache, default_cache_path, request_key
from flaneur.models.completion import Completion, TokenLogprob, Usage
from flaneur.models.errors import (
    BudgetExceeded,
    LocalBackendMissing,
    ModelConfigError,
    ModelConnectionError,
    ModelContextOverflow,
    ModelError,
    ModelHTTPError,
    ModelResponseError,
    ModelTimeoutError,
)
from flaneur.models.jsonparse import extract_json
from flaneur.models.messages import ImagePart, Message, assistant, image, system, user
from flaneur.models.openai_compatible import OpenAICompatible
from flaneur.models.registry import (
    PROVIDERS,
    ModelConfig,
    ModelSpec,
    make_model,
    parse_model_string,
)
from flaneur.models.scoring import (
    NAV_ACTIONS,
    ActionScore,
    choose_literal,
    parse_literal,
    score_actions,
    score_logprobs,
)
from flaneur.models.sync import run_sync
from flaneur.models.usage import UsageCounters, UsageTracker, current_episode, load_price_table

__all__ = [
    "CACHE_MODES",
    "NAV_ACTIONS",
    "PROVIDERS",
    "ActionScore",
    "BaseChatModel",
    "BudgetExceeded",
    "ChatModel",
    "Completion",
    "ImagePart",
    "LocalBackendMissing",
    "Message",
    "ModelConfig",
    "ModelConfigError",
    "ModelConnectionError",
    "ModelContextOverflow",
    "ModelError",
    "ModelHTTPError",
    "ModelResponseError",
    "ModelSpec",
    "ModelTimeoutError",
    "OpenAICompatible",
    "ResponseCache",
    "TokenLogprob",
    "Usage",
    "UsageCounters",
    "UsageTracker",
    "assistant",
    "choose_literal",
    "current_episode",
    "default_cache_path",
    "extract_json",
    "image",
    "load_price_table",
    "make_model",
    "parse_literal",
    "parse_model_string",
    "prepare_params",
    "request_key",
    "run_sync",
    "score_actions",
    "score_logprobs",
    "system",
    "user",
]
