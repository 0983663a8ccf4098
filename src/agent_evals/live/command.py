"""``agent-evals live``: sample the agents' real conversations, score them, write a Promptfoo eval and
the report, and alert when a threshold is crossed.

1. The policy (``evals/live-policy.yaml``) and the thresholds file are checked first; a problem is
   one line with file and line, and nothing is read or spent (exit 2).
2. The conversations are read from the portal (``--portal``, else ``PORTAL_URL``; its token from
   ``PORTAL_TOKEN``) or from files (``--from``), selected by window and agent and sampled
   (``--count`` / ``--rate``, ``--seed``, ``--stratify``). A window with nothing in it says so and
   exits 0 without an eval.
3. Each is scored with its agent's checks (:mod:`agent_evals.live.scoring`), one row at a time,
   into a results file (``-o``, default ``results/live/<time>.json``) imported into the viewer's
   database (``--no-import`` keeps it a file).
4. The report is printed (``--format terminal|markdown|json``, ``--report-output FILE``) and the
   thresholds are applied.

Exit status: 0 scored (and no threshold crossed), 1 a threshold crossed (each one line), 2 it could
not run: a bad policy or thresholds file, a portal or store that is down, a missing file, an
import that failed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_evals.live.eval_file import FORMAT, EvalWriter
from agent_evals.live.live_report import LiveReport, render_markdown, render_terminal
from agent_evals.live.policy import POLICY_FILE, load_policy
from agent_evals.live.sampling import SampleSpec, SamplingError, parse_strata
from agent_evals.live.parallel import default_jobs, scored_rows
from agent_evals.live.sources import ALL_TIME, Selection, SourceError, Window, from_files, from_portal
from agent_evals.live.stored import parse_time
from agent_evals.live.thresholds import THRESHOLDS_FILE, Thresholds, broken, load_thresholds
from agent_evals.paths import evals_dir, project_root
from agent_evals.record import KitError
from agent_evals.runner.promptfoo_process import promptfoo_command, promptfoo_env

DAY = 86_400.0
_SPAN = re.compile(r"(\d+)([hd])")


@dataclass(frozen=True)
class LiveOptions:
    portal: str | None = None
    token: str | None = None
    files: tuple[Path, ...] = ()
    window: str = "all"
    since: str | None = None
    until: str | None = None
    agents: tuple[str, ...] = ()
    count: int | None = None
    rate: float | None = None
    seed: int = 0
    stratify: str | None = None
    policy: Path | None = None
    thresholds: Path | None = None
    output: Path | None = None
    import_eval: bool = True
    output_format: str = "terminal"
    report_output: Path | None = None
    judge: bool = True
    jobs: int | None = None  # worker processes (default: the CPUs, at most 4)


def parse_window(text: str, since: str | None = None, until: str | None = None, now: float | None = None) -> Window:
    """``all``, ``today``, ``yesterday`` (UTC days), ``24h``, ``7d`` (up to now); ``since``/``until`` win."""
    now = time.time() if now is None else now
    midnight = now - now % DAY
    if text == "all":
        window = ALL_TIME
    elif text == "today":
        window = Window(midnight, midnight + DAY)
    elif text == "yesterday":
        window = Window(midnight - DAY, midnight)
    elif match := _SPAN.fullmatch(text):
        amount = int(match.group(1)) * (3600 if match.group(2) == "h" else DAY)
        window = Window(now - amount, now + 1)
    else:
        raise SamplingError(f"window {text!r} is not known; give all, today, yesterday, <N>h or <N>d (or --since/--until)")
    try:
        return Window(parse_time(since) if since else window.since, parse_time(until) if until else window.until)
    except ValueError as exc:
        raise SamplingError(f"--since/--until: {exc} (give ISO-8601, e.g. 2026-05-01 or 2026-05-01T12:00:00Z)") from None


def live_command(options: LiveOptions) -> int:
    policy_path = options.policy or evals_dir() / POLICY_FILE
    policy, problems = load_policy(policy_path)
    thresholds, more = _thresholds(options.thresholds)
    problems += more
    if problems or policy is None:
        for problem in problems:
            print(f"  {problem}")
        print(f"live: {len(problems)} problem(s) in the policy or thresholds; nothing was read or scored")
        return 2
    try:
        window = parse_window(options.window, options.since, options.until)
        spec = SampleSpec(options.count, options.rate, options.seed, parse_strata(options.stratify))
        agents = tuple(options.agents) or tuple(policy.agents)
        selection = _select(options, window, agents, spec)
    except (SamplingError, SourceError) as exc:
        print(f"live: {exc}")
        return 2
    what = f"{', '.join(agents)} · {window.describe()}"
    if selection.selected == 0:
        for warning in selection.warnings:
            print(f"live: {warning}")
        busy = f" ({selection.in_progress} still being answered)" if selection.in_progress else ""
        print(f"live: no conversation of {what}{busy}: nothing to score, no eval written")
        return 0
    return _score(options, policy, thresholds, selection, window, agents, spec, what)


def _thresholds(path: Path | None) -> tuple[Thresholds | None, list[Any]]:
    chosen = path or evals_dir() / THRESHOLDS_FILE
    if path is None and not chosen.is_file():
        return None, []
    if not chosen.is_file():
        return None, [f"{chosen}: no such thresholds file"]
    return load_thresholds(chosen)


def _select(options: LiveOptions, window: Window, agents: Sequence[str], spec: SampleSpec) -> Selection:
    if options.files:
        return from_files(options.files, window, agents, spec)
    if not options.portal:
        raise SourceError("give --portal URL (or set PORTAL_URL) or --from FILE.jsonl")
    return from_portal(options.portal, options.token, window, agents, spec)


def _score(options: LiveOptions, policy: Any, thresholds: Thresholds | None, selection: Selection, window: Window,
           agents: Sequence[str], spec: SampleSpec, what: str) -> int:
    from agent_evals.judge import judge_configured  # lazy: keeps agent_evals.live.command's start-up as small as it is

    judge = options.judge and judge_configured()
    description = (f"LIVE · {what} · {selection.selected} of {selection.available} conversation(s) "
                   f"({spec.describe()}) · policy {_shown(policy.path)} {policy.digest}")
    stamp = {"format": FORMAT, "agents": list(agents), "since": window.since, "until": window.until,
             "count": spec.count, "rate": spec.rate, "seed": spec.seed, "stratify": list(spec.stratify),
             "policy": policy.digest, "source": options.portal or [str(p) for p in options.files]}
    output = options.output or project_root() / "results" / "live" / f"{time.strftime('%Y%m%d-%H%M%S')}.json"
    report = LiveReport(description=description)
    try:
        with EvalWriter(output, description, stamp) as writer:
            report.eval_id = writer.eval_id
            for scoring in scored_rows(selection.conversations, selection.strata, policy=policy,
                                       portal=options.portal, token=options.token, judge=judge,
                                       jobs=options.jobs or default_jobs(), expected=selection.selected):
                if scoring.facts is None:
                    selection.warnings.append(str(scoring.warning))
                    continue
                writer.add(scoring.text, scoring.facts)
                report.add(scoring.facts)
        for warning in selection.warnings:
            print(f"live: {warning}")
        if options.import_eval:
            _import(output)
    except (SourceError, KitError) as exc:
        print(f"live: {exc}")
        return 2
    where = f"imported as {report.eval_id}" if options.import_eval else "not imported"
    print(f"live: {writer.rows} conversation(s) scored → {_shown(output)} ({where})")
    _write_report(report, options)
    if thresholds is None:
        return 0
    crossed, notes = broken(thresholds, report)
    for line in notes:
        print(f"live: {line}")
    for line in crossed:
        print(f"live: ALERT: {line}")
    return 1 if crossed else 0


def _write_report(report: LiveReport, options: LiveOptions) -> None:
    rendered = {"terminal": render_terminal, "markdown": render_markdown,
                "json": lambda r: json.dumps(r.to_json(), indent=2) + "\n"}[options.output_format](report)
    if options.report_output is not None:
        options.report_output.parent.mkdir(parents=True, exist_ok=True)
        options.report_output.write_text(rendered, encoding="utf-8")
        print(f"live: report → {_shown(options.report_output)}")
    if options.report_output is None or options.output_format == "terminal":
        sys.stdout.write(rendered if rendered.endswith("\n") else rendered + "\n")
    elif options.output_format != "terminal":
        print(render_terminal(report))


def _import(path: Path) -> None:
    done = subprocess.run(promptfoo_command("import", "--force", str(path.resolve())), env=promptfoo_env(),
                          cwd=project_root(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = next((line for line in reversed(done.stdout.splitlines() + done.stderr.splitlines()) if line.strip()), "")
        raise KitError(f"promptfoo import {path} failed (exit {done.returncode}): {said.strip()}", kind="config")


def _shown(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
