"""``agent-evals run <suite|all> [--replay [DIR]] [--record DIR] [promptfoo eval flags]``.

First the preflight check (``agent-evals check``). Then, with one run id for the whole run,
for each suite, in order and up to ``--suites-at-once`` side by side (see :class:`Lanes`):
the system under test of the suite's pack (:mod:`agent_evals.system`; the portal: an external
one, the one already serving its data dir, or one started with a fresh random token on the data
dir's stable port), a sweep of what runs that died left, ``promptfoo eval`` on the suite's config
(started beside the system: ``runner/system_handoff.py``) with what the system gives the workers
and the suite's eval id passed through the environment only, an undo of whatever the suite left
(also after Ctrl-C or SIGTERM), and the systems stopped at the end. The run's manifest and
logs live in its folder (``data/runs/<run id>/``); the logs are removed after a clean run.
The exit status is Promptfoo's (100 when a case failed or errored), 130 after Ctrl-C, 143
after SIGTERM, 2 when the run could not start.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from agent_evals.cleanup import RUN_ID_ENV, CleanupReport
from agent_evals.hook_policy import SYSTEM_FD_ENV
from agent_evals.llm.budget import LEDGER_ENV
from agent_evals.paths import project_root, promptfoo_config_dir
from agent_evals.processes import COLD
from agent_evals.provider.modes import ALLOW_STALE_ENV, GOLDEN, RECORD_ENV, REPLAY_ENV
from agent_evals.provider.deadline import configured_deadline_s, runner_request_timeout_ms
from agent_evals.record import KitError
from agent_evals.runner.budget import BudgetSetupError, RunBudgets, parse_budget, run_budgets
from agent_evals.runner.console import PromptfooConsole, suite_summary
from agent_evals.runner.describe import eval_description
from agent_evals.runner.eval_marks import database_ready, mark_interrupted, results_db
from agent_evals.runner.interrupts import ForcedExit, Interrupts
from agent_evals.suites.manifest import MANIFEST_NAME, RunManifest, SuiteRun, now, runs_dir, suite_eval_id, temp_dir
from agent_evals.suites.promptfoo_args import DEFAULT_CONCURRENCY, FlagError, Flags, read_flags, shared_output
from agent_evals.suites.promptfoo_args import select as select_tests
from agent_evals.runner.promptfoo_process import PromptfooResult, promptfoo_command, promptfoo_env, run_promptfoo
from agent_evals.runner.progress import Progress, Ticker
from agent_evals.runner.rerun_invalid import rerun_problem, rerun_suite
from agent_evals.runner.sharding import SuiteShard, merge_hint, plan_suite_shard
from agent_evals.runner.suite_output import ordered_output
from agent_evals.runner.system_handoff import PromptfooBeside, reads_system_at_start
from agent_evals.suites.discovery import Suite, select
from agent_evals.runner.systems import Systems, server_modules, suite_systems, undo_words, worker_modules
from agent_evals.runner.sweep import place as sweep_place
from agent_evals.runner.sweep import sweep_leftovers, sweep_stale
from agent_evals.runner.trace_port import own_receiver
from agent_evals.runner.until_decided import suite_until_decided, until_decided_options
from agent_evals.runner.warm_workers import WarmWorkers
from agent_evals.shards.durations import read_durations
from agent_evals.suites.shard_spec import Shard, ShardError, parse_shard
from agent_evals.system import PACK_ENV, Running
from agent_evals.testing.pause_points import pause_point
from agent_evals.llm.settings import llm_configured
from agent_evals.suites.files import load_suite, suite_reads_kept

if TYPE_CHECKING:
    from agent_evals.preflight import Preflight

log = logging.getLogger(__name__)

CLEANUP_SETTLE_S = 0.3  # after an interrupt, a create call already sent may still land: sweep twice
__all__ = ["DEFAULT_CONCURRENCY", "concurrency", "run", "run_suite"]


def concurrency(promptfoo_args: list[str]) -> int:
    """The ``-j`` / ``--max-concurrency`` value the user gave, else Promptfoo's default."""
    try:
        return read_flags(promptfoo_args).concurrency
    except FlagError:
        return DEFAULT_CONCURRENCY  # the preflight says what is wrong


