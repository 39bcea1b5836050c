"""folium maps that work offline and show data strings as text.

folium links Leaflet, jQuery, Bootstrap and Font Awesome from CDNs and writes tooltip text
raw into a JavaScript template literal (a backtick in an OpenStreetMap name ends the literal
and blanks the page). Maps made here instead:

- carry Leaflet inside the page (or link the copy written next to a folder of pages), load
  nothing else, and draw map tiles only when asked (``tiles=True``); offline, the streets of
  the city graph are the background;
- bind tooltips with :class:`TextTooltip`, whose text is escaped for HTML and then for the
  script (see :mod:`flaneur.report.escaping`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import cast

import folium
from branca.element import Element, Figure, MacroElement
from folium.template import Template

from flaneur.report.escaping import html_text, script_json
from flaneur.report.web_assets import inline_head, write_assets

OSM_ATTRIBUTION = "&copy; OpenStreetMap contributors"


class TextTooltip(MacroElement):
    """A tooltip that shows ``text`` literally, whatever characters it holds.

    Parameters
    ----------
    text
        Plain text (not HTML); line breaks are kept.
    """

    _template = Template(
        """{% macro script(this, kwargs) %}
{{ this._parent.get_name() }}.bindTooltip({{ this.content }}, {"sticky": true});
{% endmacro %}"""
    )

    def __init__(self, text: object) -> None:
        super().__init__()
        self._name = "TextTooltip"
        self.content = script_json(html_text(text).replace("\n", "<br>"))


def layer(name: str, *, show: bool = True) -> folium.FeatureGroup:
    """A feature group whose ``name`` shows literally in the layer control."""
    return folium.FeatureGroup(name=html_text(name), show=show)


def offline_map(
    location: Sequence[float], *, zoom_start: int = 15, tiles: bool = False
) -> folium.Map:
    """A folium map that loads no script or style sheet from the network.

    Parameters
    ----------
    location
        ``[lat, lng]`` of the initial centre.
    zoom_start
        Initial zoom level.
    tiles
        Add OpenStreetMap tiles (fetched from the tile servers by the browser when the page is
        viewed online); without them the map shows only what is drawn on it.
    """
    fmap = folium.Map(
        location=list(location), zoom_start=zoom_start, tiles=None, prefer_canvas=True
    )
    fmap.default_js = []  # folium's CDN links; Leaflet is added by save_map
    fmap.default_css = []
    if tiles:
        folium.TileLayer("OpenStreetMap", name="OpenStreetMap tiles", attr=OSM_ATTRIBUTION).add_to(
            fmap
        )
    else:  # streets drawn on a light background instead of tiles
        style = "<style>.leaflet-container{background:#fbfbf8}</style>"
        _figure(fmap).header.add_child(Element(style), name="offline_background")
    return fmap


def _figure(fmap: folium.Map) -> Figure:
    """The page that holds ``fmap`` (a folium map always sits in a branca Figure)."""
    return cast(Figure, fmap.get_root())


def save_map(fmap: folium.Map, path: str | Path, *, assets_dir: str | Path | None = None) -> Path:
    """Write ``fmap`` to an HTML file that works offline.

    Parameters
    ----------
    fmap
        A map made by :func:`offline_map`.
    path
        HTML file to write (its folder is created).
    assets_dir
        Write Leaflet once into this folder and link it (it must be the folder of ``path``);
        by default Leaflet is inlined into the page (about 170 kB).
    """
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    if assets_dir is not None and Path(assets_dir).resolve() != out.parent.resolve():
        raise ValueError("assets_dir must be the folder of the page")
    head = inline_head() if assets_dir is None else write_assets(assets_dir)
    root = _figure(fmap)
    root.header.add_child(Element(head), name="leaflet", index=0)
    root.title = "flaneur map"
    out.write_text(root.render(), encoding="utf-8")
    return out
