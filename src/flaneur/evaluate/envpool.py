"""Environments built once per process and reset for every episode.

Building a :class:`~flaneur.env.navigation_env.NavigationEnv` builds its action scheme over
the whole street graph (the ``turns`` scheme's transition table has a slot for every state
of the city: tens of milliseconds on Manhattan) and its observation space. The runner used
to pay that for every episode; an :class:`EnvPool` pays it once per environment that is in
use at the same time (one for agents that never wait, up to the run's concurrency for
model-driven agents) and resets the environment for each episode, which gives the same rows
as a fresh environment (episodes are named in ``reset``; nothing else carries over).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from flaneur.env.navigation_env import NavigationEnv
from flaneur.env.schemes.turns import TurnsScheme
from flaneur.evaluate.episode import share_scoring_scheme
from flaneur.tasks.episode import Episode
from flaneur.world.city import City

POOLS_KEPT = 8
"""Pools kept per process (least recently used dropped first)."""


class EnvPool:
    """Idle environments of one (city, task set, scheme, scheme options).

    Parameters
    ----------
    city
        The city.
    episodes
        The task set (the environments can be reset to any of them; their instructions
        make the observation space).
    scheme
        Action scheme name.
    scheme_options
        Keyword options of the scheme.
    """

    def __init__(
        self,
        city: City,
        episodes: Sequence[Episode],
        scheme: str,
        scheme_options: dict[str, Any] | None = None,
    ) -> None:
        self.city = city
        self.episodes = list(episodes)
        self.scheme = scheme
        self.scheme_options = dict(scheme_options or {})
        self._idle: list[NavigationEnv] = []
        self.built = 0

    def _build(self) -> NavigationEnv:
        self.built += 1
        env = NavigationEnv(
            self.city, self.episodes, scheme=self.scheme, scheme_options=self.scheme_options
        )
        if self.built == 1 and isinstance(env.scheme, TurnsScheme):
            share_scoring_scheme(env.scheme)
        return env

    def check(self) -> None:
        """Build one environment now (a bad scheme or scheme option fails here) and keep it."""
        if not self._idle:
            self._idle.append(self._build())

    @contextmanager
    def borrow(self) -> Iterator[NavigationEnv]:
        """An environment for one episode (reset it with the episode); returned afterwards."""
        env = self._idle.pop() if self._idle else self._build()
        try:
            yield env
        finally:
            self._idle.append(env)


_POOLS: OrderedDict[tuple[Any, ...], EnvPool] = OrderedDict()


def env_pool(
    city: City,
    episodes: Sequence[Episode],
    scheme: str,
    scheme_options: dict[str, Any] | None = None,
) -> EnvPool:
    """The process's pool for these arguments (made on first use; the last few are kept).

    Pools are keyed by the identity of ``city`` and of the episodes (the pool holds them, so
    the identities stay valid), the scheme and its options.
    """
    options = json.dumps(scheme_options or {}, sort_keys=True, default=str)
    key = (id(city), scheme, options, tuple(map(id, episodes)))
    pool = _POOLS.get(key)
    if pool is None or pool.city is not city:
        pool = EnvPool(city, episodes, scheme, scheme_options)
        _POOLS[key] = pool
        while len(_POOLS) > POOLS_KEPT:
            _POOLS.popitem(last=False)
    else:
        _POOLS.move_to_end(key)
    return pool


__all__ = ["POOLS_KEPT", "EnvPool", "env_pool"]
