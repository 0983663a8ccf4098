"""A package's public names, each loaded from its module on first use (PEP 562).

``agent_evals.llm`` and ``agent_evals.report`` name their types and functions at the package
level, but importing one of their modules (``agent_evals.report.figures``) runs the package's
``__init__`` first: eager re-exports there would load every module of the package (the report's
database reader, the OpenAI client's asyncio) into a process that needs one small module, the
runner before it starts Promptfoo among them. The package says where each name lives instead::

    __getattr__ = lazy_exports(__name__, {"build_report": "build", ...})

and imports the same names under ``TYPE_CHECKING`` for the type checkers. A name must not also be
a module of the package: once that module is imported, the package's attribute is the module.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_exports(package: str, where: Mapping[str, str]) -> Callable[[str], object]:
    """The package's module ``__getattr__``: ``name`` from ``package.<where[name]>``, kept once loaded."""

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
