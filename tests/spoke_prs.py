"""The pull requests a row's run record names, as the tests compare them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def prs(metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``[{id, url}]``: the record's side effects of kind ``pull_request``, ids as numbers (checked: text)."""
    out = []
    for effect in metadata["side_effects"]:
        if effect["kind"] == "pull_request":
            assert isinstance(effect["id"], str) and effect["id"].isdigit(), effect
            out.append({"id": int(effect["id"]), "url": effect.get("url", "")})
    return out


def abandoned(cleanup: Mapping[str, Any]) -> list[int]:
    """The pull requests a row's ``metadata.cleanup`` says were abandoned: its ``undone`` of kind
    ``pull_request``, ids as numbers."""
    return [int(e["id"]) for e in cleanup["undone"] if e["kind"] == "pull_request"]
