"""The metric table defines every row field once; labels and docs derive from it."""

from __future__ import annotations

import re
from pathlib import Path

from flaneur.metrics import METRIC_FIELDS, METRIC_LABELS, METRICS, ROW_FIELDS
from flaneur.report.tables import METRIC_LABELS as REPORT_LABELS

DOCS = Path(__file__).resolve().parents[2] / "docs/metrics.md"


def test_fields_and_labels_come_from_the_table():
    assert tuple(m.key for m in METRICS) == METRIC_FIELDS
    assert len(set(METRIC_FIELDS)) == len(METRIC_FIELDS)
    assert not set(METRIC_FIELDS) & set(ROW_FIELDS)
    assert REPORT_LABELS is METRIC_LABELS
    columns = sorted(m.column for m in METRICS if m.column)
    assert columns == list(range(1, len(columns) + 1))  # no gaps, no ties
    assert list(METRIC_LABELS) == [
        m.key for m in sorted(METRICS, key=lambda m: m.column or 0) if m.column
    ]
    assert all(m.label for m in METRICS)


def test_the_docs_define_every_field():
    documented = set(re.findall(r"^\| `(\w+)` \|", DOCS.read_text(encoding="utf-8"), re.M))
    assert set(METRIC_FIELDS) <= documented, sorted(set(METRIC_FIELDS) - documented)


def test_the_docs_table_says_what_the_glossary_says():
    """docs/metrics.md's definition and source columns are the Metric's (the web app's
    glossary shows the Metric's)."""
    rows = re.findall(r"^\| `(\w+)` \| [^|]* \| (.*) \| ([^|]*) \|$", DOCS.read_text("utf-8"), re.M)
    documented = {key: (definition, source) for key, definition, source in rows}
    for metric in METRICS:
        assert documented[metric.key] == (metric.definition, metric.source), metric.key
