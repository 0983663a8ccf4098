"""The end state a conversation left, read from the portal for grading (:class:`~agent_evals.record.Snapshot`):
the spoke system's snapshot.

When a conversation ends, the provider reads every pull request it created or linked in
its replies (status, validation, diff…: the resource ``pull_requests``, read back with
:func:`~.created_prs.snapshot_pull_requests`) and the resources the case's checks name (the
portal's schema, each source spoke an ``input_diff`` check compares with). The snapshot is
read from the portal's URL (a reported PR link must be on it). The assertions then read the
metadata only; a snapshot that cannot be taken makes the row an error of kind
``system``, never a failure of the agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_evals.authoring import CheckRef, RunRecord, Snapshot
from agent_evals.packs.spoke.portal.api import (
    FIXTURE_CREATED_BY,
    PortalAPI,
    PortalNotFound,
    find_pull_request_urls,
    is_portal_pull_request_url,
)
from agent_evals.packs.spoke.created_prs import (
    PULL_REQUESTS_RESOURCE,
    created_pull_requests,
    pull_request,
    snapshot_pull_requests,
)
from agent_evals.packs.spoke.checks.input_diff import spoke_resource
from agent_evals.packs.spoke.checks.spoke_json_valid import SCHEMA_RESOURCE


def take_snapshot(
    record: RunRecord, checks: Sequence[CheckRef], api: PortalAPI, *, test_id: str | None = None,
    any_host: bool = False,
) -> Snapshot:
    """Raises ``PortalError`` (kind ``system``) when the portal cannot be read.

    With ``test_id``, the pull requests the portal recorded with it (the ones this conversation
    created, whatever tool made them) are added to the record first: one request for all of them.
    With ``any_host`` (a production conversation, whose links name the portal's public address), every
    pull request the record names is read by its id.
    """
    found: dict[int, dict] = {}
    if test_id:
        for pr in reversed(api.list_pull_requests(test_id=test_id, with_diff=True)):  # oldest first
            if pr.get("created_by") != FIXTURE_CREATED_BY:  # the case's fixtures are not the agent's doing
                record.add_side_effect(pull_request(pr["id"], pr.get("url", "")))
            found[pr["id"]] = dict(pr)
    # only this portal's pull requests: a pack may track side effects elsewhere (a ticket on
    # another host) whose ids mean nothing here
    ids = [p.id for p in created_pull_requests(record)
           if any_host or not p.url or is_portal_pull_request_url(p.url, api.base_url)]
    for text in record.assistant_texts():
        ids.extend(find_pull_request_urls(text, api.base_url))
    for pr_id in dict.fromkeys(ids):
        if pr_id in found:
            continue
        try:
            found[pr_id] = dict(api.get_pull_request(pr_id))
        except PortalNotFound:
            continue  # reported but not there: the assertions say so
    prs = [found[i] for i in dict.fromkeys(ids) if i in found]
    return Snapshot(api.base_url, {PULL_REQUESTS_RESOURCE: prs, **snapshot_resources(api, checks)})


def snapshot_resources(api: PortalAPI, checks: Sequence[CheckRef]) -> dict[str, Any]:
    """The portal's schema, and each source spoke the ``input_diff`` checks name (None if it does not exist)."""
    resources: dict[str, Any] = {SCHEMA_RESOURCE: _schema(api)}
    for check in checks:
        config = check.config if isinstance(check.config, dict) else {}
        source = config.get("source") if check.name == "input_diff" else None
        if isinstance(source, str) and spoke_resource(source) not in resources:
            try:
                resources[spoke_resource(source)] = api.get_spoke(source)
            except PortalNotFound:
                resources[spoke_resource(source)] = None
    return resources


_SCHEMAS: dict[str, Any] = {}


def _schema(api: PortalAPI) -> Any:
    """The portal's schema, read once per portal per worker: it is fixed while a portal runs
    (its settings file is read at start)."""
    if api.base_url not in _SCHEMAS:
        _SCHEMAS[api.base_url] = api.get_schema()
    return _SCHEMAS[api.base_url]


def taken_away(record: RunRecord, snapshot: Snapshot) -> str | None:
    """Why the row cannot be graded when a pull request the conversation created was abandoned before
    its end state was read: the agent cannot abandon one (no tool does), and the kit's own cleanup
    comes after grading, so someone else did, e.g. a cleanup while the run was going."""
    gone = [pr["id"] for pr in snapshot_pull_requests(snapshot)
            if pr.get("status") == "abandoned" and any(p.id == pr.get("id") for p in created_pull_requests(record))]
    if not gone:
        return None
    shown = ", ".join(f"#{i}" for i in gone)
    return (f"pull request(s) {shown}, created in this conversation, were abandoned before it was graded, not by "
            "the agent: something else cleaned them up while the run was going (`npm run cleanup`, or another "
            "run's sweep); the row cannot be graded")
