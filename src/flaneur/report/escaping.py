"""Escaping of data strings (OSM names, instructions, model output, ids) for each HTML context.

Reports and maps put strings from data into four contexts, each with its own rules:

- HTML text, attribute values and SVG text: :func:`html_text` (``& < > " '`` as entities);
- JavaScript inside ``<script>``: :func:`script_json`, a JSON literal in which ``<``, ``>``,
  ``&``, U+2028 and U+2029 are ``\\u`` escapes, so that neither ``</script>`` nor ``<!--``
  can end or change the script and every JavaScript engine parses it;
- HTML that a script puts into the page (Leaflet tooltips set ``innerHTML``):
  ``script_json(html_text(s))``, escaped for HTML first, then for the script;
- link targets: :func:`href` (percent-encoded path, then escaped for the attribute).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from typing import Any
from urllib.parse import quote

_SCRIPT_UNSAFE = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_SCRIPT_UNSAFE_RE = re.compile("[<>&\u2028\u2029]")


def html_text(value: Any, limit: int | None = None) -> str:
    """``value`` as HTML text or attribute value; ``limit`` cuts the text before escaping."""
    text = "" if value is None else str(value)
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)] + "…"
    return html.escape(text, quote=True)


def script_json(value: Any) -> str:
    """A JavaScript literal of ``value`` (JSON) that is safe anywhere inside ``<script>``."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    return _SCRIPT_UNSAFE_RE.sub(lambda m: _SCRIPT_UNSAFE[m.group()], text)


def href(*parts: str) -> str:
    """A relative link of path ``parts``, percent-encoded and escaped for an attribute."""
    return html.escape("/".join(quote(p, safe="") for p in parts), quote=True)


def safe_filename(text: str, limit: int = 80) -> str:
    """A file name made of ``text``: letters, digits, ``. _ -``, others replaced by ``_``.

    A name that had to change gets a short hash of ``text``, so different texts never share
    a file.
    """
    name = re.sub(r"[^\w.-]", "_", text, flags=re.ASCII).lstrip(".")[:limit]
    if name != text:
        name += "-" + hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return name
