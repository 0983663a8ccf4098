"""``agent-evals run <suite|all> [--replay [DIR]] [--record DIR] [promptfoo eval flags]``.

For each suite: start a portal on a free loopback port with a fresh random token
(unless ``PORTAL_URL`` is set), run ``promptfoo eval`` on the suite's config with
URL, token and run id passed through the environment only, abandon whatever the
run left active (also after Ctrl-C), and stop the portal. The exit status is
non-zero when any case failed or errored.
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agent_evals.cleanup import RUN_ID_ENV, cleanup_run
from agent_evals.paths import default_data_dir, project_root
from agent_evals.portal_api import PortalAPI
from agent_evals.provider.config import ALLOW_STALE_ENV, GOLDEN, RECORD_ENV, REPLAY_ENV
from agent_evals.runner.promptfoo_args import DEFAULT_CONCURRENCY, FlagError, read_flags
from agent_evals.runner.suites import Suite, select

log = logging.getLogger(__name__)

INTERRUPT_GRACE_S = 20.0


@dataclass(frozen=True)
class Portal:
    url: str
    token: str | None


def promptfoo_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every promptfoo command of the kit runs with."""
    env = dict(os.environ if base is None else base)
    root = project_root()
    env["PATH"] = f"{root / 'node_modules' / '.bin'}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("PROMPTFOO_CONFIG_DIR", str(root / ".promptfoo"))
    env.setdefault("PROMPTFOO_DISABLE_TELEMETRY", "1")
    env.setdefault("PROMPTFOO_DISABLE_UPDATE", "1")
    env.setdefault("PROMPTFOO_PYTHON", sys.executable)
    return env


def promptfoo_command(*args: str) -> list[str]:
    binary = project_root() / "node_modules" / ".bin" / "promptfoo"
    if not binary.exists():
        raise FileNotFoundError(f"{binary} is missing: run `npm install` in {project_root()}")
    return [str(binary), *args]


def concurrency(promptfoo_args: list[str]) -> int:
    """The ``-j`` / ``--max-concurrency`` value the user gave, else Promptfoo's default."""
    try:
        return read_flags(promptfoo_args).concurrency
    except FlagError:
        return DEFAULT_CONCURRENCY  # the preflight says what is wrong


def run(
    suite: str,
    replay: str | None,
    record: str | None,
    promptfoo_args: list[str],
    *,
    check: bool = True,
    allow_stale: bool = False,
) -> int:
    try:
        suites = select(suite)
        flags = read_flags(promptfoo_args)
    except (ValueError, FlagError) as exc:
        log.error("%s", exc)
        return 2
    if replay and record:
        log.error("--replay and --record are exclusive")
        return 2
    if check:
        from agent_evals.preflight import preflight
        from agent_evals.preflight.command import report

        result = preflight(suites, flags, replay=replay, allow_stale=allow_stale)
        if not result.ok:
            print(report(result, suites), flush=True)
            return 2
        suites = _with_cases(suites, result)
    if not replay:
        _endpoint_notice()
    _grader_notice()
    worst = 0
    for item in suites:
        code = run_suite(
            item, replay=replay, record=record, promptfoo_args=promptfoo_args, workers=flags.concurrency,
            allow_stale=allow_stale,
        )
        worst = max(worst, code)
        if code == 130:
            break
    _print_view_hint()
    return worst


def _with_cases(suites: list[Suite], result: object) -> list[Suite]:
    """The suites the filters leave some case in; the others are skipped with one line."""
    kept = []
    for suite in suites:
        cases = result.cases(suite.name)  # type: ignore[attr-defined]
        if cases == 0:
            print(f"suite {suite.name}: the filters select no case here; skipped", flush=True)
        else:
            kept.append(suite)
    return kept


