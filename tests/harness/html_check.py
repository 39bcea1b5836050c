"""Checks of generated HTML pages for tests: scripts parse and run, nothing loads from the web.

The pages are parsed with the standard library's HTML parser, which ends a ``<script>``
element where a browser does (at the first ``</script``), so a name that breaks out of a
script shows up here as a script that does not parse. Scripts are checked with Node.js
(``node --check``) and run against a recording stand-in for Leaflet (:func:`run_map_scripts`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

SCRIPT_TYPES = (None, "", "text/javascript", "module")


@dataclass
class PageParts:
    """What a page holds: inline scripts, external references, its visible text, attributes."""

    scripts: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    attributes: list[str] = field(default_factory=list)


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts = PageParts()
        self._script: list[str] | None = None
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.parts.attributes.extend(v for v in values.values() if v)
        if tag == "script":
            self._in_script = True
            if values.get("src"):
                self.parts.references.append(str(values["src"]))
            self._script = [] if values.get("type") in SCRIPT_TYPES else None
        elif tag == "link" and values.get("href"):
            self.parts.references.append(str(values["href"]))
        elif tag in ("img", "iframe", "source") and values.get("src"):
            self.parts.references.append(str(values["src"]))

    def handle_data(self, data: str) -> None:
        if self._in_script:
            if self._script is not None:
                self._script.append(data)
        else:
            self.parts.text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            if self._script is not None:
                self.parts.scripts.append("".join(self._script))
            self._script, self._in_script = None, False


def page_parts(html: str) -> PageParts:
    """Inline scripts, external references (script ``src``, link ``href``), text, attributes."""
    parser = _Parser()
    parser.feed(html)
    parser.close()
    return parser.parts


def web_references(html: str) -> list[str]:
    """Script, style and frame references of a page that point to the web (http, https, //)."""
    return [
        r for r in page_parts(html).references if r.lower().startswith(("http:", "https:", "//"))
    ]


def node_path() -> str | None:
    """The Node.js executable, if installed."""
    return shutil.which("node")


def script_syntax_errors(scripts: list[str]) -> list[str]:
    """``node --check`` of each script: the error message of each that does not parse."""
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, code in enumerate(scripts):
            path = Path(tmp) / f"script{i}.js"
            path.write_text(code, encoding="utf-8")
            done = subprocess.run(
                [str(node_path()), "--check", str(path)],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                errors.append(f"script {i}: {done.stderr.strip()[:400]}")
    return errors


_RECORDER = r"""
const tooltips = [];
function chain() {
  const target = function () {};
  return new Proxy(target, {
    get(_, key) {
      if (key === "bindTooltip") return (content) => { tooltips.push(content); return chain(); };
      if (key === Symbol.toPrimitive) return () => "";
      return chain();
    },
    apply() { return chain(); },
    construct() { return chain(); },
  });
}
globalThis.L = chain();
globalThis.document = chain();
const vm = require("vm");
for (const file of process.argv.slice(2)) {
  vm.runInThisContext(require("fs").readFileSync(file, "utf8"), { filename: file });
}
process.stdout.write(JSON.stringify(tooltips));
"""


def run_map_scripts(scripts: list[str]) -> list[str]:
    """Run a map page's own scripts (not Leaflet) in Node.js against a stand-in ``L`` that
    records every ``bindTooltip`` call; return the tooltip contents (HTML strings).

    Raises
    ------
    AssertionError
        A script throws.
    """
    with tempfile.TemporaryDirectory() as tmp:
        recorder = Path(tmp) / "recorder.js"
        recorder.write_text(_RECORDER, encoding="utf-8")
        files = []
        for i, code in enumerate(scripts):
            path = Path(tmp) / f"script{i}.js"
            path.write_text(code, encoding="utf-8")
            files.append(str(path))
        done = subprocess.run(
            [str(node_path()), str(recorder), *files], capture_output=True, text=True, check=False
        )
    if done.returncode != 0:
        raise AssertionError(f"a map script throws: {done.stderr.strip()[:800]}")
    return json.loads(done.stdout)
