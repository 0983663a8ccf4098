"""Promptfoo extension hook, the Python form: abandon the pull requests each test created.

    extensions:
      - file://../../hooks/cleanup.py:extension_hook

afterEach abandons the row's PRs (also for failed and errored rows); afterAll
abandons any PR of this run still active. It never breaks the eval: problems are
logged to stderr and shown in the row's metadata (``cleanup``). The kit's suites use
``hooks/kit.js`` instead (no Python process per row, NOT GRADED entries, a portal under
plain ``npx promptfoo eval``); this one is for suites that want a Python hook only.
"""

from agent_evals.hooks import extension_hook

__all__ = ["extension_hook"]
