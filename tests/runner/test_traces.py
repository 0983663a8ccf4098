"""Traces: the provider's spans feed Promptfoo's own trajectory assertions, which agree with the
kit's checks on the golden conversations and on broken copies of them."""

from __future__ import annotations

import json
import re
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_evals.conversation.cassette import load_cassette, save_cassette
from agent_evals.golden.selfcheck import edit_tool_arguments, exceed_step_budget, forbidden_tool, swap_tools
from agent_evals.packs.spoke.golden import PR_TOOL
from agent_evals.runner.run import run
from agent_evals.suites.discovery import select
from agent_evals.runner.trace_port import Receiver, own_receiver, stale_copies, trace_receiver
from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)
OVERLAY = select("spoke-create-overlay")[0]
PAIRS = {  # the kit's check ↔ Promptfoo's trajectory assertion on the same thing
    "forbidden_tools": "native_forbidden_tools",
    "tool_sequence": "native_tool_sequence",
    "argument_match": "native_argument_match",
    "used_schema": "native_used_schema",
}


def _verdicts(path: Path) -> dict[str, dict[str, bool]]:
    out = {}
    for row in json.loads(path.read_text())["results"]["results"]:
        metrics = {}
        for component in row["gradingResult"]["componentResults"]:
            metric = component["assertion"].get("metric")
            if metric:
                metrics[metric] = metrics.get(metric, True) and component["pass"]
        out[row["testCase"]["metadata"]["id"]] = metrics
    return out


def _agree(verdicts: dict[str, bool]) -> None:
    for kit, native in PAIRS.items():
        if kit in verdicts:
            assert verdicts[kit] == verdicts[native], (kit, verdicts)


def _replay(folder: Path, out: Path) -> dict[str, dict[str, bool]]:
    replay = "golden" if str(folder) == "golden" else str(folder)
    code = run("spoke-create-overlay", replay, None, ["-o", str(out), "--no-cache"])
    assert code in (0, 100)
    return _verdicts(out)


def _mutated(tmp: Path, changes: dict[str, Any]) -> Path:
    folder = tmp / "cassettes"
    (folder / OVERLAY.name).mkdir(parents=True)
    for path in (OVERLAY.folder / "golden").glob("*.json"):
        shutil.copy(path, folder / OVERLAY.name / path.name)
    for case_id, mutate in changes.items():
        cassette = mutate(load_cassette(OVERLAY.folder / "golden" / f"{case_id}.json"))
        save_cassette(cassette, folder / OVERLAY.name / f"{case_id}.json")
    return folder


def test_native_and_kit_checks_agree_on_the_golden_conversations(isolated: Path) -> None:
    """One replay, with Promptfoo's default port taken (the runner gives the suite's receiver another):
    O02 and O03 as recorded pass everything, native included; O01 with two tools swapped fails the order
    on both sides. (Each replay of the suite costs seconds of CPU, so the golden conversations share
    this one with a broken copy; O01 as recorded replays in tests/runner/test_replay_all.py, where every
    named score, native included, must be 100%.)"""
    with _holding(4318):
        verdicts = _replay(_mutated(isolated, {
            "O01": lambda c: swap_tools(c, "get_spoke_schema", "validate_spoke_config"),
        }), isolated / "golden.json")
    assert set(verdicts) == {"O01", "O02", "O03"}
    for case_id in ("O02", "O03"):
        case = verdicts[case_id]
        assert all(case.values()), case  # the golden conversations pass everything, native included
        assert "native_forbidden_tools" in case and "native_step_budget" in case
        _agree(case)
    assert verdicts["O01"]["tool_sequence"] is False and verdicts["O01"]["native_tool_sequence"] is False
    _agree(verdicts["O01"])


def _rename(arguments: dict[str, Any]) -> None:
    arguments["spoke_name"] = arguments["config"]["name"] = "cx-crm2-dev-sdc"  # still a valid PR


def test_native_and_kit_checks_fail_together_on_broken_conversations(isolated: Path) -> None:
    """Three kinds of breakage, one per case, in one replay (a fourth, the order, is in the test above)."""
    first = _replay(_mutated(isolated / "a", {
        "O01": lambda c: forbidden_tool(c, "complete_pull_request"),
        "O02": lambda c: edit_tool_arguments(c, PR_TOOL, _rename).done(),
        "O03": lambda c: exceed_step_budget(c, 12, ("list_spokes", {})),
    }), isolated / "a.json")
    assert first["O01"]["forbidden_tools"] is False and first["O01"]["native_forbidden_tools"] is False
    assert first["O02"]["argument_match"] is False and first["O02"]["native_argument_match"] is False
    assert first["O03"]["conversation"] is False and first["O03"]["native_step_budget"] is False
    for case in first.values():
        _agree(case)


def test_each_run_of_a_traced_suite_gets_a_receiver_port_of_its_own(tmp_path: Path) -> None:
    """The config as written keeps Promptfoo's default port (plain npx promptfoo eval); under the
    runner a copy beside it, with a free port, runs instead, and goes when the suite is done. (The
    golden test above runs with 4318 taken by another process.)"""
    assert trace_receiver(OVERLAY.config) == Receiver("127.0.0.1", 4318)
    with own_receiver(OVERLAY.config, "run-0123abcd.spoke-create-overlay") as (config, env):
        assert config.parent == OVERLAY.config.parent  # every relative file:// path still holds
        mine = trace_receiver(config)
        assert mine is not None and mine.port != 4318
        assert env == {"AGENT_EVALS_OTLP_ENDPOINT": f"http://127.0.0.1:{mine.port}/v1/traces"}
        copied = yaml.safe_load(config.read_text())
        original = yaml.safe_load(OVERLAY.config.read_text())
        copied["tracing"]["otlp"]["http"]["port"] = 4318
        assert copied == original  # nothing else changed
        assert config not in stale_copies(OVERLAY.config.parents[1])  # its owner (this process) is alive
        text = config.read_text()
        config.write_text(re.sub(r"started \S+\)", "started 1)", text, count=1))  # this pid, another process
        assert config in stale_copies(OVERLAY.config.parents[1])  # its owner is gone: the sweep removes it
        config.write_text(text.split("\n", 1)[1])
        assert config in stale_copies(OVERLAY.config.parents[1])  # no owner line: stale too
    assert not config.exists()
    plain = tmp_path / "promptfooconfig.yaml"
    plain.write_text("providers: [echo]\n")
    with own_receiver(plain, "run-0123abcd.x") as (config, env):
        assert (config, env) == (plain, {})  # no receiver: the config as it is


@contextmanager
def _holding(port: int) -> Iterator[None]:
    """Another process's listener on ``port`` (as a collector or another eval would hold it)."""
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", port))
        holder.listen()
        yield
