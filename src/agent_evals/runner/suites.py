"""The old name of :mod:`agent_evals.suites.discovery` (the suites moved below everything that runs
them), kept while the release pack (``packs/release/``, ``tests/packs/release/``, written on a branch
of its own) still imports it: remove this module once they import ``agent_evals.suites.discovery``."""

from agent_evals.suites.discovery import ALL, Suite, discover, select

__all__ = ["ALL", "Suite", "discover", "select"]
