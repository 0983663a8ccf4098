"""Where the project's files live.

The package is installed editable (``pip install -e .``), so the project root is
two levels above this package; ``AGENT_EVALS_HOME`` overrides it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


HOME_VARIABLE = "AGENT_EVALS_HOME"


def project_root() -> Path:
    override = os.environ.get(HOME_VARIABLE)
    if override:
        return Path(override).resolve()
    return Path(__file__).resolve().parents[2]


DATA_DIR_ENV = "AGENT_EVALS_DATA_DIR"


def default_data_dir() -> Path:
    """The portal's data dir (test repository and PR database): ``AGENT_EVALS_DATA_DIR``,
    else ``data/portal`` in the project (git-ignored)."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override).resolve()
    return project_root() / "data" / "portal"


def agent_config_dir() -> Path:
    """The folder holding ``<name>/agent.yaml`` for every agent."""
    return project_root() / "agent_config" / "agents"


def evals_dir() -> Path:
    return project_root() / "evals"


def promptfoo_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """Promptfoo's folder (results database, cache, logs): ``PROMPTFOO_CONFIG_DIR`` of ``env`` (else of
    this process), else ``~/.promptfoo``, Promptfoo's default, as ``agent-evals run`` leaves it (so
    ``npm run eval`` and plain ``npx promptfoo eval`` share one viewer)."""
    override = (os.environ if env is None else env).get("PROMPTFOO_CONFIG_DIR")
    return Path(override) if override else Path.home() / ".promptfoo"
