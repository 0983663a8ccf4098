"""Domain packs (see :mod:`agent_evals.packs.base`): ``generic``, ``spoke``, or your own by dotted path."""

from __future__ import annotations

import importlib

from agent_evals.packs.base import GenericPack, Pack
from agent_evals.record import KitError

BUILT_IN = {"generic": "agent_evals.packs.base:GenericPack", "spoke": "agent_evals.packs.spoke:SpokePack"}


class PackError(KitError, ValueError):
    kind = "config"


def load_pack(name: str) -> Pack:
    """A built-in pack by name, or ``package.module:Class`` for your own."""
    target = BUILT_IN.get(name, name)
    module_name, _, attr = target.partition(":")
    if not attr:
        raise PackError(f"unknown pack {name!r}: use one of {', '.join(BUILT_IN)} or a dotted path 'package.module:Pack'")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise PackError(f"pack {name!r}: cannot load {target}: {exc}") from None
    pack = factory() if isinstance(factory, type) else factory
    if not isinstance(pack, Pack):
        raise PackError(f"pack {name!r} ({target}) does not follow the Pack interface (name, find_pull_request)")
    return pack


__all__ = ["BUILT_IN", "GenericPack", "Pack", "PackError", "load_pack"]
