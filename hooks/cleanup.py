"""Promptfoo extension hook: abandon the pull requests each test created.

    extensions:
      - file://../../hooks/cleanup.py:extension_hook

afterEach abandons the row's PRs (also for failed and errored rows); afterAll
abandons any PR of this run still active. It never breaks the eval: problems are
logged to stderr and shown in the row's metadata (``cleanup``).
"""

from agent_evals.hooks import extension_hook

__all__ = ["extension_hook"]
