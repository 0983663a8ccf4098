"""The seed spokes the portal's repository starts with (``portal/seed/spokes/<name>.json``)."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable


def _folder() -> Traversable:
    return resources.files("agent_evals.packs.spoke.portal").joinpath("seed", "spokes")


def seed_spoke_names() -> set[str]:
    return {entry.name.removesuffix(".json") for entry in _folder().iterdir() if entry.name.endswith(".json")}


def seed_spoke_text(name: str) -> str | None:
    """The JSON text of the seed spoke ``name``, or None when there is none by that name."""
    path = _folder().joinpath(f"{name}.json")
    return path.read_text(encoding="utf-8") if path.is_file() else None