@suite_reads_kept()
def run(
    suite: str,
    replay: str | None,
    record: str | None,
    promptfoo_args: list[str],
    *,
    check: bool = True,
    allow_stale: bool = False,
    shard: str | None = None,
    shard_durations: str | None = None,
    budget_usd: str | None = None,
    suites_at_once: int | None = None,
    until_decided: int | None = None,
    baseline: str | None = None,
    rerun_invalid: int = 0,
) -> int:
    if suites_at_once is not None and suites_at_once < 1:
        log.error("--suites-at-once must be 1 or more")
        return 2
    if (problem := rerun_problem(rerun_invalid, shard)) is not None:
        log.error("%s", problem)
        return 2
    try:
        decided_against = until_decided_options(until_decided, baseline, shard, promptfoo_args)
    except ValueError as exc:
        log.error("%s", exc)
        return 2
    try:
        suites = select(suite)
        flags = read_flags(promptfoo_args)
        run_limit = parse_budget(budget_usd)
        shard_spec = parse_shard(shard) if shard is not None else None
        if shard_durations is not None and shard_spec is None:
            raise ShardError("--shard-durations balances the shards of --shard I/N: give --shard too")
        durations = read_durations(Path(shard_durations)) if shard_durations is not None else None
    except (ValueError, FlagError) as exc:
        log.error("%s", exc)
        return 2
    if replay and record:
        log.error("--replay and --record are exclusive")
        return 2
    manifest = RunManifest(f"run-{uuid.uuid4().hex[:12]}", "replay" if replay else "record" if record else "live",
                           git_revision=git_revision())
    folder = runs_dir() / manifest.run_id
    try:
        budgets = run_budgets(folder, run_limit, suites) if not replay else RunBudgets(folder, None, {})
    except BudgetSetupError as exc:
        log.error("%s", exc)
        return 2
    if replay and run_limit is not None:
        print("NOTE: a replay spends nothing: --budget-usd has no effect", flush=True)
    if budgets.any and not check:
        log.error("a budget needs the preflight check (it refuses models without a price): drop --no-check")
        return 2
    # The warm server's imports (the MCP SDK, the portal's framework: ~0.65 s of CPU) overlap the check's
    # slow part, the models asked and the agents' servers started, instead of following it.
    warm = _warm_server(folder, suites)
    try:
        selected: dict[str, list[str] | None] = {}
        if check:
            from agent_evals.preflight import preflight  # lazy: keeps agent_evals.golden.record's start-up as small as it is
            from agent_evals.preflight.command import report  # lazy: keeps agent_evals.golden.record's start-up as small as it is

            pause_point("preflight")
            result = preflight(suites, flags, replay=replay, allow_stale=allow_stale, budget=budgets.any,
                               on_files_ok=warm.start)
            if not result.ok:
                print(report(result, suites), flush=True)
                return 2
            suites = _with_cases(suites, result)
            selected = {name: None if tests is None else [t.case_id for t in tests] for name, tests in result.selected.items()}
        elif (shared := shared_output(flags, [item.name for item in suites])) is not None:
            log.error("%s", shared)  # the preflight says it too
            return 2
        else:  # the selection all the same: no more Promptfoo workers than rows, and the report knows what ran
            selected = _selection(suites, flags)
        if not replay:
            _endpoint_notice()
        _grader_notice(replay=bool(replay))
        shards: dict[str, SuiteShard] = {}
        if shard_spec is not None:
            try:
                shards = _plan_shards(suites, flags, shard_spec, manifest, durations)
            except (ShardError, KitError) as exc:
                log.error("%s", exc)
                return 2
            suites = [item for item in suites if item.name in shards]
            if not suites:
                print(f"shard {shard_spec}: no case of the selection falls to this shard; nothing to run", flush=True)
                return 0
            selected = {name: [case.id for case in planned.stamp.cases] for name, planned in shards.items()}
        sweep_leftovers(runs_dir())
        try:
            manifest.save(folder)
            temp_dir(folder).mkdir(exist_ok=True)
        except OSError as exc:
            log.error("cannot write the run's folder %s: %s", folder, exc.strerror or exc)
            return 2
        at_once = suites_at_once or default_suites_at_once(replay=bool(replay))
        warm.start()  # started already when the check reached the models and the servers
        code = _run_suites(suites, manifest, folder, selected, warm, replay=replay, record=record,
                           promptfoo_args=promptfoo_args, workers=flags.concurrency, repeat=until_decided or flags.repeat,
                           allow_stale=allow_stale, shards=shards, budgets=budgets, at_once=at_once,
                           until_decided=until_decided, decided_against=decided_against, rerun_invalid=rerun_invalid)
        warm.stop()  # asked to stop with the portals (_run_suites): gone before the run's folder is tidied
        manifest.budget = budgets.state("run")
        _finish(manifest, folder, code)
        _print_summary(manifest)
        if shards:
            _print_merge_hint(shards, promptfoo_args)
        elif any(entry.eval_id for entry in manifest.suites):  # not when no eval was made (a system failed)
            _print_view_hint()
        return code
    finally:
        warm.stop()  # an early return, an interrupt: nothing when stopped already
        if not (folder / MANIFEST_NAME).is_file():  # stopped before it began: no folder, no log
            shutil.rmtree(folder, ignore_errors=True)


