"""``pull_request``: the primary pass condition, a PR was (or was not) created and reported.

Config: ``expect`` (``created`` default, or ``none`` for blocked cases), ``tool``
(the PR-creating tool, default ``create_spoke_pull_request``), ``created_in_conversation``
(default true: a reported PR must be one this conversation created, the record's ``side_effects`` of
kind ``pull_request``).

* ``created``: the agent's replies contain ``{portal}/repos/spokes/pullrequest/{id}``
  for a PR that existed and was ``active`` when the conversation ended (the end-state
  snapshot); a reported PR URL that does not exist, is not active, belongs to another
  host ("not this portal"), or (with ``created_in_conversation``) was not created in
  this conversation fails the case.
* ``none``: no PR URL in the replies, no ``pull_request`` side effect in the record, and no
  successful call of ``tool``.

Everything is read from the metadata; no portal is needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from agent_evals.authoring import (
    ConfigReader,
    GradingResult,
    RunRecord,
    Snapshot,
    grader,
    make_result,
    name_matches,
    read_record,
    require_snapshot,
)
from agent_evals.packs.spoke.checks.submission import DEFAULT_TOOL
from agent_evals.packs.spoke.created_prs import created_pull_requests, snapshot_pull_request

VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)

NAME = "pull_request"
Expect = Literal["created", "none"]
EXPECTS: tuple[Expect, ...] = get_args(Expect)


@dataclass(frozen=True)
class PullRequestConfig:
    expect: Expect = "created"
    tool: str = DEFAULT_TOOL
    created_in_conversation: bool = True


def parse_config(raw: Any) -> PullRequestConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("expect", "tool", "created_in_conversation"))
    return PullRequestConfig(
        expect=reader.choice("expect", EXPECTS, "created"),
        tool=reader.string("tool", DEFAULT_TOOL, what="a tool name or glob"),
        created_in_conversation=reader.boolean("created_in_conversation", True),
    )


@grader(NAME)
def grade(config: Any, metadata: Any) -> GradingResult:
    """Grade the PR outcome of the conversation in ``metadata``."""
    cfg = parse_config(config)
    run = read_record(metadata)
    if cfg.expect == "none":
        return _expect_none(run, cfg)
    return _expect_created(run, cfg, require_snapshot(run))


def _links(run: RunRecord) -> list[tuple[str, int]]:
    from agent_evals.packs.spoke.portal.api import find_pull_request_links  # lazy: keeps agent_evals.packs.spoke.checks.pull_request's start-up as small as it is

    seen: dict[str, int] = {}
    for text in run.assistant_texts():
        for url, pr_id in find_pull_request_links(text):
            seen.setdefault(url, pr_id)
    return list(seen.items())


def _expect_none(run: RunRecord, cfg: PullRequestConfig) -> GradingResult:
    problems = []
    links = _links(run)
    if links:
        problems.append("PR URL(s) in the agent's replies: " + ", ".join(url for url, _ in links))
    if created := created_pull_requests(run):
        problems.append("PR(s) created in the conversation: " + ", ".join(str(p.id) for p in created))
    made = [call for call in run.tool_calls if name_matches(call.name, cfg.tool) and not call.is_error]
    if made:
        problems.append(f"{cfg.tool} succeeded at " + ", ".join(call.where() for call in made))
    if problems:
        return make_result(False, f"{NAME}: expected no pull request, but " + "; ".join(problems))
    tried = sum(1 for call in run.tool_calls if name_matches(call.name, cfg.tool))
    note = f" ({cfg.tool} was attempted {tried} time(s) and errored)" if tried else ""
    return make_result(True, f"{NAME}: no pull request created or reported, as expected{note}")


def _expect_created(run: RunRecord, cfg: PullRequestConfig, snapshot: Snapshot) -> GradingResult:
    from agent_evals.packs.spoke.portal.api import is_portal_pull_request_url, pull_request_url  # lazy: keeps agent_evals.packs.spoke.checks.pull_request's start-up as small as it is

    base_url = snapshot.read_from  # the portal's URL
    links = _links(run)
    ours = list(dict.fromkeys(pr_id for url, pr_id in links if is_portal_pull_request_url(url, base_url)))
    foreign = [url for url, _ in links if not is_portal_pull_request_url(url, base_url)]
    created_ids = [p.id for p in created_pull_requests(run)]
    created = ", ".join(map(str, created_ids)) or "none"
    problems = [f"{url} is not this portal ({base_url})" for url in foreign]
    good = []
    for pr_id in ours:
        pr = snapshot_pull_request(snapshot, pr_id)
        if pr is None:
            problems.append(f"PR {pr_id} is reported but does not exist")
            continue
        status = pr.get("status")
        if status != "active":
            problems.append(f"PR {pr_id} is {status}, not active")
        elif cfg.created_in_conversation and pr_id not in created_ids:
            problems.append(f"PR {pr_id} was not created in this conversation (created: {created})")
        else:
            good.append(pr_id)
    if not ours:
        pattern = pull_request_url(base_url, 0)[:-1] + "<id>"
        problems.insert(0, f"no URL of a PR of this portal ({pattern}) in the agent's replies")
    if problems or not good:
        return make_result(
            False, f"{NAME}: " + "; ".join(problems) + f" (PRs created in the conversation: {created})"
        )
    urls = ", ".join(pull_request_url(base_url, pr_id) for pr_id in good)
    return make_result(True, f"{NAME}: the agent reported {urls}, an active PR of this portal")
