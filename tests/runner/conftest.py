"""Fixtures of the runner tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import clean_env


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run with its own data dir and Promptfoo database; no inherited endpoints."""
    for key in list(os.environ):
        if key not in clean_env():
            monkeypatch.delenv(key)
    monkeypatch.setenv("AGENT_EVALS_DATA_DIR", str(tmp_path / "data" / "portal"))
    monkeypatch.setenv("PROMPTFOO_CONFIG_DIR", str(tmp_path / "promptfoo"))
    return tmp_path
