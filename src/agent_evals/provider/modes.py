"""How the runner tells the provider to replay or record: the environment variables it sets for
Promptfoo's workers, read by :mod:`agent_evals.provider.config` when the provider's ``config`` does
not say. Standard library only: the runner imports these names at its start."""

RECORD_ENV = "AGENT_EVALS_RECORD_DIR"
REPLAY_ENV = "AGENT_EVALS_REPLAY_DIR"
ALLOW_STALE_ENV = "AGENT_EVALS_ALLOW_STALE"
GOLDEN = "golden"
"""``replay: golden`` (and ``--replay`` without a folder): the suite's own ``golden/`` conversations."""
