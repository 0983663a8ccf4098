"""Domain packs (see :mod:`agent_evals.packs.base`): ``generic``, the built-in packs (each a
subpackage of this one exposing ``PACK``), or your own by dotted path ``package.module:Pack``."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from agent_evals.packs.base import CaseDerivation, FixtureError, GenericPack, Pack
from agent_evals.record import KitError


class PackError(KitError, ValueError):
    kind = "config"


@cache
def built_in() -> dict[str, Pack]:
    """The kit's packs by name: ``generic`` and each subpackage's ``PACK``."""
    packs: dict[str, Pack] = {"generic": GenericPack()}
    for module in pkgutil.iter_modules(__path__):
        if module.ispkg:
            pack = getattr(importlib.import_module(f"{__name__}.{module.name}"), "PACK", None)
            if isinstance(pack, Pack):
                packs[pack.name] = pack
    return packs


def load_pack(name: str) -> Pack:
    """A built-in pack by name, or ``package.module:Class`` (or an instance) for your own."""
    if name in built_in():
        return built_in()[name]
    module_name, _, attr = name.partition(":")
    if not attr:
        raise PackError(f"unknown pack {name!r}: use one of {', '.join(built_in())} or a dotted path 'package.module:Pack'")
    try:
        target = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise PackError(f"pack {name!r}: cannot load {name}: {exc}") from None
    pack = target() if isinstance(target, type) else target
    if not isinstance(pack, Pack):
        raise PackError(f"pack {name!r} is not an agent_evals.packs.Pack (subclass it and override what you need)")
    return pack


__all__ = ["CaseDerivation", "FixtureError", "GenericPack", "Pack", "PackError", "built_in", "load_pack"]