def run_suite(
    suite: Suite,
    *,
    replay: str | None,
    record: str | None,
    promptfoo_args: list[str],
    workers: int,
    allow_stale: bool = False,
) -> int:
    run_id = f"run-{uuid.uuid4().hex[:12]}"
    print(f"\n=== suite {suite.name} ({run_id}) ===", flush=True)
    with _portal_for(suite) as portal:
        env = promptfoo_env()
        env.update({"PORTAL_URL": portal.url, RUN_ID_ENV: run_id, "PROMPTFOO_PYTHON_WORKERS": str(workers)})
        env.pop("PORTAL_TOKEN", None)
        if portal.token:
            env["PORTAL_TOKEN"] = portal.token
        env.pop(REPLAY_ENV, None)
        env.pop(RECORD_ENV, None)
        if replay:
            env[REPLAY_ENV] = GOLDEN if replay == GOLDEN else str(Path(replay).resolve() / suite.name)
        if record:
            env[RECORD_ENV] = str(Path(record).resolve() / suite.name)
        env.pop(ALLOW_STALE_ENV, None)
        if allow_stale:
            env[ALLOW_STALE_ENV] = "1"
        args = [arg.replace("{suite}", suite.name) for arg in promptfoo_args]  # e.g. -o results/{suite}.json
        command = promptfoo_command("eval", "-c", str(suite.config), *args)
        code = _run_promptfoo(command, env)
        report = cleanup_run(run_id, PortalAPI(portal.url, token=portal.token))
        if report.abandoned or report.failed or report.error:
            print(f"cleanup of {run_id}: {report.summary()}", flush=True)
    return code


def _run_promptfoo(command: list[str], env: dict[str, str]) -> int:
    """Run promptfoo; on Ctrl-C let it stop (it gets the same SIGINT) and report 130."""
    process = subprocess.Popen(command, env=env, cwd=project_root())
    try:
        return process.wait()
    except KeyboardInterrupt:
        log.warning("interrupted: waiting for promptfoo to stop, then cleaning up")
        try:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=INTERRUPT_GRACE_S)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            process.kill()
            process.wait()
        return 130


@contextmanager
def _portal_for(suite: Suite) -> Iterator[Portal]:
    url = os.environ.get("PORTAL_URL")
    if url:
        if suite.portal_settings:
            log.warning("PORTAL_URL is set: suite %s expects a portal with %s", suite.name, suite.portal_settings)
        yield Portal(url.rstrip("/"), os.environ.get("PORTAL_TOKEN") or None)
        return
    from agent_evals.portal.process import PortalProcess

    settings = suite.portal_settings
    data_dir = default_data_dir() if settings is None else default_data_dir().with_name(f"portal-{suite.name}")
    with PortalProcess(data_dir=data_dir, token=secrets.token_urlsafe(32), settings_file=settings) as portal:
        print(f"portal: {portal.url} (data: {data_dir})", flush=True)
        yield Portal(portal.url, portal.token)


def _endpoint_notice() -> None:
    from agent_evals.llm.settings import llm_configured

    if not llm_configured():
        print(
            "NOTE: no LLM endpoint is configured (AZURE_OPENAI_ENDPOINT, OPENAI_API_KEY or OPENAI_BASE_URL, "
            "see README): every live conversation will end in an error. Add --replay to run the golden "
            "conversations offline.",
            flush=True,
        )


def _grader_notice() -> None:
    from agent_evals.judge import judge_configured

    if not judge_configured():
        print(
            "NOTE: no grader model is configured (an LLM endpoint and JUDGE_MODEL, see README): "
            "model-graded assertions (llm-rubric) are NOT GRADED in this run. They are left out of the "
            "scores and listed in each row's metadata.not_graded; they never count as passed.",
            flush=True,
        )


def _print_view_hint() -> None:
    print("\nResults are in the Promptfoo viewer: npm run eval:view", flush=True)


def view(promptfoo_args: list[str]) -> int:
    """``agent-evals view``: the Promptfoo viewer over this project's results."""
    return _run_promptfoo(promptfoo_command("view", *promptfoo_args), promptfoo_env())
