"""A report never reports silently from a damaged run folder: errors and warnings by line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flaneur.env.toy import toy_city, toy_episodes
from flaneur.errors import DataError
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.report.run_folder import load_run
from flaneur.report.run_report import build_report


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two agents on the five toy episodes: ten rows."""
    out = tmp_path_factory.mktemp("runs") / "clean"
    run_benchmark(
        RunConfig(agents=("forward", "oracle"), tasks=("toy",)),
        out,
        progress="none",
        loaded={"toy": (toy_city(), toy_episodes())},
    )
    return out


@pytest.fixture
def run(clean_run: Path, tmp_path: Path) -> Path:
    """A copy of the clean run to damage."""
    return Path(shutil.copytree(clean_run, tmp_path / "run"))


def log_of(folder: Path) -> Path:
    return folder / "episodes.jsonl"


def flaneur(*args: str) -> subprocess.CompletedProcess:
    """The installed console script."""
    exe = Path(sys.executable).with_name("flaneur")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, check=False)


def test_a_clean_run_has_no_warnings(clean_run):
    data = load_run(clean_run)
    assert len(data.rows) == 10 and data.warnings == []


def test_missing_log_is_an_error_naming_the_file(run):
    log_of(run).unlink()
    with pytest.raises(DataError, match=r"episodes\.jsonl: missing") as err:
        load_run(run)
    assert err.value.path == log_of(run)


@pytest.mark.parametrize(
    ("junk", "reason"),
    [
        (b"garbage appended\n", "not JSON"),
        (b"\xff\xfe\x00binary\n", "not UTF-8"),
        (b"[1, 2, 3]\n", "a JSON list, not an object"),
        (b'{"task": "toy", "agent": "forward"}\n', "no episode_id"),
        (b'{"task": "toy", "agent": "x", "episode_id": "e", "metrics": [1]}\n', "metrics"),
    ],
)
def test_junk_appended_is_an_error_naming_the_line(run, junk, reason):
    with log_of(run).open("ab") as handle:
        handle.write(junk)
    with pytest.raises(DataError, match=reason) as err:
        load_run(run)
    assert err.value.line == 11 and err.value.path == log_of(run)
    assert "episodes.jsonl, line 11: " in str(err.value)


def test_junk_in_the_middle_is_an_error_naming_its_line(run):
    lines = log_of(run).read_bytes().split(b"\n")
    lines[3] = lines[3][:40]  # a row cut short, followed by complete rows
    log_of(run).write_bytes(b"\n".join(lines))
    with pytest.raises(DataError) as err:
        load_run(run)
    assert err.value.line == 4


def test_a_last_row_cut_short_is_left_out_with_a_warning(run):
    data = log_of(run).read_bytes()
    log_of(run).write_bytes(data[: len(data) - 30])  # killed while writing row 10
    loaded = load_run(run)
    assert len(loaded.rows) == 9
    assert any("line 10: the last row is cut short" in w for w in loaded.warnings)
    # and the summary's count for that agent no longer matches the log
    assert any("4 row(s) of task 'toy'" in w and "counts 5" in w for w in loaded.warnings)


def test_rows_lost_at_a_line_boundary_give_a_count_warning_per_agent(run):
    lines = log_of(run).read_text().splitlines(keepends=True)
    oracle = [line for line in lines if '"agent": "oracle"' in line]
    log_of(run).write_text("".join(line for line in lines if line not in oracle[2:]))
    loaded = load_run(run)
    (warning,) = loaded.warnings
    assert "2 row(s) of task 'toy' / agent 'oracle' where summary.json counts 5" in warning


def test_blank_lines_are_skipped_and_repeated_rows_warned(run):
    lines = log_of(run).read_text().splitlines(keepends=True)
    log_of(run).write_text("".join(lines) + "\n" + lines[0])
    loaded = load_run(run)
    assert len(loaded.rows) == 11
    assert any("more than one row" in w for w in loaded.warnings)


def test_binary_or_wrong_summary_is_a_one_line_error(run):
    (run / "summary.json").write_bytes(b"\x89PNG\r\n\x1a\n\x00")
    with pytest.raises(DataError, match=r"summary\.json: not UTF-8"):
        load_run(run)
    (run / "summary.json").write_text('["a list"]')
    with pytest.raises(DataError, match="expected a JSON object with a `runs` list"):
        load_run(run)


def test_warnings_are_shown_in_the_html_report(run, tmp_path):
    data = log_of(run).read_bytes()
    log_of(run).write_bytes(data[:-30])
    page = build_report([load_run(run)], tmp_path / "r.html", interactive_maps=False).read_text()
    assert (
        page.count("<p class=warn>warning: ") == 2 and "line 10: the last row is cut short" in page
    )


def test_report_command_on_junk_exits_2_with_one_line_naming_file_and_line(run, tmp_path):
    with log_of(run).open("a") as handle:
        handle.write("this is not a row\n")
    done = flaneur("report", str(run), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "episodes.jsonl, line 11: not JSON" in line and "Traceback" not in done.stderr
    assert not (tmp_path / "r.html").exists()  # nothing half-written


def test_report_command_on_a_missing_log_exits_2(run, tmp_path):
    log_of(run).unlink()
    done = flaneur("report", str(run), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 2 and "episodes.jsonl: missing" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_report_command_warns_on_a_cut_log_and_reports(run, tmp_path):
    data = log_of(run).read_bytes()
    log_of(run).write_bytes(data[:-30])
    done = flaneur("report", str(run), "-o", str(tmp_path / "r.html"), "--json")
    assert done.returncode == 0, done.stderr
    assert "warning: " in done.stderr and "line 10: the last row is cut short" in done.stderr
    out = json.loads(done.stdout)
    assert len(out["warnings"]) == 2 and (tmp_path / "r.html").is_file()
