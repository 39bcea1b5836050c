"""What Ling sees: the run's landmark scorer where she stands.

``map`` (the default; V-IRL's oracle row): a place of that name within ``radius_m``, all
around (:class:`~flaneur.perception.landmarks.map.MapLandmarks` on the whole circle). A
scorer of views (``ocr``, ``clip``, ``vlm`` or a plug-in of ``--landmarks``): one view of
``fov`` degrees towards the side the instruction names, else views all around, until every
landmark asked about is found. The directions are V-IRL's eight relative words.

Under ``--protocol paper`` the map is V-IRL's oracle (``virl/actions/navigation/
vision_language_navigator.py`` lines 207-247): the route's landmarks are seen only within
:data:`ORACLE_KEY_M` (5 m) of one of its key positions before the destination, the
destination anywhere within ``radius_m`` (:meth:`Sight.as_oracle`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from PIL import Image

from flaneur.agents.ablations import say_once
from flaneur.agents.virl.instructions import RELATIVE_DEG, relative8
from flaneur.errors import FlaneurError
from flaneur.geo import angle_diff
from flaneur.perception.landmarks.map import MapLandmarks
from flaneur.perception.landmarks.reference import (
    MissingReferenceError,
    build_reference,
    clip_backend,
    stored_clip_scorer,
    views_identity,
)
from flaneur.perception.landmarks.registry import make_landmark_scorer
from flaneur.services.geocode import gazetteer, normalize
from flaneur.views.base import View
from flaneur.world.city import City

ORACLE_KEY_M = 5.0
"""V-IRL's oracle reports the route's landmarks only this close to a key position
(``KEYPOINT_RADIUS``, ``tools/cfgs/benchmark/vln/benchmark_vln_oracle.yaml`` line 74)."""
_BLANK = Image.new("RGB", (1, 1))
_CLIP: dict[tuple[Any, ...], Any] = {}
log = logging.getLogger("flaneur.agents.virl")


def landmarks_in(city: City, instruction: str) -> list[str]:
    """Place names of the city that appear word for word in the instruction (offline), any of
    a place's names (``"Helsinki Cathedral"``) giving its main name once."""
    text = f" {normalize(instruction)} "
    found: dict[str, str] = {}
    gaz = gazetteer(city)
    for name, kind, key in zip(gaz.names, gaz.kinds, gaz.keys, strict=True):
        if kind == "place" and len(key) >= 4 and f" {key} " in text:
            found.setdefault(key, name)
    return list(dict.fromkeys(found.values()))


def clip_scorer(
    city: City, views: Any, model: str, weights: str, reference: int = 64, *, fov: float = 90.0
) -> Any:
    """``CLIPLandmarks`` on open_clip ``model``/``weights``: standardised on the reference set
    stored for the city, views, model and weights (``flaneur perception clip-reference``; one
    of field of view ``fov`` first), else - said once - on ``reference`` views of seeded
    random viewpoints and headings of field of view ``fov`` made in this process; one per
    city, views and weights in a process."""
    key = (city.name, str(city.pack), views_identity(views), model, weights, fov)
    if key not in _CLIP:
        try:
            _CLIP[key] = stored_clip_scorer(city, views, model, weights, fov=fov)
        except MissingReferenceError as err:
            say_once(
                ("clip reference", *map(str, key)),
                f"ling --landmarks clip: {err}; until then CLIP is standardised on {reference} "
                "random views made in this process",
                log,
            )
            backend = clip_backend(model, weights)
            made = build_reference(
                city, views, backend, model=model, weights=weights, size=reference, fov=fov
            )
            _CLIP[key] = made.scorer(backend)
    return _CLIP[key]