def _warm_server(folder: Path, suites: list[Suite]) -> WarmWorkers:
    """The run's warm server (``runner/warm_workers.py``), not started yet; its files live in the run's folder."""
    systems = suite_systems(suites)
    return WarmWorkers(folder / "warm-workers.log", folder / "warm-workers.json", folder=temp_dir(folder),
                       system_modules=server_modules(systems), worker_modules=worker_modules(systems))


def _merged(entry: SuiteRun, manifest: RunManifest, folder: Path) -> Callable[[str, dict[str, object]], None]:
    def merged(eval_id: str, summary: dict[str, object]) -> None:
        entry.eval_id, entry.promptfoo_dir, entry.until_decided = eval_id, None, summary
        manifest.save(folder)

    return merged


def _plan_shards(suites: list[Suite], flags: Flags, shard: Shard, manifest: RunManifest,
                 durations: dict[str, float] | None) -> dict[str, SuiteShard]:
    """Each suite's share for this shard; a suite the shard gets no case of is left out, with one line."""
    shards = {}
    for item in suites:
        description = flags.description or eval_description(item, manifest.mode, manifest.git_revision)
        planned = plan_suite_shard(item, flags, shard, run_id=manifest.run_id, mode=manifest.mode,
                                   description=description, durations=durations,
                                   git_revision=manifest.git_revision)
        print(planned.describe() + ("; nothing to run here" if planned.empty else ""), flush=True)
        if not planned.empty:
            shards[item.name] = planned
    return shards


def _print_merge_hint(shards: dict[str, SuiteShard], promptfoo_args: list[str]) -> None:
    shard = next(iter(shards.values())).shard
    print(f"\nThis is one shard of {shard.total}: once every shard ran, merge their results files into one eval for "
          f"the viewer, the report and the gate:\n  {merge_hint(promptfoo_args, shard)}", flush=True)


def _print_summary(manifest: RunManifest) -> None:
    """One summary across every suite of the run (the verdict report's short form)."""
    if not any(entry.eval_id for entry in manifest.suites):
        return  # nothing ran

    from agent_evals.report import summary_lines  # lazy: the report loads after the run, not at its start

    print("", *summary_lines(manifest), sep="\n", flush=True)


def default_suites_at_once(*, replay: bool) -> int:
    """Three suites side by side on a replay with two CPUs or more (no model paces it; one suite's
    Promptfoo start-up or trace flush overlaps the others' rows: 90 cases on 2 cores took 21.9 s
    one at a time, 14.5-15.7 s two at once, 14.2-14.8 s three, 14.6 s four), one at a time
    against a model (``-j`` then means what it says)."""
    return 3 if replay and (os.cpu_count() or 1) >= 2 else 1


