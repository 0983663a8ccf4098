"""The Kubernetes recipe runs as written: the Indexed Job's script turns each completion index into
its shard (checked with a stand-in ``npm`` that records what it was asked), and the merge Job's
script merges shard files, reports and gates with the real CLI."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import PROJECT_ROOT
from tests.shards.synthetic import shard_files

K8S = PROJECT_ROOT / "deploy" / "k8s"


def _job(name: str) -> dict[str, Any]:
    documents = [d for d in yaml.safe_load_all((K8S / f"{name}.yaml").read_text()) if d]
    return next(d for d in documents if d["kind"] == "Job")


def _container(job: dict[str, Any]) -> dict[str, Any]:
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return container


def _env(container: dict[str, Any]) -> dict[str, str]:
    return {item["name"]: item["value"] for item in container["env"]}


def _script(container: dict[str, Any], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*container["command"], container["args"][0]], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_one_shard_per_completion_index(tmp_path: Path) -> None:
    job = _job("agent-evals-shards")
    spec, container = job["spec"], _container(job)
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"] == int(_env(container)["SHARDS"]) == 4
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "npm").write_text('#!/bin/sh\necho "$@" >> "$CALLS"\nexit "${NPM_EXIT:-100}"\n')
    (fake / "npm").chmod(0o755)
    calls = tmp_path / "calls"
    for index in range(4):
        env = {**_env(container), "PATH": f"{fake}:{os.environ['PATH']}", "CALLS": str(calls),
               "JOB_COMPLETION_INDEX": str(index)}
        assert _script(container, env, tmp_path).returncode == 0  # 100: cases failed, the gate judges
    assert calls.read_text().splitlines() == [
        f"run --silent eval -- all --filter-metadata priority=smoke --repeat 3 --shard {i}/4 -o /results/{{suite}}.json"
        for i in range(1, 5)
    ]
    env = {**env, "NPM_EXIT": "2"}
    assert _script(container, env, tmp_path).returncode == 2  # the run could not start: the pod fails


def test_the_merge_job_merges_reports_and_gates(tmp_path: Path) -> None:
    container = _container(_job("agent-evals-merge"))
    results = tmp_path / "results"
    results.mkdir()
    files = shard_files(results, 2, 4, 3, lambda case, r: "pass", mode="live")  # the recipe runs the model
    env = {**os.environ, **_env(container), "RESULTS_DIR": str(results), "PROMPTFOO_CONFIG_DIR": str(tmp_path / "pf"),
           "AGENT_EVALS_DATA_DIR": str(tmp_path / "data" / "portal")}
    done = _script(container, env, PROJECT_ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gate holds" in done.stdout.splitlines()[-1]
    assert sorted(p.name for p in results.iterdir()) == sorted(
        [*(f.name for f in files), "merged", "summary.md", "report.json", "junit.xml"]
    )
    files[1].unlink()  # a shard that never reported
    done = _script(container, env, PROJECT_ROOT)
    assert done.returncode == 1 and "shard(s) 2/2 missing" in done.stdout
    assert "BROKEN require_complete" in done.stdout
