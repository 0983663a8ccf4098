"""The end state a conversation left, read from the portal for grading (:class:`~agent_evals.record.Snapshot`).

When a conversation ends, the provider reads every pull request it created or linked in
its replies (status, validation, diff…) and the resources the case's checks name (the
domain pack decides which: for spokes, each ``input_diff`` source and the schema). The
assertions then read the metadata only; a snapshot that cannot be taken makes the row an
error of kind ``portal``, never a failure of the agent.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_evals.assertions.registry import CheckRef
from agent_evals.packs import Pack
from agent_evals.portal_api import PortalAPI, PortalNotFound, find_pull_request_urls
from agent_evals.record import RunRecord, Snapshot


def take_snapshot(record: RunRecord, pack: Pack, checks: Sequence[CheckRef], api: PortalAPI) -> Snapshot:
    """Raises ``PortalError`` (kind ``portal``) when the portal cannot be read."""
    ids = [p.id for p in record.pull_requests]
    for text in record.assistant_texts():
        ids.extend(find_pull_request_urls(text, api.base_url))
    pull_requests = []
    for pr_id in dict.fromkeys(ids):
        try:
            pull_requests.append(dict(api.get_pull_request(pr_id)))
        except PortalNotFound:
            continue  # reported but not there: the assertions say so
    resources = pack.snapshot_resources(api, checks)
    return Snapshot(api.base_url, tuple(pull_requests), resources)