def _run_suites(suites: list[Suite], manifest: RunManifest, folder: Path, selected: dict[str, list[str] | None],
                warm: WarmWorkers, *, repeat: int, shards: dict[str, SuiteShard], budgets: RunBudgets, at_once: int = 1,
                until_decided: int | None = None, decided_against: dict[str, tuple[int, int]] | None = None,
                rerun_invalid: int = 0, **options: object) -> int:
    """The suites in order, up to ``at_once`` side by side (each in a thread of its own, its lines
    together in the suites' order)."""
    systems = suite_systems(suites)
    with Interrupts(undo_words(systems)) as interrupts:
        progress = _progress(suites, selected, repeat) if sys.stdout.isatty() else None  # a status line on a terminal
        lanes = Lanes(at_once)
        try:
            with (Systems(manifest.run_id, folder, suites, starter=warm.starter()) as portals,  # stopped before warm
                  ordered_output([item.name for item in suites], progress.line if progress else None) as output,
                  Ticker(output.redraw) if progress else nullcontext()):
                for item in suites:
                    lanes.wait_for_room()
                    if interrupts.requested or lanes.failure is not None:
                        break
                    shard = shards.get(item.name)
                    entry = SuiteRun(item.name, selected=selected.get(item.name), repeat=repeat,
                                     shard=str(shard.shard) if shard else None)
                    manifest.suites.append(entry)

                    begun = threading.Event()

                    def one(item: Suite = item, entry: SuiteRun = entry, shard: SuiteShard | None = shard,
                            begun: threading.Event = begun) -> int:
                        with output.suite(item.name):
                            def suite_run(entry: SuiteRun = entry, args: list[str] | None = None,
                                          rounds_dir: Path | None = None) -> int:
                                # run()'s **options are run_suite's keywords, untyped on their way here
                                given = {**options, "promptfoo_args": args} if args is not None else options
                                return run_suite(item, run_id=manifest.run_id, folder=folder, manifest=manifest,
                                                 entry=entry, interrupts=interrupts, portals=portals, shard=shard,
                                                 budgets=budgets, warm=warm, on_first_row=begun.set,
                                                 progress=progress, promptfoo_dir=str(rounds_dir) if rounds_dir else None,
                                                 **given)  # type: ignore[arg-type]

                            code = suite_run() if until_decided is None else suite_until_decided(
                                item, max_runs=until_decided, args=options["promptfoo_args"],  # type: ignore[arg-type]  # untyped too
                                folder=folder, run_round=functools.partial(suite_run, entry),
                                stopped=lambda: interrupts.requested, baseline=decided_against,
                                on_merged=_merged(entry, manifest, folder))
                            if rerun_invalid and entry.eval_id:  # runner/rerun_invalid.py
                                code = rerun_suite(rerun_invalid, item, entry, manifest, folder, options, interrupts,
                                                   lambda again, args: suite_run(again, args)) or code
                            entry.budget = budgets.state(item.name)
                            return code

                    lanes.start(item.name, one, begun)
                lanes.wait_all()
                warm.begin_stop()  # every suite is done and cleaned up: the servers stop side by side
                portals.begin_stop()
        except ForcedExit as forced:
            manifest.interrupted = True
            interrupts.kill_children()
            for name in lanes.started():
                _forced(manifest.run_id, name, portals)
            return 128 + forced.signum
        if interrupts.requested:  # whatever failed after a Ctrl-C or SIGTERM, the run was interrupted
            if lanes.failure is not None:
                log.debug("after the interrupt: %r", lanes.failure)
            manifest.interrupted = True
            return interrupts.exit_code
        if isinstance(lanes.failure, KitError):
            print(f"run: [{lanes.failure.kind}] {lanes.failure}", flush=True)
            return 2
        if lanes.failure is not None:
            raise lanes.failure
    return max(lanes.codes.values(), default=0)


def _progress(suites: list[Suite], selected: dict[str, list[str] | None], repeat: int) -> Progress:
    return Progress({item.name: _case_count(item, SuiteRun(item.name, selected=selected.get(item.name), repeat=repeat))
                     for item in suites})


class Lanes:
    """Suites running side by side, each in a daemon thread (a forced exit leaves without them)."""

    def __init__(self, at_once: int) -> None:
        self.at_once = at_once
        self.codes: dict[str, int] = {}
        self.failure: BaseException | None = None  # the first suite that raised: no further suite starts
        self._threads: dict[str, tuple[threading.Thread, threading.Event]] = {}
        self._lock = threading.Lock()

    def started(self) -> list[str]:
        return list(self._threads)

    def start(self, name: str, work: Callable[[], int], begun: threading.Event) -> None:
        def body() -> None:
            try:
                code = work()
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                with self._lock:
                    self.failure = self.failure or exc
                return
            finally:
                begun.set()
            with self._lock:
                self.codes[name] = code

        thread = threading.Thread(target=body, name=f"suite {name}", daemon=True)
        self._threads[name] = (thread, begun)
        thread.start()

    def wait_for_room(self) -> None:
        """Until fewer than ``at_once`` run and the results database is ready for one more Promptfoo
        process (migrated, or every suite running has finished a row: two that create or migrate it
        at once fail). Signals still arrive meanwhile. (Two suites with trace receivers never meet:
        each gets a port of its own, ``runner/trace_port.py``.)"""
        while True:
            busy = [lane for lane in self._threads.values() if lane[0].is_alive()]
            if len(busy) < self.at_once and (
                not busy or all(begun.is_set() for _, begun in busy)
                or database_ready(results_db(promptfoo_config_dir()))
            ):
                return
            time.sleep(0.05)

    def wait_all(self) -> None:
        for thread, _ in list(self._threads.values()):
            while thread.is_alive():
                thread.join(timeout=0.1)


