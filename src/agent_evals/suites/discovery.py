"""The suites under ``evals/``: a folder with a ``promptfooconfig.yaml``.

What else a suite's folder holds for its system under test (a portal's settings file, say) is
its pack's business: the core reads only the config.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_evals.paths import evals_dir

CONFIG_NAME = "promptfooconfig.yaml"
ALL = "all"
ORDER_NAME = "order.txt"  # evals/order.txt: `all` runs the suites named there first, in that order




@dataclass(frozen=True)
class Suite:
    name: str
    folder: Path

    @property
    def config(self) -> Path:
        return self.folder / CONFIG_NAME


def discover(root: Path | None = None) -> list[Suite]:
    root = root or evals_dir()
    found = {p.parent.name: Suite(p.parent.name, p.parent) for p in root.glob(f"*/{CONFIG_NAME}")}
    preferred = preferred_order(root)
    order = [n for n in preferred if n in found] + sorted(n for n in found if n not in preferred)
    return [found[n] for n in order]


def preferred_order(root: Path) -> list[str]:
    """The suite names of ``evals/order.txt`` (one per line, ``#`` comments), else none."""
    path = root / ORDER_NAME
    if not path.is_file():
        return []
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line]


def select(name: str, root: Path | None = None) -> list[Suite]:
    suites = discover(root)
    if name == ALL:
        if not suites:
            raise ValueError(f"no suites found under {root or evals_dir()}")
        return suites
    for suite in suites:
        if suite.name == name:
            return [suite]
    known = ", ".join(s.name for s in suites) or "none"
    raise ValueError(f"unknown suite {name!r}: choose one of {known}, or 'all'")
