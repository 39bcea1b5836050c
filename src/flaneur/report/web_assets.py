"""The web assets the interactive maps need (Leaflet), shipped inside the package.

Maps must work offline, so no page loads a script or style sheet from a CDN: Leaflet's
``leaflet.js`` and ``leaflet.css`` (with its few images as ``data:`` URIs) are inlined into a
page, or written once next to a folder of pages and linked relatively.

The files under ``assets/leaflet-<version>/`` are the unmodified ``dist`` files of the npm
package and its BSD-2-Clause licence, fetched at build time by::

    python -m flaneur.report.web_assets --refresh

which runs ``npm pack leaflet@<version>``, checks the tarball against the registry's pinned
sha512 integrity and writes ``MANIFEST.json`` (sha256 of every file, checked by the tests).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import shutil
import subprocess
import tarfile
import tempfile
from functools import cache
from pathlib import Path

from flaneur.errors import DataError

LEAFLET_VERSION = "1.9.4"
LEAFLET_INTEGRITY = "sha512-nxS1ynzJOmOlHp+iL3FyWqK89GtNL8U8rvlMOsQdTTssxZwCXh8N2NB3GDQOL+YR3XnWyZAxwQixURb+FA74PA=="
"""The npm registry's ``dist.integrity`` of ``leaflet@1.9.4``."""

LEAFLET_DIR = Path(__file__).parent / "assets" / f"leaflet-{LEAFLET_VERSION}"
LEAFLET_FILES = (
    "leaflet.js",
    "leaflet.css",
    "LICENSE",
    "images/layers.png",
    "images/layers-2x.png",
    "images/marker-icon.png",
    "images/marker-icon-2x.png",
    "images/marker-shadow.png",
)
"""Files kept from the npm package (``dist/`` files and the licence at its root)."""


def _read(name: str) -> bytes:
    path = LEAFLET_DIR / name
    if not path.is_file():
        raise DataError(
            "a packaged map asset is missing (reinstall flaneur, or run "
            "`python -m flaneur.report.web_assets --refresh`)",
            path=path,
        )
    return path.read_bytes()


@cache
def leaflet_js() -> str:
    """The minified Leaflet script, safe to place inside ``<script>...</script>``."""
    code = _read("leaflet.js").decode("utf-8")
    code = re.sub(r"\n//# sourceMappingURL=\S+\s*$", "\n", code)  # the map is not shipped
    return re.sub(r"</(script)", r"<\\/\1", code, flags=re.IGNORECASE).replace("<!--", "<\\!--")


@cache
def leaflet_css() -> str:
    """Leaflet's style sheet with its images inlined as ``data:`` URIs."""
    css = _read("leaflet.css").decode("utf-8")

    def inline(match: re.Match[str]) -> str:
        data = base64.b64encode(_read(f"images/{match.group(1)}")).decode("ascii")
        return f"url(data:image/png;base64,{data})"

    css = re.sub(r"url\(images/([\w-]+\.png)\)", inline, css)
    return re.sub(r"</(style)", r"<\\/\1", css, flags=re.IGNORECASE)


def inline_head() -> str:
    """``<style>`` and ``<script>`` elements that put Leaflet into a page's head."""
    return f"<style>{leaflet_css()}</style>\n<script>{leaflet_js()}</script>"


def write_assets(folder: str | Path) -> str:
    """Write Leaflet into ``folder`` once and return the ``<head>`` markup linking it.

    The links are relative (``leaflet-<version>/leaflet.js``), for pages written directly in
    ``folder``.
    """
    target = Path(folder) / f"leaflet-{LEAFLET_VERSION}"
    target.mkdir(parents=True, exist_ok=True)
    for name, text in (("leaflet.js", leaflet_js()), ("leaflet.css", leaflet_css())):
        path = target / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    shutil.copyfile(LEAFLET_DIR / "LICENSE", target / "LICENSE")
    base = target.name
    return (
        f'<link rel="stylesheet" href="{base}/leaflet.css">\n'
        f'<script src="{base}/leaflet.js"></script>'
    )


def manifest() -> dict:
    """The packaged Leaflet's manifest: package, integrity, licence, ``files`` (sha256 each)."""
    return json.loads(_read("MANIFEST.json"))


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def refresh(target: Path = LEAFLET_DIR) -> dict[str, str]:
    """Fetch Leaflet from the npm registry (``npm pack``), check it and store its files."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            ["npm", "pack", f"leaflet@{LEAFLET_VERSION}", "--silent"],
            cwd=tmp,
            check=True,
            capture_output=True,
        )
        tarball = Path(tmp) / f"leaflet-{LEAFLET_VERSION}.tgz"
        digest = base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
        if f"sha512-{digest}" != LEAFLET_INTEGRITY:
            raise SystemExit(f"{tarball.name}: sha512 does not match the pinned integrity")
        target.mkdir(parents=True, exist_ok=True)
        sums = {}
        with tarfile.open(tarball) as tar:
            for name in LEAFLET_FILES:
                member = f"package/{name}" if name == "LICENSE" else f"package/dist/{name}"
                handle = tar.extractfile(member)
                if handle is None:
                    raise SystemExit(f"{tarball.name}: {member} is missing")
                data = handle.read()
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                (target / name).write_bytes(data)
                sums[name] = _sha256(data)
    (target / "MANIFEST.json").write_text(
        json.dumps(
            {
                "package": f"leaflet@{LEAFLET_VERSION}",
                "integrity": LEAFLET_INTEGRITY,
                "licence": "BSD-2-Clause",
                "files": sums,
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    return sums


def main() -> None:
    """``python -m flaneur.report.web_assets --refresh``: fetch Leaflet into the package."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refresh", action="store_true", help="fetch from the npm registry")
    args = parser.parse_args()
    if args.refresh:
        sums = refresh()
        print(f"wrote {len(sums)} files to {LEAFLET_DIR}")
    else:
        print(json.dumps(manifest(), indent=1))


if __name__ == "__main__":
    main()