def run_suite(
    suite: Suite,
    *,
    replay: str | None,
    record: str | None,
    promptfoo_args: list[str],
    workers: int,
    allow_stale: bool = False,
    run_id: str | None = None,
    folder: Path | None = None,
    manifest: RunManifest | None = None,
    entry: SuiteRun | None = None,
    interrupts: Interrupts | None = None,
    portals: Systems | None = None,
    shard: SuiteShard | None = None,
    budgets: RunBudgets | None = None,
    warm: WarmWorkers | None = None,
    on_first_row: Callable[[], None] | None = None,
    promptfoo_dir: str | None = None,
    progress: Progress | None = None,
) -> int:
    """One suite through Promptfoo with its system (see the module docstring); ``portals`` shares a
    system between the suites of one run, ``warm`` starts Promptfoo's Python processes warm;
    ``promptfoo_dir`` keeps the eval out of the viewer's database (a round of --repeat-until-decided)."""
    run_id = run_id or f"run-{uuid.uuid4().hex[:12]}"
    eval_id = suite_eval_id(run_id, suite.name)  # what this suite's pull requests and fixtures carry
    folder = folder or runs_dir() / run_id
    interrupts = interrupts or Interrupts(undo_words(suite_systems([suite])))
    print(f"\n=== suite {suite.name} ({run_id}{f', shard {shard.shard}' if shard else ''}) ===", flush=True)
    starter = warm.starter() if warm is not None else COLD
    own = Systems(run_id, folder, [suite], starter=starter) if portals is None else nullcontext(portals)
    with own as systems:
        promptfoo_dir = str(shard.promptfoo_dir(folder)) if shard is not None else promptfoo_dir
        workers = python_workers(workers, _case_count(suite, entry), replay=bool(replay))
        env = _suite_env(suite, eval_id, workers, replay=replay, record=record, allow_stale=allow_stale,
                         pack=systems.pack_name(suite))
        if promptfoo_dir is not None:  # the shard's eval stays in the run's folder until `agent-evals merge`
            env["PROMPTFOO_CONFIG_DIR"] = promptfoo_dir
        if budgets is not None:
            env.update(budgets.env(suite.name))
        temp = temp_dir(folder)  # Promptfoo's and its workers' temporary files: the run's
        temp.mkdir(parents=True, exist_ok=True)
        env["TMPDIR"] = str(temp)
        if warm is not None:
            env.update(warm.env(env))
        source_args = shard.args(promptfoo_args) if shard is not None else promptfoo_args
        args = [arg.replace("{suite}", suite.name) for arg in source_args]  # e.g. -o results/{suite}.json
        if shard is not None:
            shard.clear_outputs(args, project_root())
        flags = read_flags(args)
        quiet_flags = ([] if flags.table else ["--no-table"]) + ["--no-progress-bar"]
        if flags.description is None:
            mode = manifest.mode if manifest is not None else "replay" if replay else "record" if record else "live"
            revision = manifest.git_revision if manifest is not None else None
            quiet_flags += ["--description", eval_description(suite, mode, revision)]
        started = time.monotonic()
        with (open(folder / f"promptfoo-{suite.name}.log", "a", encoding="utf-8") as promptfoo_log,
              own_receiver(suite.config, eval_id) as (config, traced)):  # a trace receiver port of its own
            env.update(traced)
            command = promptfoo_command("eval", "-c", str(config), *quiet_flags, *args)
            console = PromptfooConsole(promptfoo_log, table=bool(flags.table), show_provider=_providers(suite) > 1)
            interrupts.on_first.append(lambda: setattr(console, "quiet", True))
            # Promptfoo's start overlaps the system's when its beforeAll waits for it (system_handoff.py)
            beside = None if interrupts.requested or not reads_system_at_start(suite) else \
                PromptfooBeside.start(command, env, interrupts)
            try:
                portal = _system_ready(systems, suite, shard, entry, manifest, folder, promptfoo_dir)
            except BaseException as exc:
                if beside is not None:
                    console.quiet = True  # Promptfoo's error and stack trace: its log's
                    beside.without_system(f"the suite's system did not start: {exc}", console.feed, env,
                                          forced=isinstance(exc, ForcedExit))
                raise
            _with_system(env, portal)
            if progress is not None:
                progress.started(suite.name, workers)
                progress.follow(suite.name, lambda: console.counts.total)
            if interrupts.requested:  # stopped while the system started: nothing ran
                if beside is not None:
                    console.quiet = True
                    beside.without_system("the run was interrupted", console.feed, env)
                result = PromptfooResult(interrupts.exit_code, None)
            else:
                def feed(line: str) -> None:
                    console.feed(line)
                    if on_first_row is not None and console.counts.total:
                        on_first_row()

                remember = _remember(entry, manifest, folder)
                if beside is None:
                    result = run_promptfoo(command, env, interrupts, feed, on_eval_id=remember)
                else:
                    result = beside.run(portal, feed, on_eval_id=remember)
        if not interrupts.requested:
            print(suite_summary(suite.name, console.counts, time.monotonic() - started, result.eval_id), flush=True)
            if shard is not None:
                for path in shard.stamp_outputs(args, project_root()):
                    print(f"shard {shard.shard} of {suite.name}: {path}", flush=True)
        pause_point("cleanup")
        killed = result.code < 0 and not interrupts.requested  # its workers may have been mid-call
        report = _cleanup(eval_id, portal, settle=interrupts.requested or killed)
        if report.error and portal.started and portal.pid is not None and not portal.alive():
            if entry is not None:
                entry.portal_died = True
            report = _cleanup_after_portal_died(suite, portal, eval_id)
        if report.acted:
            print(f"cleanup of {eval_id}: {report.summary()}", flush=True)
        if report.error:
            where = str(portal.data_dir) if portal.data_dir is not None else portal.url
            print(f"the pull requests of {eval_id} may still be active in {where}: `npm run cleanup` abandons "
                  "them (the next run sweeps them too)", flush=True)
            if manifest is not None:
                manifest.unclean.append(sweep_place(portal.data_dir, portal.url))
        elif killed and manifest is not None:  # a call already sent may land later: the next run sweeps again
            manifest.unclean.append(sweep_place(portal.data_dir, portal.url))
        complete = _complete(console.counts.total, _case_count(suite, entry))
        cut_short = interrupts.requested and not complete  # a Ctrl-C after the last row leaves the eval whole
        if cut_short and result.eval_id:
            mark_interrupted(results_db(promptfoo_config_dir(env)), result.eval_id)
            print(f"eval {result.eval_id} is marked [INTERRUPTED] in the viewer", flush=True)
        code = interrupts.exit_code if interrupts.requested else _promptfoo_code(suite, result, console.counts.total)
        if manifest is None:  # a suite run on its own: no run's end removes its temporary directory
            shutil.rmtree(temp, ignore_errors=True)
        if progress is not None:
            progress.finished(suite.name)
        if entry is not None:
            entry.exit_code, entry.interrupted, entry.eval_id = code, cut_short, result.eval_id
    return code


