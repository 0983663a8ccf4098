"""The pull request lifecycle over MCP and REST, checked against the real git repository."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from agent_evals.packs.spoke.portal.process import PortalProcess

from .helpers import Mcp, git, new_spoke

TRACE = {"X-Eval-Id": "eval-42", "X-Test-Id": "case-7", "X-Created-By": "agent:spoke-assistant"}


def create(
    mcp: Mcp,
    config: dict[str, Any],
    *,
    spoke_name: str | None = None,
    title: str = "Add spoke",
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    arguments = {
        "spoke_name": spoke_name or config["name"],
        "config": config,
        "title": title,
        "description": "Requested by the billing team",
        **extra,
    }
    return mcp.ok("create_spoke_pull_request", arguments, headers=headers)


def test_create_records_validation_headers_and_a_real_branch(mcp: Mcp, portal: PortalProcess) -> None:
    config = new_spoke("billing-dev-weu")
    pr = create(
        mcp, config, title="Add spoke billing-dev-weu", headers=TRACE, source_spoke="payments-dev-weu"
    )
    assert {
        k: pr[k]
        for k in (
            "title",
            "spoke_name",
            "file",
            "target_branch",
            "status",
            "created_by",
            "eval_id",
            "test_id",
            "validation_status",
            "validation_errors",
        )
    } == {
        "title": "Add spoke billing-dev-weu",
        "spoke_name": "billing-dev-weu",
        "file": "spokes/billing-dev-weu.json",
        "target_branch": "main",
        "status": "active",
        "created_by": "agent:spoke-assistant",
        "eval_id": "eval-42",
        "test_id": "case-7",
        "validation_status": "succeeded",
        "validation_errors": [],
    }
    assert pr["url"] == f"{portal.url}/repos/spokes/pullrequest/{pr['id']}"
    assert pr["source_branch"] == f"pr/{pr['id']}-add-spoke-billing-dev-weu"
    data = portal.data_dir
    assert git(data, "rev-parse", f"{pr['source_branch']}^") == git(data, "rev-parse", "main")
    assert json.loads(git(data, "show", f"{pr['source_branch']}:spokes/billing-dev-weu.json")) == config
    message = git(data, "log", "-1", "--format=%an%n%B", pr["source_branch"])
    assert message.startswith(
        "agent:spoke-assistant\nAdd spoke billing-dev-weu\n\nRequested by the billing team"
    )
    assert "Source-Spoke: payments-dev-weu" in message and "Eval-Id: eval-42" in message


def test_created_by_defaults_to_portal_user(mcp: Mcp) -> None:
    pr = create(mcp, new_spoke("ledger-dev-weu", "10.81.0.0/22"))
    assert (pr["created_by"], pr["eval_id"], pr["test_id"]) == ("portal-user", None, None)


def test_get_and_list(mcp: Mcp, rest: httpx.Client) -> None:
    pr = create(mcp, new_spoke("audit-dev-weu", "10.82.0.0/22"), headers={"X-Eval-Id": "eval-list"})
    got = mcp.ok("get_pull_request", {"id": pr["id"]})
    assert {**got, "diff": None} == pr
    assert '+  "name": "audit-dev-weu",' in got["diff"]
    assert got["diff"].startswith("diff --git a/spokes/audit-dev-weu.json b/spokes/audit-dev-weu.json")
    listed = mcp.ok("list_pull_requests", {"status": "active"})["pull_requests"]
    assert listed[0]["id"] == pr["id"]  # newest first
    assert [p["id"] for p in listed] == sorted((p["id"] for p in listed), reverse=True)
    assert rest.get(f"/api/pull-requests/{pr['id']}").json() == got
    by_eval = rest.get("/api/pull-requests", params={"eval_id": "eval-list"}).json()["pull_requests"]
    assert by_eval == [{k: v for k, v in pr.items() if k != "diff"}]
    assert rest.get("/api/pull-requests", params={"test_id": "nope"}).json() == {"pull_requests": []}
    empty_filters = rest.get("/api/pull-requests?status=&eval_id=&test_id=")
    assert empty_filters.json() == rest.get("/api/pull-requests").json()


def test_abandon_twice_answers_the_same_and_deletes_the_branch(
    mcp: Mcp, rest: httpx.Client, portal: PortalProcess
) -> None:
    pr = create(mcp, new_spoke("scratch-dev-weu", "10.83.0.0/22"))
    first = rest.post(f"/api/pull-requests/{pr['id']}/abandon")
    second = rest.post(f"/api/pull-requests/{pr['id']}/abandon")
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert first.json()["status"] == "abandoned"
    assert pr["source_branch"] not in git(portal.data_dir, "branch", "--list", "pr/*")
    assert "is abandoned; it cannot be completed" in mcp.error("complete_pull_request", {"id": pr["id"]})
    assert rest.get(f"/api/pull-requests/{pr['id']}").json()["diff"]  # the commit is kept for the record


def test_complete_merges_into_main(mcp: Mcp, rest: httpx.Client, portal: PortalProcess) -> None:
    config = new_spoke("merge-dev-weu", "10.84.0.0/22")
    pr = create(mcp, config)
    done = mcp.ok("complete_pull_request", {"id": pr["id"]})
    assert done["status"] == "completed"
    assert mcp.ok("get_spoke", {"name": "merge-dev-weu"})["config"] == config
    assert json.loads(git(portal.data_dir, "show", "main:spokes/merge-dev-weu.json")) == config
    assert pr["source_branch"] not in git(portal.data_dir, "branch", "--list", "pr/*")
    assert mcp.ok("complete_pull_request", {"id": pr["id"]}) == done  # idempotent
    conflict = rest.post(f"/api/pull-requests/{pr['id']}/abandon")
    assert conflict.status_code == 409
    assert conflict.json() == {
        "error": f"pull request {pr['id']} is completed (merged into main); it can no longer be abandoned"
    }


def test_failed_gate_is_recorded_and_blocks_completion(mcp: Mcp) -> None:
    config = new_spoke("broken-dev-weu", "10.10.24.0/22")  # payments-dev-weu's range
    pr = create(mcp, config)
    assert pr["validation_status"] == "failed"
    assert pr["validation_errors"] == [
        {
            "path": "/addressSpace/0",
            "rule": "address-space-overlap-spoke",
            "message": "10.10.24.0/22 overlaps spoke 'payments-dev-weu' (10.10.24.0/22) on main; "
            "choose a free range",
        }
    ]
    assert mcp.error("complete_pull_request", {"id": pr["id"]}) == (
        f"Error executing tool complete_pull_request: pull request {pr['id']} failed the validation gate "
        "(1 error(s)) and cannot be completed; fix the configuration in a new pull request"
    )
    assert mcp.ok("get_pull_request", {"id": pr["id"]})["status"] == "active"


def test_change_an_existing_spoke(mcp: Mcp, seeds: dict[str, Any]) -> None:
    config = json.loads(json.dumps(seeds["crm-test-neu"]))
    config["tags"]["owner"] = "crm-platform@contoso.com"
    pr = create(mcp, config, title="Change owner of crm-test-neu")
    assert pr["validation_status"] == "succeeded"
    diff = mcp.ok("get_pull_request", {"id": pr["id"]})["diff"]
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ['-    "owner": "crm-team@contoso.com",', '+    "owner": "crm-platform@contoso.com",']


def test_an_unchanged_spoke_is_not_a_pull_request(mcp: Mcp, seeds: dict[str, Any]) -> None:
    message = mcp.error(
        "create_spoke_pull_request",
        {"spoke_name": "crm-dev-neu", "config": seeds["crm-dev-neu"], "title": "t", "description": "d"},
    )
    assert message.endswith(
        "nothing to change: the configuration equals spokes/crm-dev-neu.json on main; "
        "edit it before opening a pull request"
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"source_spoke": "nope-dev-weu"}, "unknown spoke 'nope-dev-weu'"),
        ({"source_spoke": "../x"}, "invalid spoke name '../x'"),
        ({"title": "   "}, "the title must be 1-200 characters"),
    ],
)
def test_create_rejects_bad_arguments(mcp: Mcp, arguments: dict[str, Any], message: str) -> None:
    before = len(mcp.ok("list_pull_requests")["pull_requests"])
    base = {
        "spoke_name": "reject-dev-weu",
        "config": new_spoke("reject-dev-weu", "10.85.0.0/22"),
        "title": "t",
        "description": "d",
    }
    assert message in mcp.error("create_spoke_pull_request", {**base, **arguments})
    assert len(mcp.ok("list_pull_requests")["pull_requests"]) == before


def test_html_page_escapes_everything(mcp: Mcp, rest: httpx.Client) -> None:
    config = new_spoke("html-dev-weu", "10.86.0.0/22", location="mars")
    config["tags"]["application"] = "<img src=x onerror=alert(1)>"
    pr = create(mcp, config, title="<script>alert('t')</script>", description="a & b <b>bold</b>")
    page = rest.get(f"/repos/spokes/pullrequest/{pr['id']}")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    assert "<script>" not in html and "<b>" not in html and "<img" not in html
    assert "&lt;script&gt;alert(&#x27;t&#x27;)&lt;/script&gt;" in html
    assert "a &amp; b &lt;b&gt;bold&lt;/b&gt;" in html
    assert "location &#x27;mars&#x27; is not an allowed region" in html and "failed" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html  # in the diff
    missing = rest.get("/repos/spokes/pullrequest/9999")
    assert missing.status_code == 404 and "unknown pull request 9999" in missing.text


def test_rest_api(rest: httpx.Client, seeds: dict[str, Any]) -> None:
    listed = {spoke["name"] for spoke in rest.get("/api/spokes").json()["spokes"]}
    # the seeds, and the spoke test_complete_merges_into_main merged when it ran first
    assert set(seeds) <= listed <= set(seeds) | {"merge-dev-weu"}
    assert rest.get("/api/health").json() == {"status": "ok", "spokes": len(listed)}
    assert rest.get("/api/spokes/crm-dev-neu").json() == {
        "name": "crm-dev-neu",
        "file": "spokes/crm-dev-neu.json",
        "config": seeds["crm-dev-neu"],
    }
    schema = rest.get("/api/schema").json()
    assert set(schema) == {"schema", "additional_schema", "file_name_rules"}
    for path, status, error in [
        ("/api/spokes/nope-dev-weu", 404, "unknown spoke 'nope-dev-weu'"),
        ("/api/spokes/%2E%2E", 400, "invalid spoke name '..'"),
        ("/api/spokes/A%00B", 400, "invalid spoke name 'A\\x00B'"),
        ("/api/pull-requests/9999", 404, "unknown pull request 9999"),
        (
            "/api/pull-requests?status=merged",
            400,
            "unknown status 'merged'; allowed: active, abandoned, completed",
        ),
        ("/api/spokes?environment=qa", 400, "unknown environment 'qa'; allowed: dev, test, prod"),
    ]:
        response = rest.get(path)
        assert response.status_code == status, path
        assert error in response.json()["error"], path
    assert rest.post("/api/pull-requests/9999/abandon").status_code == 404
    assert rest.get("/api/spokes/..%2Fhub").status_code == 404  # a decoded slash matches no route at all
