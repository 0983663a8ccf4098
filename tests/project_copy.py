"""A copy of the project a test may change: its suites and agent configs copied, the code linked.

``AGENT_EVALS_HOME`` pointed at it makes every command read the copy (``paths.project_root``):
the suites under ``evals/``, the data dirs and run folders under ``data/``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import PROJECT_ROOT

LINKED = ("assertions", "providers", "hooks", "node_modules", "scripts", "package.json", ".venv")


def copy_project(root: Path, suites: tuple[str, ...] | None = None) -> Path:
    """``root/home``: ``evals/`` (all suites, or only ``suites``) and ``agent_config/`` copied, the rest linked."""
    home = root / "home"
    evals = home / "evals"
    evals.mkdir(parents=True)
    for folder in (PROJECT_ROOT / "evals").iterdir():
        if folder.is_dir() and (suites is None or folder.name in suites):
            shutil.copytree(folder, evals / folder.name)
        elif folder.is_file():
            shutil.copy2(folder, evals / folder.name)
    shutil.copytree(PROJECT_ROOT / "agent_config", home / "agent_config")
    for name in LINKED:
        if (PROJECT_ROOT / name).exists():
            (home / name).symlink_to(PROJECT_ROOT / name)
    return home
