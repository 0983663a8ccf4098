"""The one error of the report's inputs (results, baselines, gate files): a one-line message,
exit status 2 (the command cannot decide)."""

from __future__ import annotations


class ReportInputError(Exception):
    """Results that cannot be read, an unknown eval, a bad gate file, a baseline with nothing in common."""
