"""The release pack's system through the core's protocol: the pool's run folder, a conversation's
working copy as ${REPO}, its snapshot and undo, undo by eval id, and the sweep of a run killed with -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agent_evals.packs.release import PACK
from agent_evals.packs.release.git_command import git
from agent_evals.packs.release.snapshot import RESOURCE
from agent_evals.packs.release.system import RUN_ENV, SIDE_EFFECTS, runs_base
from agent_evals.record import AgentInfo, RunRecord, SideEffect, Trace, UserInfo
from agent_evals.system import CleanupReport
from agent_evals.suites.discovery import Suite


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENT_EVALS_DATA_DIR", str(tmp_path / "data" / "portal"))
    return tmp_path / "data" / "release"


def _record(trace: Trace) -> RunRecord:
    return RunRecord(case_id="R01", agent=AgentInfo(name="release-notes", model="m"), user=UserInfo("user_messages"),
                     trace=trace)


def test_a_run_a_conversation_its_snapshot_and_undo(data_dir: Path, tmp_path: Path) -> None:
    suite = Suite("release-notes", tmp_path)
    with PACK.system.pool("run-1", tmp_path, [suite]) as pool:
        running = pool.get(suite)
        assert pool.get(suite) is running and running.env() == {RUN_ENV: str(data_dir / "run-1")}
        trace = Trace("run-1.release-notes", "R01#ab")
        conversation = PACK.system.conversation(trace, running.env())
        repo = Path(conversation.variables["REPO"])
        assert repo.parent == data_dir / "run-1" / "work" and conversation.headers == {}
        git(repo, "checkout", "--quiet", "-b", "release-notes/2.0.0")
        (repo / "CHANGELOG.md").write_text("changed\n", encoding="utf-8")
        git(repo, "commit", "--quiet", "-am", "docs: notes")
        record = _record(trace)
        record.snapshot = conversation.snapshot(record, [])
        assert record.snapshot is not None and record.side_effects == []  # the snapshot adds none: the calls do
        assert record.snapshot.read_from == str(repo)  # the working copy's folder, shown to people
        assert record.snapshot.resources[RESOURCE]["end"]["branches"]["release-notes/2.0.0"]
        assert [e["kind"] for e in record.snapshot.resources[SIDE_EFFECTS]] == ["branch", "commit"]
        record.side_effects = [SideEffect("branch", "release-notes/2.0.0"), SideEffect("file", "CHANGELOG.md")]
        assert conversation.undo(record, fixtures=False) == {
            "undone": [{"kind": "branch", "id": "release-notes/2.0.0"}, {"kind": "file", "id": "CHANGELOG.md"}],
            "already_gone": [], "summary": "removed 1 branch(s), reverted 1 file(s)",
            "by": "provider", "reset": "working copy"}
        assert repo.is_dir()  # reset in place: the worker's servers keep working in this folder
        assert git(repo, "status", "--porcelain") == "" and "release-notes/2.0.0" not in git(repo, "branch")
        assert (repo / "CHANGELOG.md").read_text(encoding="utf-8") != "changed\n"

        left = PACK.system.conversation(Trace("run-1.release-notes", "R02#cd"), running.env())
        assert Path(left.variables["REPO"]) == repo  # the worker's next conversation: the same folder
        (repo / "stray.txt").write_text("a conversation killed before its undo\n", encoding="utf-8")
        git(repo, "checkout", "--quiet", "-b", "stray")
        again = PACK.system.conversation(Trace("run-1.release-notes", "R03#ef"), running.env())
        assert Path(again.variables["REPO"]) == repo and not (repo / "stray.txt").exists()  # reset before use
        assert "stray" not in git(repo, "branch") and git(repo, "status", "--porcelain") == ""
        assert running.undo_row({"metadata": {"trace": {"eval_id": "run-1.release-notes", "test_id": "R03#ef"}}}).as_dict() == CleanupReport().as_dict()
        assert repo.is_dir()  # a row's undo leaves the worker's copy: it may hold the next conversation
        assert running.active("run-1") == [repo.name]
        assert running.undo_eval("run-1.release-notes").removed_fixtures == [f"working copy {repo.name}"]
        assert not repo.exists()
    assert list(data_dir.iterdir()) == []  # the run's folder went with the pool


def test_a_conversation_outside_a_run_removes_its_own_run_folder(data_dir: Path) -> None:
    trace = Trace("adhoc", "R01#ef")
    conversation = PACK.system.conversation(trace, {})
    assert Path(conversation.variables["REPO"]).is_dir()
    conversation.undo(_record(trace), fixtures=False)
    assert list(data_dir.iterdir()) == []


def test_the_next_pool_sweeps_a_run_killed_with_minus_9(data_dir: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code = ("import sys, time; from pathlib import Path; from agent_evals.packs.release.repository import start_run; "
            "start_run(Path(sys.argv[1]), 'run-dead'); print('ready', flush=True); time.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", code, str(runs_base())], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        assert (data_dir / "run-dead" / "seed").is_dir()
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    with PACK.system.pool("run-2", tmp_path, []):
        assert not (data_dir / "run-dead").exists()
    assert list(data_dir.iterdir()) == []
    assert capsys.readouterr().out == f"swept the repositories of 1 run(s) that died: {data_dir / 'run-dead'}\n"
