"""The case factory: scenario templates and a data table expanded into a suite's cases.

A suite keeps ``cases/templates.yaml`` (templates, and the name of its table) and the table
(``cases/rows.csv`` or ``.yaml``); :func:`expand` fills every row into its template(s), with
values a pack derives from the row (``derive:``), and gives the cases and their golden plan
entries; :func:`write` puts them in the suite (``agent-evals cases expand <suite>``), and
:func:`check_suite` says, one line per file, when the checked-in files are out of sync (the
preflight runs it). See docs/cases.md.
"""

from agent_evals.cases.command import check_suite, expand_command
from agent_evals.cases.expand import Expansion, GeneratedCase, expand
from agent_evals.cases.output import out_of_sync, render_cases, render_plan, write
from agent_evals.cases.source import TEMPLATES_FILE, CaseFactoryError, CaseSource, Row, has_cases, load_source

__all__ = [
    "TEMPLATES_FILE",
    "CaseFactoryError",
    "CaseSource",
    "Expansion",
    "GeneratedCase",
    "Row",
    "check_suite",
    "expand",
    "expand_command",
    "has_cases",
    "load_source",
    "out_of_sync",
    "render_cases",
    "render_plan",
    "write",
]
