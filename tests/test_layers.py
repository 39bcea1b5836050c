"""The package layers of docs/DESIGN.md hold: ``lint-imports`` keeps the ``.importlinter``
contract, the contract lists the same order as the design's package table, and the check
does fail on an import that goes up a layer."""

from __future__ import annotations

import configparser
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
pytestmark = pytest.mark.skipif(
    not LINT_IMPORTS.exists(), reason="import-linter is missing: pip install -e '.[test]'"
)


def contract_layers(config: Path) -> list[str]:
    """The layers of the contract, highest first."""
    parser = configparser.ConfigParser()
    parser.read(config)
    return parser["importlinter:contract:layers"]["layers"].split()


def table_modules() -> list[str]:
    """The modules of the design's package table, in row order (lowest layer first)."""
    text = (ROOT / "docs/DESIGN.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `flaneur.")]
    names = [name for row in rows for name in re.findall(r"`(flaneur\.\w+)`", row.split("|")[1])]
    return [
        n
        for n in names
        if (ROOT / "src" / n.replace(".", "/")).exists()
        or (ROOT / "src" / (n.replace(".", "/") + ".py")).exists()
    ]


def lint(config: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(config), "--no-cache"],
        cwd=ROOT / "src",
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_layers_are_kept_with_no_ignored_import_and_no_cycle():
    done = lint(ROOT / ".importlinter")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 kept, 0 broken" in done.stdout
    assert "ignored" not in done.stdout  # no import is let through either contract
    assert "ignore_imports" not in (ROOT / ".importlinter").read_text(encoding="utf-8")


def test_the_contract_is_the_design_table_and_covers_every_package():
    layers = contract_layers(ROOT / ".importlinter")
    assert table_modules() == layers[::-1]
    packages = {
        f"flaneur.{p.stem}"
        for p in (ROOT / "src/flaneur").iterdir()
        if (p.is_dir() and (p / "__init__.py").exists())
        or (p.suffix == ".py" and p.stem != "__init__")
    }
    assert packages == set(layers), "every module of flaneur belongs to a layer"


def test_an_import_up_a_layer_breaks_the_contract(tmp_path):
    layers = contract_layers(ROOT / ".importlinter")
    cli, world = layers.index("flaneur.cli"), layers.index("flaneur.world")
    layers[cli], layers[world] = layers[world], layers[cli]  # now cli may not import world
    text = (ROOT / ".importlinter").read_text(encoding="utf-8")
    swapped = re.sub(
        r"layers =\n(?:    .+\n)+", "layers =\n" + "".join(f"    {name}\n" for name in layers), text
    )
    config = tmp_path / "swapped.ini"
    config.write_text(swapped, encoding="utf-8")
    done = lint(config)
    assert done.returncode != 0 and "BROKEN" in done.stdout
