"""The report as JSON: the :class:`~repogate.report.model.Report` model, dumped as it is."""

from __future__ import annotations

from repogate.report.model import Report


def to_json(report: Report) -> str:
    """Return ``report`` as indented JSON (schema_version 2; floats as Python prints them)."""
    return report.model_dump_json(indent=2)
