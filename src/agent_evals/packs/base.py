"""A domain pack: what the generic core needs to know about one agent's domain.

The core (driver, users, record, record/replay, provider, runner, report and the generic
assertions) knows no domain. A suite names its pack (provider config ``pack:``); the pack
says which tool calls create pull requests, how the simulated user is framed, and (see
``docs/architecture.md``) which end state the assertions read and which checks it adds.
:class:`GenericPack` is the pack of an agent with no side effects the kit must track.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agent_evals.record import PullRequestRef, ToolCall

if TYPE_CHECKING:
    from agent_evals.assertions.registry import CheckRef
    from agent_evals.portal_api import PortalAPI


@runtime_checkable
class Pack(Protocol):
    name: str

    def find_pull_request(self, call: ToolCall) -> PullRequestRef | None:
        """The pull request a successful tool call created, or None."""
        ...

    def snapshot_resources(self, api: PortalAPI, checks: Sequence[CheckRef]) -> dict[str, Any]:
        """What the case's checks will read from the end state, keyed by name (the snapshot's ``resources``)."""
        ...

    def preflight(self, check: str, config: Any) -> list[str]:
        """Problems with a check's parsed config that only the domain can see (e.g. an unknown source)."""
        ...


class GenericPack:
    name = "generic"

    def find_pull_request(self, call: ToolCall) -> PullRequestRef | None:
        return None

    def snapshot_resources(self, api: PortalAPI, checks: Sequence[CheckRef]) -> dict[str, Any]:
        return {}

    def preflight(self, check: str, config: Any) -> list[str]:
        return []
