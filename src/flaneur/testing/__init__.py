"""What users need to test their own agents; flaneur's own tests and benchmarks use it too.

The fake OpenAI-compatible server and its policies (this module), a check that an agent
never reads the goal (:mod:`flaneur.testing.goal_blind`) and a hand-made straight street
(:mod:`flaneur.testing.street_scene`). flaneur's own oracle policies, hostile-input cases and
HTML checks are not part of the package; they live in the repository's ``tests/harness``.

:class:`FakeOpenAIServer` is a real OpenAI-compatible HTTP server on 127.0.0.1 with
scriptable replies and injectable faults::

    from flaneur.testing import FakeOpenAIServer

    with FakeOpenAIServer(lambda req: "LEFT") as server:
        model = make_model("fake-model", base_url=server.base_url)
        ...
        assert server.chat_count == 1
"""

from __future__ import annotations

from flaneur.testing.fake_openai import WRONG_ACTION_TEXT, FakeOpenAIServer, FaultPlan
from flaneur.testing.fake_policies import (
    FakeReply,
    FakeRequest,
    RandomActionPolicy,
    ScriptPolicy,
    constant_policy,
    echo_policy,
    policy_from_name,
)

__all__ = [
    "WRONG_ACTION_TEXT",
    "FakeOpenAIServer",
    "FakeReply",
    "FakeRequest",
    "FaultPlan",
    "RandomActionPolicy",
    "ScriptPolicy",
    "constant_policy",
    "echo_policy",
    "policy_from_name",
]