def _complete(rows: int, expected: int | None) -> bool:
    return expected is not None and rows >= expected


def _promptfoo_code(suite: Suite, result: PromptfooResult, rows: int) -> int:
    """Promptfoo's exit status; one killed by a signal (the out-of-memory killer, a stray kill) is a
    run that could not complete (2), said in one line."""
    if result.code >= 0:
        return result.code
    try:
        name = signal.Signals(-result.code).name
    except ValueError:
        name = f"signal {-result.code}"
    print(f"suite {suite.name}: Promptfoo was killed by {name} after {rows} row(s); the run is incomplete "
          "(was the machine out of memory?). Its log is kept in the run's folder.", flush=True)
    return 2


def _suite_env(suite: Suite, run_id: str, workers: int, *, replay: str | None, record: str | None,
               allow_stale: bool, pack: str | None = None) -> dict[str, str]:
    """The suite's Promptfoo environment, but for its system's (:func:`_with_system`): its pack's name
    for the hooks (``AGENT_EVALS_PACK``), the suite's eval id, the run mode."""
    from agent_evals.judge import judge_configured  # lazy: keeps agent_evals.golden.record's start-up as small as it is

    env = promptfoo_env()
    for key in (PACK_ENV, REPLAY_ENV, RECORD_ENV, ALLOW_STALE_ENV, LEDGER_ENV, SYSTEM_FD_ENV):
        env.pop(key, None)
    env.update({RUN_ID_ENV: run_id, "PROMPTFOO_PYTHON_WORKERS": str(workers),
                "AGENT_EVALS_JUDGE": "1" if judge_configured() else "0", "AGENT_EVALS_CASE_LINES": "json"})
    if pack:
        env[PACK_ENV] = pack
    if replay:
        env[REPLAY_ENV] = GOLDEN if replay == GOLDEN else str(Path(replay).resolve() / suite.name)
    if record:
        env[RECORD_ENV] = str(Path(record).resolve() / suite.name)
    if allow_stale:
        env[ALLOW_STALE_ENV] = "1"
    if "REQUEST_TIMEOUT_MS" not in os.environ:  # Promptfoo's worker limit, set just above the kit's deadline
        env["REQUEST_TIMEOUT_MS"] = str(runner_request_timeout_ms(_suite_deadline(suite)))
    return env