def check_landmarks(kind: str | None, views: Any, llm: Any, clip_weights: str | None) -> None:
    """One line when ``--landmarks kind`` cannot work: a scorer of views without views,
    ``clip`` without weights, ``vlm`` without a model."""
    if kind in (None, "map"):
        return
    if views is None:
        raise FlaneurError(f"--landmarks {kind} looks at views: add --views synthetic")
    if kind == "clip" and not clip_weights:
        raise FlaneurError("--landmarks clip needs --option ling.clip_weights=FILE_OR_TAG")
    if kind == "vlm" and llm is None:
        raise FlaneurError("--landmarks vlm asks the run's model: add --llm")


def landmark_scorer(city: City, env_info: Any, options: Any, given: Any = None) -> Any:
    """The scorer of views of the run's ``--landmarks`` (``None``: the map; ``given`` when
    there is one; ``options``: Ling's ``clip_model`` and ``clip_weights``)."""
    kind = env_info.landmarks
    if kind in (None, "map"):
        return None
    if given is not None:
        return given
    check_landmarks(kind, env_info.views, env_info.llm, options.clip_weights)
    if kind == "clip":
        return clip_scorer(
            city, env_info.views, options.clip_model, options.clip_weights, fov=options.view_fov
        )

    return make_landmark_scorer(str(kind), model=env_info.model)


class Sight:
    """Which landmarks Ling sees where she stands in ``city`` (see the module docstring):
    through ``scorer``, a landmark scorer of the run's ``views``, or with ``None`` the map
    (V-IRL's oracle row) up to ``radius_m``; ``fov`` is the field of view of each view."""

    def __init__(
        self, city: City, scorer: Any = None, views: Any = None, *, radius_m: float, fov: float
    ) -> None:

        self.city, self.scorer, self.views, self.fov = city, scorer, views, fov
        self.map = MapLandmarks(city, radius_m=radius_m, match=1.0, categories=False)
        self.keys: np.ndarray | None = None  # V-IRL's oracle: key positions before the goal
        self.goal = ""

    def as_oracle(self, keys: Sequence[int], goal: str) -> None:
        """See with the map as V-IRL's oracle on a route: landmarks only within
        :data:`ORACLE_KEY_M` of ``keys`` (its key positions before the destination), the
        destination ``goal`` anywhere in range; no ``keys``: as before."""
        self.keys = self.city.graph.xy[np.asarray(keys, dtype=np.int64)] if keys else None
        self.goal = goal

    def _at_key(self, node: int) -> bool:
        assert self.keys is not None
        gaps = np.hypot(*(self.keys - self.city.graph.xy[node]).T)
        return bool(gaps.min() <= ORACLE_KEY_M)

    async def seen(
        self, node: int, facing: float, names: Sequence[str], side: str = ""
    ) -> dict[str, str]:
        """``{landmark: relative direction}`` of ``names`` seen from ``node`` facing
        ``facing``; views look towards ``side`` (relative) when it is given."""
        names = list(dict.fromkeys(n for n in names if n))
        if not names:
            return {}
        if self.scorer is None:
            if self.keys is not None and not self._at_key(node):
                names = [n for n in names if n == self.goal]  # the oracle: nothing else here
            where = View(_BLANK, str(self.city.graph.ids[node]), facing, fov=360.0, source="map")
            found = [o for o in self.map.score(where, names) if o.visible]
            return {o.landmark: relative8(float(o.relative_bearing or 0.0)) for o in found}
        if side in RELATIVE_DEG:
            headings = [(facing + RELATIVE_DEG[side]) % 360.0]
        else:
            headings = [(facing + k * self.fov) % 360.0 for k in range(round(360.0 / self.fov))]
        out: dict[str, str] = {}
        for heading in headings:
            view = self.views.view(int(node), heading, fov=self.fov)
            obs = [o for o in await self.scorer.ascore(view, names) if o.visible]
            for o in sorted(obs, key=lambda o: -o.score):
                toward = o.heading if o.heading is not None else view.heading
                out.setdefault(o.landmark, relative8(float(angle_diff(toward, facing))))
            if len(out) == len(names):
                break  # every landmark asked about is found: no need to look further
        return out
