"""The offline street-view renderer: scene geometry, camera, painter and signs."""

from flaneur.views.synthetic.provider import RENDER_VERSION, SyntheticViews

__all__ = ["RENDER_VERSION", "SyntheticViews"]