def _with_system(env: dict[str, str], system: Running) -> None:
    """What the suite's system gives the workers (the portal's URL and token), in place of whatever
    the runner's own environment had under those names."""
    for key in system.env_keys():
        env.pop(key, None)
    env.update(system.env())


def _system_ready(systems: Systems, suite: Suite, shard: SuiteShard | None, entry: SuiteRun | None,
                  manifest: RunManifest | None, folder: Path, promptfoo_dir: str | None) -> Running:
    """The suite's system, started (or found) and swept of what dead runs left; noted in the manifest."""
    portal = systems.get(suite, shard=shard.shard if shard is not None else None)
    if entry is not None and manifest is not None:
        entry.data_dir = str(portal.data_dir.resolve()) if portal.data_dir else None
        entry.portal_url = portal.url if portal.data_dir is None else None
        entry.promptfoo_dir = promptfoo_dir
        manifest.save(folder)
    _sweep_stale(portal)
    pause_point("portal-ready")
    return portal


def python_workers(concurrency: int, rows: int | None, *, replay: bool) -> int:
    """Promptfoo's Python workers for a suite: ``-j``, but no more than the rows to run, and on a
    replay (no model to wait for) no more than the CPUs: each worker costs ~0.6 s of CPU to start."""
    workers = concurrency if rows is None else min(concurrency, rows)
    if replay:
        workers = min(workers, os.cpu_count() or 1)
    return max(1, workers)


def _selection(suites: list[Suite], flags: Flags) -> dict[str, list[str] | None]:
    """The cases of each suite Promptfoo will run, as the preflight finds them (None: the kit cannot tell)."""
    chosen: dict[str, list[str] | None] = {}
    for suite in suites:
        try:
            tests = select_tests(load_suite(suite, lenient=True).tests, flags)
        except KitError:  # Promptfoo says what is wrong with the suite's files
            tests = None
        chosen[suite.name] = None if tests is None else [t.case_id for t in tests]
    return chosen


def _case_count(suite: Suite, entry: SuiteRun | None) -> int | None:
    """The rows the suite will run: its selected cases times the repeats (None when unknown)."""
    repeat = entry.repeat if entry is not None and entry.repeat else 1
    if entry is not None and entry.selected is not None:
        return len(entry.selected) * _providers(suite) * repeat
    try:
        return len(load_suite(suite).tests) * _providers(suite) * repeat
    except KitError:
        return None


def _suite_deadline(suite: Suite) -> float:
    """The longest deadline of the suite's providers (their ``deadline_s``, else the configured one)."""
    default = configured_deadline_s()
    try:
        values = [p.config.get("deadline_s") for p in load_suite(suite).providers]
    except KitError:
        return default
    return max([float(v) for v in values if isinstance(v, int | float)] + [default])


def _providers(suite: Suite) -> int:
    try:
        return len(load_suite(suite).providers)
    except KitError:
        return 1


def _remember(entry: SuiteRun | None, manifest: RunManifest | None, folder: Path) -> Callable[[str], None]:
    def remember(eval_id: str) -> None:
        if entry is not None and manifest is not None:
            entry.eval_id = eval_id
            manifest.save(folder)

    return remember


