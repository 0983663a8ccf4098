"""Safe spoke names: the only way a name from outside becomes a repository path.

A spoke name is the stem of its file, ``spokes/<name>.json``. Names come from agents,
REST paths and settings, so they are checked against one strict pattern before any
path or branch is built from them: lower-case ASCII letters, digits and hyphens,
starting with a letter or digit, 2 to 63 characters. That rules out ``../``, absolute
paths, slashes, NUL bytes, look-alike unicode and over-long names in one place.
"""

from __future__ import annotations

import re

from agent_evals.packs.spoke.portal.errors import InvalidInputError

SPOKE_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{1,62}$"
_SPOKE_NAME = re.compile(SPOKE_NAME_PATTERN)
SPOKES_DIR = "spokes"
_MAX_SHOWN = 80


def is_spoke_name(name: object) -> bool:
    """True when ``name`` is a string matching ``SPOKE_NAME_PATTERN`` (ASCII only)."""
    return isinstance(name, str) and name.isascii() and _SPOKE_NAME.fullmatch(name) is not None


def check_spoke_name(name: object, *, field: str = "spoke name") -> str:
    """Return ``name`` when it is a safe spoke name, else raise ``InvalidInputError``."""
    if is_spoke_name(name):
        return str(name)
    shown = repr(name)
    if len(shown) > _MAX_SHOWN:
        shown = shown[:_MAX_SHOWN] + "...'"
    raise InvalidInputError(
        f"invalid {field} {shown}: use 2-63 lower-case letters, digits and hyphens, "
        f"starting with a letter or digit (pattern {SPOKE_NAME_PATTERN}); paths are not accepted"
    )


def spoke_file(name: str) -> str:
    """The repository path of a (checked) spoke name."""
    return f"{SPOKES_DIR}/{check_spoke_name(name)}.json"


def branch_slug(title: str, *, max_length: int = 40) -> str:
    """A branch-safe slug of a PR title: ``"Add Spoke: CRM (prod)"`` -> ``"add-spoke-crm-prod"``."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    slug = slug[:max_length].rstrip("-")
    return slug or "change"
