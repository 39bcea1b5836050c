"""Bad calls of the public Python API (see :mod:`harness.runner`): each must raise a
:class:`~flaneur.errors.FlaneurError` subclass or ``ValueError`` naming the bad argument, not
an error from inside numpy, scipy or gymnasium."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ApiCase:
    """One bad call of the public Python API: ``call(objects)`` must raise ``expected``
    (a :class:`~flaneur.errors.FlaneurError` subclass or ``ValueError``) with a message
    containing ``names``."""

    id: str
    call: Callable[[dict[str, Any]], Any]
    names: str


def api_objects() -> dict[str, Any]:
    """The toy city, its graph and places, and a fresh environment over the toy episodes."""
    from flaneur.env.navigation_env import NavigationEnv
    from flaneur.env.toy import toy_city, toy_episodes

    city = toy_city()
    return {
        "city": city,
        "graph": city.graph,
        "places": city.places,
        "episodes": toy_episodes(),
        "env": NavigationEnv(city, toy_episodes(), scheme="turns"),
    }


def _failed_reset_then_step(o: dict[str, Any]) -> Any:
    env = o["env"]
    with contextlib.suppress(Exception):
        env.reset(options={"episode": "no-such-episode"})
    return env.step(0)


def _ok_reset_failed_reset_step(o: dict[str, Any]) -> Any:
    env = o["env"]
    env.reset(options={"episode": 0})
    with contextlib.suppress(Exception):
        env.reset(options={"episode": 99})
    return env.step(0)


def _env(**kw: Any) -> Callable[[dict[str, Any]], Any]:
    def make(o: dict[str, Any]) -> Any:
        from flaneur.env.navigation_env import NavigationEnv

        return NavigationEnv(o["city"], o["episodes"], **kw)

    return make


def _episode(**changes: Any) -> Callable[[dict[str, Any]], Any]:
    def reset(o: dict[str, Any]) -> Any:
        import dataclasses

        from flaneur.env.navigation_env import NavigationEnv

        bad = dataclasses.replace(o["episodes"][0], **changes)
        return NavigationEnv(o["city"], [bad]).reset()

    return reset


API_CASES: list[ApiCase] = [
    ApiCase("nearest-lat-nan", lambda o: o["graph"].nearest_node(float("nan"), 25.0), "lat"),
    ApiCase("nearest-lng-inf", lambda o: o["graph"].nearest_node(60.0, float("inf")), "lng"),
    ApiCase("nearest-lat-huge", lambda o: o["graph"].nearest_node(1e308, 25.0), "lat"),
    ApiCase("nearest-lat-100", lambda o: o["graph"].nearest_node(100.0, 25.0), "lat"),
    ApiCase("nearest-lng-text", lambda o: o["graph"].nearest_node(60.0, "east"), "lng"),
    ApiCase("nearest-none", lambda o: o["graph"].nearest_node(None, None), "lat"),
    ApiCase("nearest-shapes", lambda o: o["graph"].nearest_node([60.0, 60.1], [25.0]), "shape"),
    ApiCase("nearest-empty", lambda o: o["graph"].nearest_node([], []), "lat"),
    ApiCase("hops-negative", lambda o: o["graph"].hop_distances_to(-1), "goals"),
    ApiCase("hops-too-big", lambda o: o["graph"].hop_distances_to(10**6), "goals"),
    ApiCase("hops-overflow", lambda o: o["graph"].hop_distances_to(2**70), "goals"),
    ApiCase("hops-node-id", lambda o: o["graph"].hop_distances_to("X4"), "graph.index"),
    ApiCase("hops-fraction", lambda o: o["graph"].hop_distances_to(1.5), "goals"),
    ApiCase("hops-nan", lambda o: o["graph"].hop_distances_to([float("nan")]), "goals"),
    ApiCase("hops-none", lambda o: o["graph"].hop_distances_to(None), "goals"),
    ApiCase("hops-nested", lambda o: o["graph"].hop_distances_to([[1, 2], [3, 4]]), "goals"),
    ApiCase("in-view-heading-nan", lambda o: o["places"].in_view((0, 0), float("nan")), "heading"),
    ApiCase("in-view-heading-text", lambda o: o["places"].in_view((0, 0), "north"), "heading"),
    ApiCase("in-view-xy-short", lambda o: o["places"].in_view((0,), 0.0), "xy"),
    ApiCase("in-view-xy-text", lambda o: o["places"].in_view("ab", 0.0), "xy"),
    ApiCase("in-view-xy-inf", lambda o: o["places"].in_view((float("inf"), 0), 0.0), "xy"),
    ApiCase("in-view-fov-negative", lambda o: o["places"].in_view((0, 0), 0.0, fov=-5), "fov"),
    ApiCase("in-view-fov-zero", lambda o: o["places"].in_view((0, 0), 0.0, fov=0), "fov"),
    ApiCase("in-view-fov-huge", lambda o: o["places"].in_view((0, 0), 0.0, fov=720), "fov"),
    ApiCase(
        "in-view-radius-negative",
        lambda o: o["places"].in_view((0, 0), 0.0, radius_m=-5),
        "radius_m",
    ),
    ApiCase(
        "in-view-radius-nan",
        lambda o: o["places"].in_view((0, 0), 0.0, radius_m=float("nan")),
        "radius_m",
    ),
    ApiCase("step-before-reset", lambda o: o["env"].step(0), "reset()"),
    ApiCase("step-after-failed-reset", _failed_reset_then_step, "reset()"),
    ApiCase("step-after-second-reset-failed", _ok_reset_failed_reset_step, "reset()"),
    ApiCase("reset-unknown-id", lambda o: o["env"].reset(options={"episode": "nope"}), "nope"),
    ApiCase("reset-index-out-of-range", lambda o: o["env"].reset(options={"episode": 99}), "99"),
    ApiCase("reset-index-fraction", lambda o: o["env"].reset(options={"episode": 1.5}), "episode"),
    ApiCase("reset-options-text", lambda o: o["env"].reset(options="episode 1"), "options"),
    ApiCase("reset-seed-negative", lambda o: o["env"].reset(seed=-1), "seed"),
    ApiCase("reset-seed-text", lambda o: o["env"].reset(seed="one"), "seed"),
    ApiCase("reset-heading-nan", _episode(start_heading=float("nan")), "start_heading"),
    ApiCase("reset-max-steps-zero", _episode(max_steps=0), "max_steps"),
    ApiCase("reset-unknown-start", _episode(start_node="nowhere"), "nowhere"),
    ApiCase("env-max-steps-zero", _env(max_steps=0), "max_steps"),
    ApiCase("env-max-steps-negative", _env(max_steps=-5), "max_steps"),
    ApiCase("env-unknown-scheme", _env(scheme="teleport"), "teleport"),
    ApiCase("env-invalid-action-policy", _env(invalid_action="explode"), "invalid_action"),
    ApiCase("env-episode-order", _env(episode_order="shuffled"), "episode_order"),
    ApiCase("env-render-mode", _env(render_mode="human"), "render_mode"),
    ApiCase("graph-index-unknown", lambda o: o["graph"].index("Z9"), "Z9"),
]
"""The Python API cases (see :class:`ApiCase`)."""


def run_api_case(case: ApiCase) -> list[str]:
    """What breaks the promise when ``case`` runs (empty when it raised a clear error)."""
    from flaneur.errors import FlaneurError

    try:
        case.call(api_objects())
    except (FlaneurError, ValueError) as err:
        if case.names.lower() not in str(err).lower():
            return [f"{type(err).__name__} does not name {case.names!r}: {err}"]
        if type(err).__module__.startswith(("numpy", "gymnasium", "scipy", "pyproj")):
            return [f"raised from inside a library: {type(err).__module__}.{type(err).__name__}"]
        return []
    except Exception as err:
        return [f"leaked {type(err).__name__}: {err}"]
    return ["no error raised"]
