"""``agent-evals cassettes upgrade`` on a real golden cassette whose record is of version 2 (the
file is ``evals/spoke-create/golden/C01.json`` as of commit 2692872): rewritten to version 3 in
place, its fingerprints and model calls kept, and replayed by the current kit, graded as before; the
replayed row written back in the version-2 form (its snapshot too) is graded the same."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_evals.cli import main
from agent_evals.processes import KitStarter
from agent_evals.conversation.cassette import load_cassette
from agent_evals.golden.selfcheck import grade_row
from agent_evals.packs.spoke.checks import pull_request, spoke_json_valid
from agent_evals.packs.spoke.created_prs import pull_request_ids
from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.runs import portal_settings
from agent_evals.packs.spoke.undo import abandon
from agent_evals.record import MARKER, RunRecord
from agent_evals.suites.discovery import Suite, discover
from tests.assertions._assertion_support import version_2
from tests.golden.test_selfcheck import _replay, _test

V2_CASSETTE = Path(__file__).parent / "data" / "spoke-create-C01.v2.json"
SUITE = next(s for s in discover() if s.name == "spoke-create")


@pytest.fixture
def portal(tmp_path: Path, portal_starter: KitStarter) -> Iterator[PortalProcess]:
    with PortalProcess(starter=portal_starter, data_dir=tmp_path / "data", token=PortalProcess.new_token(),
                       settings_file=portal_settings(SUITE)) as running:
        yield running


def test_upgrade_rewrites_a_v2_golden_cassette_that_the_kit_then_replays(
    tmp_path: Path, portal: PortalProcess, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    old = json.loads(V2_CASSETTE.read_text(encoding="utf-8"))
    assert old["record"][MARKER] == 2 and old["record"]["pull_requests"]  # the real thing, with a PR
    folder = tmp_path / "golden"
    folder.mkdir()
    shutil.copy(V2_CASSETTE, folder / "C01.json")

    assert main(["cassettes", "upgrade", str(folder)]) == 0
    assert f"1 cassette(s) upgraded in {folder}" in capsys.readouterr().out
    new = json.loads((folder / "C01.json").read_text(encoding="utf-8"))
    assert new["record"][MARKER] == 3 and "pull_requests" not in new["record"]
    assert new["record"]["side_effects"] == [
        {"kind": "pull_request", "id": str(pr["id"]), "url": pr["url"]} for pr in old["record"]["pull_requests"]]
    assert {k: v for k, v in new.items() if k != "record"} == {k: v for k, v in old.items() if k != "record"}
    assert load_cassette(folder / "C01.json").record == RunRecord.from_metadata(old["record"])
    assert main(["cassettes", "upgrade", str(folder)]) == 0  # nothing left to upgrade
    assert "0 cassette(s) upgraded" in capsys.readouterr().out

    monkeypatch.setenv("PORTAL_URL", portal.url)
    monkeypatch.setenv("PORTAL_TOKEN", portal.token or "")
    test = _test(SUITE, "C01")
    row = _replay(SUITE, test, folder)
    api = PortalAPI(portal.url, token=portal.token)
    try:
        assert "error" not in row, row.get("error")
        assert row["metadata"][MARKER] == 3 and row["metadata"]["replay"] == {"cassette": "C01.json"}  # fresh
        assert [s["kind"] for s in row["metadata"]["side_effects"]] == ["pull_request"]
        graded = grade_row(SUITE.folder, test["assert"], row)
        assert graded and all(graded.values()), graded
        # the same row as a version-2 kit wrote it (snapshot {portal_url, pull_requests, resources}), regraded:
        # the spoke checks find the portal's pull requests where the upgrade puts them, and say the same
        old_row = {**row, "metadata": version_2(row["metadata"])}
        assert old_row["metadata"]["snapshot"]["portal_url"] == portal.url
        assert [pr["status"] for pr in old_row["metadata"]["snapshot"]["pull_requests"]] == ["active"]
        assert grade_row(SUITE.folder, test["assert"], old_row) == graded
        for check in (pull_request, spoke_json_valid):
            assert check.grade({}, old_row["metadata"]) == check.grade({}, row["metadata"])
    finally:
        abandon(api, pull_request_ids(row.get("metadata") or {}))


@pytest.mark.parametrize("version", [1, 4, "x"])
def test_upgrade_refuses_a_record_version_it_does_not_know_and_changes_nothing(
    tmp_path: Path, version: object, capsys: pytest.CaptureFixture[str]
) -> None:
    old = json.loads(V2_CASSETTE.read_text(encoding="utf-8"))
    good, bad = tmp_path / "A.json", tmp_path / "B.json"
    good.write_text(json.dumps(old))
    bad.write_text(json.dumps({**old, "record": {**old["record"], MARKER: version}}))
    assert main(["cassettes", "upgrade", str(tmp_path)]) == 2
    out = capsys.readouterr().out.strip()
    assert out == (f"cassettes upgrade: [replay] cassette {bad}: run record version {version!r} is not supported "
                   "(this kit reads versions 2, 3); re-run the case, or upgrade cassettes with "
                   "`npx agent-evals cassettes upgrade DIR` (nothing was changed)")
    assert json.loads(good.read_text())["record"][MARKER] == 2  # refused before writing any
