"""The release pack's checks: ``protected_branches`` and ``changelog_entry``. Each exposes
``parse_config`` and ``grade`` like the core's checks in :mod:`agent_evals.assertions`; both grade
the repository snapshot (:func:`.repository.repository_snapshot`)."""
