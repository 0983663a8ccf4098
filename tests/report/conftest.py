"""Fixtures of the report tests: synthetic Promptfoo results as files, and in a real results
database (written by ``promptfoo import``), with the kit's run manifests beside it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_evals.suites.manifest import RunManifest, SuiteRun, runs_dir
from agent_evals.runner.promptfoo_process import promptfoo_command, promptfoo_env
from agent_evals.testing.promptfoo_results import results_file
from tests.conftest import PROJECT_ROOT

HAS_PROMPTFOO = (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists()
needs_promptfoo = pytest.mark.skipif(not HAS_PROMPTFOO, reason="npm packages not installed")


def write_results(
    folder: Path,
    rows: Iterable[Mapping[str, Any]],
    name: str = "results.json",
    *,
    compact: bool = False,
    **kwargs: Any,
) -> Path:
    """A ``-o`` file as Promptfoo writes it (indented by two), or ``compact``."""
    path = folder / name
    path.write_text(json.dumps(results_file(rows, **kwargs), indent=None if compact else 2), encoding="utf-8")
    return path


def import_results(config_dir: Path, *files: Path) -> None:
    """Store ``-o`` files in a real Promptfoo results database (``promptfoo import``)."""
    env = promptfoo_env({"PATH": "/usr/bin:/bin", "HOME": str(config_dir)})
    env["PROMPTFOO_CONFIG_DIR"] = str(config_dir)
    for path in files:
        done = subprocess.run(promptfoo_command("import", str(path)), env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr


def write_manifest(run_id: str, suites: list[SuiteRun], **kwargs: Any) -> RunManifest:
    """A run manifest where ``agent-evals run`` writes it (the test's data dir)."""
    manifest = RunManifest(run_id=run_id, mode=kwargs.pop("mode", "live"), suites=suites, **kwargs)
    manifest.save(runs_dir() / run_id)
    return manifest


@pytest.fixture(autouse=True)
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty PROMPTFOO_CONFIG_DIR and data dir for every test (no database, no run manifests
    of the project)."""
    folder = tmp_path / "promptfoo"
    folder.mkdir()
    monkeypatch.setenv("PROMPTFOO_CONFIG_DIR", str(folder))
    monkeypatch.setenv("AGENT_EVALS_DATA_DIR", str(tmp_path / "data" / "portal"))
    return folder