def _cleanup_after_portal_died(suite: Suite, portal: Running, eval_id: str) -> CleanupReport:
    """The system this runner started is gone (killed, crashed): say so, then undo through a new one
    on the same state (the side effects are on disk, not in the dead process)."""
    print(f"suite {suite.name}: its portal (pid {portal.pid}) died during the run; its log: {portal.log_file}",
          flush=True)
    try:
        with portal.reopen() as again:
            return _cleanup(eval_id, again, settle=False)
    except KitError as exc:
        return CleanupReport(error=f"no portal could be started to clean up: {exc}")


def _sweep_stale(portal: Running) -> None:
    runs, report = sweep_stale(runs_dir(), portal)
    if runs:
        print(f"swept what {runs} run(s) that died left: {report.summary()}", flush=True)


def _cleanup(run_id: str, portal: Running, *, settle: bool) -> CleanupReport:
    report = portal.undo_eval(run_id)
    if settle:  # a create call already on its way when Promptfoo stopped may land after the first sweep
        time.sleep(CLEANUP_SETTLE_S)
        late = portal.undo_eval(run_id)
        report.add(late)
    return report


def _forced(run_id: str, suite: str, systems: Systems) -> None:
    """A second Ctrl-C: say what a suite still running left in place and how to clean it, quickly."""
    eval_id = suite_eval_id(run_id, suite)
    running, system = systems.opened(suite), systems.system_of(suite)
    active = running.active(eval_id) if running is not None else []
    how = (system.stop_words if running is not None and running.started and system.stop_words
           else "clean them with: npm run cleanup")
    shown = ", ".join(active) or "none found"
    print(f"\nforced exit: {system.left_words} of {eval_id} still in place: {shown}; {how} "
          "(or later: npm run cleanup)", file=sys.stderr, flush=True)


def _finish(manifest: RunManifest, folder: Path, code: int) -> None:
    manifest.finished_at = now()
    manifest.exit_code = code
    try:
        manifest.save(folder)
    except OSError as exc:
        log.warning("could not update %s: %s", folder / "run.json", exc)
    shutil.rmtree(temp_dir(folder), ignore_errors=True)
    logs = sorted(folder.glob("*.log"))
    troubled = manifest.interrupted or manifest.unclean or any(entry.portal_died for entry in manifest.suites)
    if code in (0, 100) and not troubled:  # a clean run (cases may fail): logs are not needed
        for path in logs:
            path.unlink(missing_ok=True)
    elif logs:
        print("logs of this run: " + ", ".join(str(p) for p in logs), flush=True)


def _with_cases(suites: list[Suite], result: Preflight) -> list[Suite]:
    """The suites the filters leave some case in; the others are skipped with one line."""
    kept = []
    for suite in suites:
        cases = result.cases(suite.name)
        if cases == 0:
            print(f"suite {suite.name}: the filters select no case here; skipped", flush=True)
        else:
            kept.append(suite)
    return kept


def git_revision() -> str | None:
    """``abc1234`` (``-dirty`` when the work tree has changes), or None outside a git checkout."""
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=project_root(), capture_output=True,
                             text=True, timeout=5)
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=project_root(),
                               capture_output=True, text=True, timeout=5)
        return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def _endpoint_notice() -> None:
    if not llm_configured():
        print(
            "NOTE: no LLM endpoint is configured (AZURE_OPENAI_ENDPOINT, OPENAI_API_KEY or OPENAI_BASE_URL, "
            "see README): every live conversation will end in an error. Add --replay to run the golden "
            "conversations offline.",
            flush=True,
        )


def _grader_notice(*, replay: bool = False) -> None:
    from agent_evals.judge import judge_configured  # lazy: keeps agent_evals.golden.record's start-up as small as it is

    if judge_configured():
        return
    judged = (
        "the kit's judged checks (goal_reached, expected_statements, trajectory_quality) are graded only where "
        "the cassettes hold judge replies" if replay else
        "so are the kit's judged checks (goal_reached, expected_statements, trajectory_quality)"
    )
    print(
        "NOTE: no grader model is configured (an LLM endpoint and JUDGE_MODEL, see README): "
        "model-graded assertions (llm-rubric) are NOT GRADED in this run; " + judged + ". What is not graded "
        "is left out of the scores and listed in each row's metadata.not_graded; it never counts as passed.",
        flush=True,
    )


def _print_view_hint() -> None:
    print("\nResults are in the Promptfoo viewer: npm run eval:view", flush=True)
