"""How ``tests/test_layers.py`` reads the import contracts (``[tool.importlinter]`` of pyproject.toml)
and docs/architecture.md's layer map and "Packages" table.

A row of the table names its modules in the "package / module" column (```record/```,
```cleanup.py```, ```packs/spoke/portal/api.py```), its layer in the "layer" column (1 at the
bottom), and in "never imports" what the contracts forbid it beyond its layer: whatever sits above it
is forbidden by the layer order itself and is not repeated. The rest is the contracts':
a ``forbidden`` contract whose sources name the row's module, an ``independence`` contract or an
independent sibling in its layer (``a | b``). A name of the kit is written without ``agent_evals.``.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "agent_evals"
_CODE = re.compile(r"`([^`]+)`")
_CELL = re.compile(r"(?<!\\)\|")  # a table's cell border, not an escaped \| inside a cell


@dataclass(frozen=True)
class Contracts:
    layers: list[str]  # as written in the layers contract, top layer first
    layer_of: dict[str, int]  # each module the layers contract names -> its layer, 1 at the bottom
    forbidden: list[tuple[list[str], list[str]]] = field(default_factory=list)  # (sources, forbidden)
    independent: list[list[str]] = field(default_factory=list)  # groups of modules that know nothing of each other

    def layer_of_module(self, module: str) -> int | None:
        """The layer of ``module``, or of the closest ancestor the layers contract names; None when none does."""
        parts = module.split(".")
        for end in range(len(parts), 0, -1):
            found = self.layer_of.get(".".join(parts[:end]))
            if found is not None:
                return found
        return None


def load_contracts(pyproject: Path) -> Contracts:
    contracts = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    layered = next(c for c in contracts if c["type"] == "layers")
    container = layered["containers"][0]
    layers: list[str] = layered["layers"]
    layer_of: dict[str, int] = {}
    independent = [list(c["modules"]) for c in contracts if c["type"] == "independence"]
    for position, layer in enumerate(layers):
        tails = [tail.strip().strip("()") for tail in re.split(r"[|:]", layer)]
        for tail in tails:
            layer_of[f"{container}.{tail}"] = len(layers) - position
        if "|" in layer:
            independent.append([f"{container}.{tail}" for tail in tails])
    forbidden = [(list(c["source_modules"]), list(c["forbidden_modules"])) for c in contracts if c["type"] == "forbidden"]
    return Contracts(layers, layer_of, forbidden, independent)


def short(module: str) -> str:
    """How the doc names a module: ``agent_evals.packs.spoke`` -> ``packs.spoke``; ``openai`` stays."""
    return module.removeprefix(f"{PACKAGE}.")


def expected_never(contracts: Contracts, modules: tuple[str, ...]) -> frozenset[str]:
    """What the contracts forbid ``modules`` (one row's) beyond what their layer already forbids."""
    layer = min(contracts.layer_of_module(m) or 0 for m in modules)
    never: set[str] = set()
    for sources, forbidden in contracts.forbidden:
        if any(m in sources for m in modules):
            never |= set(forbidden)
    for group in contracts.independent:
        if any(m in group for m in modules):
            never |= set(group) - set(modules)
    return frozenset(short(m) for m in never if (contracts.layer_of_module(m) or 0) <= layer)


@dataclass(frozen=True)
class Row:
    cell: str  # the "package / module" cell as written, for messages
    layer: int
    modules: tuple[str, ...]
    never: frozenset[str]


def module_of(path: str) -> str:
    """``packs/spoke/portal/api.py`` -> ``agent_evals.packs.spoke.portal.api``; ``record/`` -> ``agent_evals.record``."""
    return ".".join([PACKAGE, *path.strip("/").removesuffix(".py").split("/")])


def _section(doc: str, heading: str) -> list[str]:
    lines = doc.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(heading)), None)
    if start is None:
        raise AssertionError(f"docs/architecture.md has no section {heading!r}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start + 1:end]


def doc_rows(doc: str) -> list[Row]:
    """The rows of the table under ``## Packages``: | layer | package / module | what it is | never imports |."""
    rows = []
    for line in _section(doc, "## Packages"):
        cells = [cell.strip() for cell in _CELL.split(line.strip().strip("|"))] if line.startswith("|") else []
        if len(cells) < 4 or not cells[0].isdigit():
            continue
        modules = tuple(module_of(path) for path in _CODE.findall(cells[1]))
        rows.append(Row(cells[1], int(cells[0]), modules, frozenset(_CODE.findall(cells[-1]))))
    return rows


def doc_map(doc: str) -> list[str]:
    """The lines of the first code block under ``## Layers`` (the layer map), as written."""
    lines = _section(doc, "## Layers")
    start = next(i for i, line in enumerate(lines) if line.startswith("```"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
    return lines[start + 1:end]
