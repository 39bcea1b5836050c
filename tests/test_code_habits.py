"""The package's code habits (docs/DESIGN.md, "Imports" and "Functions"), checked on the
source: no function over 80 lines, every function-level import says why it is there, and
the command line starts without the heavy modules those lazy imports keep out."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "flaneur"
MAX_FUNCTION_LINES = 80
Function = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(tree: ast.AST) -> Iterator[Function]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """Names of the functions of ``source`` longer than ``limit`` lines (decorators out)."""
    tree = ast.parse(source)
    return [
        f"{fn.name} ({fn.end_lineno - fn.lineno + 1} lines)"
        for fn in _functions(tree)
        if fn.end_lineno is not None and fn.end_lineno - fn.lineno + 1 > limit
    ]


def uncommented_imports(source: str) -> list[int]:
    """Lines of function-level import blocks of ``source`` with no comment on their first
    line or the line above it (a block: consecutive import statements)."""
    lines = source.splitlines()
    found = []
    for fn in _functions(ast.parse(source)):
        for parent in ast.walk(fn):
            for field in ("body", "orelse", "finalbody"):
                body = getattr(parent, field, None)
                if not isinstance(body, list):
                    continue
                for k, stmt in enumerate(body):
                    is_import = isinstance(stmt, ast.Import | ast.ImportFrom)
                    starts_block = k == 0 or not isinstance(
                        body[k - 1], ast.Import | ast.ImportFrom
                    )
                    if is_import and starts_block:
                        above = lines[stmt.lineno - 2].strip() if stmt.lineno > 1 else ""
                        if "#" not in lines[stmt.lineno - 1] and not above.startswith("#"):
                            found.append(stmt.lineno)
    return sorted(set(found))


def _sources() -> Iterator[tuple[str, str]]:
    for path in sorted(SRC.rglob("*.py")):
        yield str(path.relative_to(SRC)), path.read_text(encoding="utf-8")


def test_the_checks_find_what_they_look_for():
    long = "def f():\n" + "    x = 1\n" * 80
    assert long_functions(long) == ["f (81 lines)"]
    assert long_functions("def f():\n    return 1\n") == []
    lazy = "def f():\n    x = 1\n    import json\n    import os\n    return json, os, x\n"
    assert uncommented_imports(lazy) == [3]
    assert uncommented_imports(lazy.replace("    import json", "    # why\n    import json")) == []
    assert uncommented_imports("import json\n\n\ndef f():\n    return json\n") == []


def test_no_function_is_over_80_lines():
    found = {name: long for name, text in _sources() if (long := long_functions(text))}
    assert not found


def test_every_function_level_import_says_why():
    found = {name: lines for name, text in _sources() if (lines := uncommented_imports(text))}
    assert not found, f"function-level imports without a comment (file: lines): {found}"


def test_the_command_line_starts_without_the_modules_its_commands_load_lazily():
    heavy = [
        "flaneur.evaluate.runner",
        "flaneur.world.city",
        "flaneur.tasks.registry",
        "scipy.stats",
        "folium",
        "osmnx",
        "ortools",
        "rapidocr_onnxruntime",
    ]
    code = "import sys, flaneur.cli; print(','.join(m for m in sys.argv[1:] if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", code, *heavy], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == ""


def test_the_wheel_holds_the_package_and_no_test_code(tmp_path):
    source = tmp_path / "source"  # a copy: setuptools writes build/ into the tree it builds
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(SRC.parent, source / "src", ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(SRC.parents[1] / name, source / name)
    pip = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    subprocess.run(
        [*pip, str(source), "-w", str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("flaneur-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "flaneur/__init__.py" in names and "flaneur/cli/__init__.py" in names
    assert not [n for n in names if n.startswith(("tests/", "harness/", "benchmarks/"))]
    test_code = ("hostile", "oracle_polic", "cityseeker_polic", "vqa_polic", "html_check")
    assert not [n for n in names if any(part in n for part in test_code)]
    testing = {Path(n).name for n in names if n.startswith("flaneur/testing/")}
    assert testing == {
        "__init__.py",
        "fake_faults.py",
        "fake_openai.py",
        "fake_policies.py",
        "goal_blind.py",
        "street_scene.py",
    }
