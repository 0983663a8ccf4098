"""Golden conversations: plans, their recording (``agent-evals golden``) and the suites' self-check."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``agent-evals golden`` and ``python -m agent_evals.golden`` (here: no heavy import)."""
    parser.add_argument("suites", nargs="*", metavar="SUITE",
                        help="suites to record (default: every suite with a golden/plan.yaml)")
    parser.add_argument("--stale", action="store_true",
                        help="only the cases whose golden cassette is missing or stale (a new case, a changed one)")
