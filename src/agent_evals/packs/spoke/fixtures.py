"""The spoke pack's case fixtures: pull requests and spokes a case relies on, made through the portal.

```yaml
vars:
  fixtures:
    - pull_request:
        key: failing                 # refer to it as $fixture.failing.url (or .id, .status, …)
        copy: crm-dev-neu            # a spoke on main to start from
        name: crm2-dev-neu           # the spoke the pull request adds (default: the copy's name)
        address_space: 10.20.40.0/22 # move the copy there: every address inside its range moves along
        changes: {/tags/owner: crm-new@contoso.com}   # JSON pointer -> value, applied last
        title: Add spoke crm2-dev-neu               # default "Add spoke <name>"
        state: active                # or abandoned
        validation: failed           # what the gate must answer: succeeded or failed (checked)
        errors: [address-overlap]    # rules the failed gate must report (checked)
    - spoke:                         # a spoke on main while the case runs
        key: extra
        copy: payments-dev-weu
        name: ledger-dev-weu
        changes: {/tags/owner: ledger-team@contoso.com}
```

A fixture the portal rejects, or whose gate does not answer what the case states, is an error
of kind ``config`` before the conversation. The portal records fixtures with the case's eval
and test ids (fixture pull requests with ``created_by: fixture``), so the provider's cleanup,
the cleanup hook and the run's sweep remove them like the agent's own pull requests.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal
import ipaddress

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent_evals.authoring import FixtureError
from agent_evals.packs.spoke.golden import apply_changes
from agent_evals.packs.spoke.portal.api import PortalError, PortalNotFound, PortalUnavailable
from agent_evals.packs.spoke.scripts import relocate

KINDS = ("pull_request", "spoke")
_POINTER = re.compile(r"^(/[^/]*)+$")
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class _Base(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str | None = None
    copy_: str = Field(alias="copy")
    name: str | None = None
    address_space: str | None = None
    changes: dict[str, Any] = Field(default_factory=dict)

    @field_validator("address_space")
    @classmethod
    def _network(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                ipaddress.ip_network(value)
            except ValueError:
                raise ValueError(f"address_space {value!r} is not a network like 10.20.40.0/22") from None
        return value

    @field_validator("changes")
    @classmethod
    def _pointers(cls, changes: dict[str, Any]) -> dict[str, Any]:
        bad = [p for p in changes if not _POINTER.match(p)]
        if bad:
            raise ValueError(f"changes keys are JSON pointers like /tags/owner, got {', '.join(map(repr, bad))}")
        return changes

    @field_validator("key")
    @classmethod
    def _key(cls, key: str | None) -> str | None:
        if key is not None and not _KEY.match(key):
            raise ValueError(f"key {key!r} must be a word (letters, digits, _), e.g. failing_pr")
        return key


class PullRequestFixture(_Base):
    title: str | None = None
    description: str = "A pull request the test case relies on."
    state: Literal["active", "abandoned"] = "active"
    validation: Literal["succeeded", "failed"] | None = None
    errors: list[str] = Field(default_factory=list)


class SpokeFixture(_Base):
    pass


Fixture = PullRequestFixture | SpokeFixture


def parse_fixtures(raw: Any) -> list[Fixture]:
    """The case's fixtures; a :class:`FixtureError` names the first malformed one."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise FixtureError(f"vars.fixtures must be a list of {{pull_request: …}} or {{spoke: …}}, got {type(raw).__name__}")
    out: list[Fixture] = []
    keys: set[str] = set()
    for number, item in enumerate(raw, start=1):
        if not isinstance(item, Mapping) or len(item) != 1 or next(iter(item)) not in KINDS:
            raise FixtureError(f"fixture {number}: one of {', '.join(f'{{{k}: …}}' for k in KINDS)}, got {item!r:.80}")
        (kind, spec), = item.items()
        model = PullRequestFixture if kind == "pull_request" else SpokeFixture
        try:
            fixture = model.model_validate(spec or {})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "its settings"
            raise FixtureError(f"fixture {number} ({kind}): {where}: {first['msg']}") from None
        if isinstance(fixture, PullRequestFixture) and fixture.errors and fixture.validation != "failed":
            raise FixtureError(f"fixture {number} (pull_request): errors need validation: failed")
        if fixture.key is not None:
            if fixture.key in keys:
                raise FixtureError(f"fixture {number}: key {fixture.key!r} is used twice")
            keys.add(fixture.key)
        out.append(fixture)
    return out


def create(api: Any, fixtures: list[Fixture], trace: Mapping[str, str]) -> list[dict[str, Any]]:
    """Make each fixture through the portal, in order; answers the run record's ``fixtures``.

    Raises :class:`FixtureError` when the portal rejects one (its answer says why) or its gate
    does not answer what the case states; a portal that does not answer is a ``system`` error.
    """
    made: list[dict[str, Any]] = []
    for number, fixture in enumerate(fixtures, start=1):
        label = f"fixture {number}" + (f" ({fixture.key})" if fixture.key else "")
        try:
            source = api.get_spoke(fixture.copy_)["config"]
        except PortalNotFound:
            raise FixtureError(f"{label}: copy {fixture.copy_!r} is not a spoke on main") from None
        name = fixture.name or fixture.copy_
        if fixture.address_space is not None:
            source = relocate(source, name, fixture.address_space)
        config = apply_changes(source, {"/name": name, **fixture.changes} if fixture.name else fixture.changes)
        try:
            if isinstance(fixture, PullRequestFixture):
                pr = api.create_fixture_pull_request(
                    {"spoke_name": name, "config": config, "title": fixture.title or f"Add spoke {name}",
                     "description": fixture.description, "source_spoke": fixture.copy_, "status": fixture.state},
                    trace,
                )
                _check_gate(label, fixture, pr)
                made.append({
                    "kind": "pull_request", "key": fixture.key, "id": pr["id"], "url": pr["url"],
                    "status": pr["status"], "spoke_name": name, "validation_status": pr["validation_status"],
                    "validation_errors": [e.get("rule") for e in pr.get("validation_errors") or []],
                })
            else:
                api.create_fixture_spoke(name, config, trace)
                made.append({"kind": "spoke", "key": fixture.key, "name": name})
        except PortalUnavailable:
            raise
        except PortalError as exc:
            if exc.status is None or exc.status >= 500:
                raise
            raise FixtureError(f"{label}: the portal rejected it: {exc}") from None
    return made


def _check_gate(label: str, fixture: PullRequestFixture, pr: Mapping[str, Any]) -> None:
    status = pr.get("validation_status")
    if fixture.validation is not None and status != fixture.validation:
        shown = "; ".join(f"{e.get('path')}: {e.get('message')}" for e in pr.get("validation_errors") or [])
        raise FixtureError(
            f"{label}: the validation gate answered {status}, the case expects {fixture.validation}"
            + (f" ({shown})" if shown else "")
        )
    rules = {e.get("rule") for e in pr.get("validation_errors") or []}
    missing = [rule for rule in fixture.errors if rule not in rules]
    if missing:
        raise FixtureError(
            f"{label}: the gate did not report {', '.join(missing)} (it reported {', '.join(sorted(map(str, rules))) or 'none'})"
        )
