"""Every assertion through real ``npx promptfoo eval`` on a fixed provider output, with a stub portal.

The fixed provider returns a v2 run record whose end-state snapshot it reads from the stub
portal (as the real provider does); the assertions grade the metadata only. The ``good``
case must pass every assertion and the ``bad`` case fail every one (plus a malformed
config); the test reads the ``-o`` JSON and checks each result, a reason and the named scores.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agent_evals.runner.promptfoo_process import promptfoo_env

from ._assertion_support import StubPortal, stub_portal

ROOT = Path(__file__).resolve().parents[2]
CONFIG = Path(__file__).parent / "promptfoo" / "promptfooconfig.yaml"
PROMPTFOO = ROOT / "node_modules" / ".bin" / "promptfoo"
SOURCE = {"name": "billing", "settings": {"retries": 3, "timeout": 10}, "tags": ["a"]}
SCHEMA = {"type": "object", "properties": {"settings": {"properties": {"retries": {"type": "integer"}}}}}

pytestmark = pytest.mark.skipif(
    not PROMPTFOO.exists() or not shutil.which("npx"), reason="promptfoo is not installed"
)


def _serve(stub: StubPortal) -> None:
    stub.route(
        "GET",
        "/api/spokes/billing",
        200,
        {"name": "billing", "file": "spokes/billing.json", "config": SOURCE},
    )
    stub.route(
        "GET", "/api/schema", 200, {"schema": SCHEMA, "additional_schema": None, "file_name_rules": None}
    )
    stub.add_pull_request(1)
    stub.add_pull_request(
        2,
        status="abandoned",
        validation_status="failed",
        validation_errors=[{"path": "/settings/retries", "message": "not an integer", "rule": "schema"}],
    )


def _eval(tmp_path: Path, stub: StubPortal) -> dict:
    out = tmp_path / "out.json"
    env = promptfoo_env(
        {**os.environ, "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo"), "PORTAL_URL": stub.url,
         "PORTAL_TOKEN": stub.token or ""}
    )
    done = subprocess.run(
        ["npx", "promptfoo", "eval", "-c", str(CONFIG), "-o", str(out), "--no-cache", "-j", "2"],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 100, done.stdout[-3000:] + done.stderr[-3000:]  # 100: some case failed
    return json.loads(out.read_text())


def test_assertions_in_promptfoo(tmp_path: Path) -> None:
    with stub_portal(token="e2e-token-xyz") as stub:
        _serve(stub)
        data = _eval(tmp_path, stub)
        read = sorted({(r["method"], r["path"]) for r in stub.requests})
    # the provider read the end state (once per row); the assertion processes never called the portal
    assert read == [
        ("GET", "/api/pull-requests/1"),
        ("GET", "/api/pull-requests/2"),
        ("GET", "/api/schema"),
        ("GET", "/api/spokes/billing"),
    ]
    assert len(stub.requests) == 6
    rows = {row["testCase"]["description"]: row for row in data["results"]["results"]}
    assert set(rows) == {"good", "bad"}
    good = [
        (c["assertion"]["metric"], c["pass"], c["reason"])
        for c in rows["good"]["gradingResult"]["componentResults"]
    ]
    bad = [
        (c["assertion"]["metric"], c["pass"], c["reason"])
        for c in rows["bad"]["gradingResult"]["componentResults"]
    ]
    assert [(metric, passed) for metric, passed, _ in good if not passed] == [], good
    assert rows["good"]["success"] is True
    assert [(metric, passed) for metric, passed, _ in bad if passed] == [], bad
    assert len(good) == 8 and len(bad) == 9
    reasons = {metric: reason for metric, _, reason in bad}
    assert reasons["tool_sequence"].startswith(
        "tool_sequence in_order: expected get_spoke → create_spoke_pull_request; "
        "actual create_spoke_pull_request, get_spoke, delete_spoke; "
        "missing create_spoke_pull_request after get_spoke (position 2"
    )
    assert reasons["tool_not_executed"].startswith(
        "tool_not_executed: forbidden tool called: delete_spoke (matches delete_*) "
        "in turn 3 (call 3, it returned an error)"
    )
    assert (
        '/config/settings/retries: expected 5, got "5"' in reasons["argument_match"]
    )  # YAML 5.0 arrives as 5
    assert "source: spoke 'billing' from the portal" in reasons["input_diff"]
    assert '+ /tags/1: "b"' in reasons["input_diff"]
    assert "/settings/retries: '5' is not of type 'integer' (schema)" in reasons["spoke_json_valid"]
    assert "PR 2 validation failed" in reasons["spoke_json_valid"]
    assert reasons["pull_request"].startswith("pull_request: no URL of a PR of this portal")
    assert reasons["function_call_metrics"].startswith(
        "function_call_metrics: reliability 0.75 < threshold 1.00"
    )
    assert reasons["conversation"].startswith("conversation: ended 'gave_up', allowed: done")
    assert reasons["malformed"] == (
        'tool_sequence: invalid config: config.mode is "loose", which is not allowed; '
        "allowed: strict, in_order, unordered, superset, subset"
    )
    named = rows["good"]["namedScores"]
    assert (
        named["expected_changes_made"] == 1
        and named["no_collateral_changes"] == 1
        and named["schema_valid"] == 1
        and named["reliability"] == 1
        and named["convergence"] == pytest.approx(2 / 3)
    )
    named = rows["bad"]["namedScores"]
    assert named["no_collateral_changes"] == 0 and named["schema_valid"] == 0 and named["reliability"] == 0.75
    metadata = rows["good"]["response"]["metadata"]
    assert metadata["agent_evals"] == 3 and metadata["snapshot"]["read_from"] == stub.url
    assert "e2e-token-xyz" not in json.dumps(data["results"]["results"][0]["gradingResult"])
