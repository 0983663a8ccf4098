"""The `agent-evals` command: portal, run, check, cases, report, gate, baseline, regrade, merge, live, cleanup.

Each subcommand imports its implementation lazily, so `agent-evals --help` is fast
and a broken optional part does not break the others.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path

from agent_evals.command_signals import Terminated, stopping


def _run(args: argparse.Namespace, extra: list[str]) -> int:
    from agent_evals.runner.run import run  # lazy: a subcommand's code loads when it runs (a fast --help)

    return run(
        suite=args.suite, replay=args.replay, record=args.record, promptfoo_args=extra,
        check=not args.no_check, allow_stale=args.allow_stale, shard=args.shard, shard_durations=args.shard_durations,
        budget_usd=args.budget_usd, suites_at_once=args.suites_at_once,
        until_decided=args.repeat_until_decided, baseline=args.baseline, rerun_invalid=args.rerun_invalid,
    )


def _check(args: argparse.Namespace, extra: list[str]) -> int:
    from agent_evals.preflight.command import check_command  # lazy: a subcommand's code loads when it runs (a fast --help)

    return check_command(
        args.suite, replay=args.replay, offline=args.offline, allow_stale=args.allow_stale, promptfoo_args=extra
    )


def _cases_expand(args: argparse.Namespace) -> int:
    from agent_evals.cases import expand_command  # lazy: a subcommand's code loads when it runs (a fast --help)

    return expand_command(args.suite, check=args.check)


def _cassettes_upgrade(args: argparse.Namespace) -> int:
    from agent_evals.conversation.cassette import CassetteError, upgrade_folder  # lazy: a subcommand's code loads when it runs (a fast --help)

    if not args.folder.is_dir():
        print(f"cassettes upgrade: {args.folder} is not a folder")
        return 2
    try:
        upgraded = upgrade_folder(args.folder)
    except CassetteError as exc:
        print(f"cassettes upgrade: [{exc.kind}] {exc} (nothing was changed)")
        return 2
    print(f"cassettes upgrade: {len(upgraded)} cassette(s) upgraded in {args.folder} "
          "(an @1 cassette's fingerprints are unknown; an older record's are kept)")
    return 0


def _golden(args: argparse.Namespace) -> int:
    from agent_evals.golden.record import record_command  # lazy: a subcommand's code loads when it runs (a fast --help)

    return record_command(args.suites, stale_only=args.stale)


def _view(args: argparse.Namespace) -> int:
    from agent_evals.runner.viewer import view  # lazy: a subcommand's code loads when it runs (a fast --help)

    passed = [*(["-p", str(args.port)] if args.port is not None else []), *(["-y"] if args.yes else []),
              *(["-n"] if args.no else []),
              *(["--filter-description", args.filter_description] if args.filter_description else []),
              *(["--env-file", args.env_file] if args.env_file else []), *(["--verbose"] if args.pf_verbose else []),
              *([args.directory] if args.directory else [])]
    return view(passed, host=args.host)


def _report(args: argparse.Namespace) -> int:
    from agent_evals.report.command import report_command  # lazy: a subcommand's code loads when it runs (a fast --help)

    return report_command(
        args.results, k=args.k, output_format=args.format, output=args.output, baseline=args.baseline,
        across_grader_versions=args.across_grader_versions,
    )


def _gate(args: argparse.Namespace) -> int:
    from agent_evals.report.command import gate_command  # lazy: a subcommand's code loads when it runs (a fast --help)

    return gate_command(args.results, gate_file=args.gate, baseline=args.baseline,
                        across_grader_versions=args.across_grader_versions)


def _baseline_bless(args: argparse.Namespace) -> int:
    from agent_evals.report.bless import bless_command  # lazy: a subcommand's code loads when it runs (a fast --help)

    return bless_command(args.results, output=args.output, across_grader_versions=args.across_grader_versions)


def _regrade(args: argparse.Namespace) -> int:
    from agent_evals.regrade.command import regrade_command  # lazy: a subcommand's code loads when it runs (a fast --help)

    return regrade_command(args.eval, output=args.output, judge=args.judge, import_eval=not args.no_import)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


def _merge(args: argparse.Namespace) -> int:
    from agent_evals.runner.merge_command import merge_command  # lazy: a subcommand's code loads when it runs (a fast --help)

    return merge_command(args.files, output=args.output, import_eval=not args.no_import)


def _cleanup(args: argparse.Namespace) -> int:
    from agent_evals.runner.cleanup_command import cleanup_command  # lazy: a subcommand's code loads when it runs (a fast --help)

    return cleanup_command(portal_url=args.portal_url, data_dir=args.data_dir, eval_id=args.eval_id)


def _live(args: argparse.Namespace) -> int:
    import os  # lazy: a subcommand's code loads when it runs (a fast --help)

    from agent_evals.live.command import LiveOptions, live_command  # lazy: a subcommand's code loads when it runs (a fast --help)

    if getattr(args, "live_command", None) == "promote":
        from agent_evals.live.promote import promote_command  # lazy: a subcommand's code loads when it runs (a fast --help)

        return promote_command(args)
    return live_command(LiveOptions(
        portal=args.portal or (None if args.files else os.environ.get("PORTAL_URL")),
        token=os.environ.get("PORTAL_TOKEN") or None, files=tuple(args.files or ()), window=args.window,
        since=args.since, until=args.until, agents=tuple(args.agent or ()), count=args.count, rate=args.rate,
        seed=args.seed, stratify=args.stratify, policy=args.policy, thresholds=args.thresholds, output=args.output,
        import_eval=not args.no_import, output_format=args.format, report_output=args.report_output,
        judge=not args.no_judge, jobs=args.jobs,
    ))


def _system_commands(sub: argparse._SubParsersAction) -> None:
    """The subcommands the built-in packs' systems add (``System.add_commands``)."""
    from agent_evals.packs import built_in  # lazy: a subcommand's code loads when it runs (a fast --help)

    seen: set[type] = set()
    for pack in built_in().values():
        if type(pack.system) not in seen:
            seen.add(type(pack.system))
            pack.system.add_commands(sub)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-evals", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log at DEBUG level")
    sub = parser.add_subparsers(dest="command", required=True)

    _system_commands(sub)  # the systems' own: `portal serve|reset` (the portal's)

    run = sub.add_parser(
        "run",
        help="run a suite (or all) through promptfoo; unknown flags go to `promptfoo eval`",
        description="Run evaluation suites. Any flag not listed here is passed to `promptfoo eval`.",
        allow_abbrev=False,  # Promptfoo's --repeat is not --repeat-until-decided
    )
    run.add_argument("suite", nargs="?", help="suite name (a folder under evals/) or 'all'")
    run.add_argument(
        "--replay",
        nargs="?",
        const="golden",
        default=None,
        metavar="DIR",
        help="replay recorded conversations (default: each suite's golden/ folder); no model needed",
    )
    run.add_argument("--record", default=None, metavar="DIR", help="record every conversation as a cassette")
    run.add_argument("--allow-stale", action="store_true", help="replay cassettes whose fingerprints changed")
    run.add_argument("--no-check", action="store_true", help="skip the preflight check (agent-evals check)")
    run.add_argument("--shard", default=None, metavar="I/N",
                     help="run shard I of N of each suite's cases (docs/scale.md); merge with `agent-evals merge`")
    run.add_argument("--budget-usd", default=None, metavar="USD",
                     help="stop spending at this many US dollars (agent + simulated user + judge; docs/scale.md)")
    run.add_argument("--shard-durations", default=None, metavar="REPORT.json",
                     help="balance the shards by the case times of a stored report (--format json)")
    run.add_argument("--suites-at-once", type=int, default=None, metavar="N",
                     help="run up to N suites side by side (default: 3 on a replay with 2 CPUs or more, else 1)")
    run.add_argument("--repeat-until-decided", type=_positive, default=None, metavar="MAX",
                     help="run each case again only while its verdict could still change, up to MAX runs (docs/report.md)")
    run.add_argument("--baseline", default=None, metavar="EVAL|FILE",
                     help="with --repeat-until-decided: also until the regression verdict against this baseline is decided")
    run.add_argument("--rerun-invalid", type=int, default=0, metavar="N",
                     help="run the rows the simulated user spoiled (invalid) again, up to N times; every attempt "
                          "is kept (docs/user-checks.md)")
    run.set_defaults(handler=_run, passthrough=True)

    check = sub.add_parser(
        "check", allow_abbrev=False,
        help="check suites before a run: configs, cases, assertions, cassettes, models; exit 2 on a problem",
        description="Check suites before spending anything. Promptfoo filter flags select the cases.",
    )
    check.add_argument("suite", nargs="?", help="suite name (a folder under evals/) or 'all'")
    check.add_argument("--replay", nargs="?", const="golden", default=None, metavar="DIR",
                       help="check for a replay: cassettes present and not stale")
    check.add_argument("--offline", action="store_true", help="do not send a request to the models")
    check.add_argument("--allow-stale", action="store_true", help="stale cassettes are not a problem")
    check.set_defaults(handler=_check, passthrough=True)

    cases = sub.add_parser("cases", help="cases generated from a suite's templates and data table")
    cases_sub = cases.add_subparsers(dest="cases_command", required=True)
    expand = cases_sub.add_parser(
        "expand", help="write a suite's generated cases and golden plan entries (cases/templates.yaml + its table)"
    )
    expand.add_argument("suite", help="suite name (a folder under evals/) or 'all'")
    expand.add_argument("--check", action="store_true", help="write nothing; exit 1 when a generated file is out of sync")
    expand.set_defaults(handler=_cases_expand)

    cassettes = sub.add_parser("cassettes", help="recorded conversations")
    cassettes_sub = cassettes.add_subparsers(dest="cassettes_command", required=True)
    upgrade = cassettes_sub.add_parser("upgrade", help="upgrade cassettes of an older format (or with an older run record) in a folder, in place")
    upgrade.add_argument("folder", type=Path)
    upgrade.set_defaults(handler=_cassettes_upgrade)

    results_help = "'latest' (default: the newest run), an eval id, a run id, or a Promptfoo -o JSON file"
    baseline_help = "a baseline: a report JSON (--format json), a -o JSON file, an eval or run id"
    across_help = "compare with a baseline whose checks' versions, configs or judge differ (listed)"
    report = sub.add_parser(
        "report",
        help="cases with pass^k and flaky labels, groups, metrics, failure patterns (exit 2: unreadable)",
        description="Summarize Promptfoo results by case across repeats and providers.",
    )
    report.add_argument("results", nargs="*", default=[], metavar="EVAL|latest|FILE.json", help=results_help)
    report.add_argument("--k", type=_positive, default=None, help="pass^k's k (default: each case's runs)")
    report.add_argument("--format", choices=["terminal", "markdown", "json", "junit"], default="terminal")
    report.add_argument("-o", "--output", type=Path, default=None, help="write it to this file, not stdout")
    report.add_argument("--baseline", default=None, metavar="EVAL|FILE", help=baseline_help)
    report.add_argument("--across-grader-versions", action="store_true", help=across_help)
    report.set_defaults(handler=_report)

    gate = sub.add_parser(
        "gate",
        help="judge results with the gate file: exit 0 it holds, 1 it is broken, 2 it cannot decide",
        description="Check results against the thresholds of a gate file (docs/report.md).",
    )
    gate.add_argument("results", nargs="*", default=[], metavar="CURRENT", help=results_help)
    gate.add_argument("--gate", type=Path, default=None, help="the gate file (default: evals/gate.yaml)")
    gate.add_argument("--baseline", default=None, metavar="EVAL|FILE", help=baseline_help)
    gate.add_argument("--across-grader-versions", action="store_true", help=across_help)
    gate.set_defaults(handler=_gate)

    baseline = sub.add_parser("baseline", help="explicit baselines for report --baseline and the gate")
    baseline_sub = baseline.add_subparsers(dest="baseline_command", required=True)
    bless = baseline_sub.add_parser(
        "bless", help="store results as the baseline, with the date, revision, agent, models and graders",
        description="Bless results (several add up) as the baseline the gate compares with (docs/report.md).",
    )
    bless.add_argument("results", nargs="*", default=[], metavar="EVAL|latest|FILE.json", help=results_help)
    bless.add_argument("-o", "--output", type=Path, default=Path("evals/baseline.json"),
                       help="where to store it (default: evals/baseline.json)")
    bless.add_argument("--across-grader-versions", action="store_true",
                       help="bless results whose runs were graded by different versions of a check")
    bless.set_defaults(handler=_baseline_bless)

    regrade = sub.add_parser(
        "regrade", help="re-grade a stored eval with today's checks, written beside it as a new eval",
        description="Re-grade a stored eval from its recorded end state and run records with today's kit checks.",
    )
    regrade.add_argument("eval", metavar="EVAL|FILE.json", help="an eval id of the results database, or a -o file")
    regrade.add_argument("--judge", action="store_true",
                         help="ask the judge model again (default: the judge's recorded verdicts, where they still apply)")
    regrade.add_argument("-o", "--output", type=Path, default=None,
                         help="where to write it (default: results/<eval id>.regraded.json)")
    regrade.add_argument("--no-import", action="store_true", help="write the file only, not into the viewer's database")
    regrade.set_defaults(handler=_regrade)

    merge = sub.add_parser(
        "merge",
        help="merge shards' results files into one eval, imported into the viewer (exit 1: a shard missing)",
        description="Merge the results files of `agent-evals run … --shard I/N` into one Promptfoo eval.",
    )
    merge.add_argument("files", nargs="+", type=Path, metavar="FILE.json", help="the shards' results files")
    merge.add_argument("-o", "--output", default=None, metavar="MERGED.json",
                       help="where to write it ({suite} for several suites; default: <suite>.json beside the first)")
    merge.add_argument("--no-import", action="store_true", help="write the file only, not into the viewer's database")
    merge.set_defaults(handler=_merge)

    golden = sub.add_parser(
        "golden", help="record the golden conversations (golden/plan.yaml played by a scripted model): a new or "
                       "changed case with --stale",
        description="Record each suite's golden cassettes from its golden/plan.yaml: the suite runs for real with a "
                    "scripted model playing the plan; each case that passes is written, each that does not is named.",
    )
    from agent_evals.golden import add_arguments as golden_arguments  # lazy: a subcommand's code loads when it runs (a fast --help)

    golden_arguments(golden)
    golden.set_defaults(handler=_golden)

    _live_parser(sub)

    viewer = sub.add_parser(
        "view", help="open the Promptfoo viewer on this project's results (this machine only, unless --host)",
        description="Promptfoo's viewer (promptfoo view) on this project's results database.",
    )
    viewer.add_argument("directory", nargs="?", help="Promptfoo's folder to read (default: its results database)")
    viewer.add_argument("--host", default="127.0.0.1",
                        help="the address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 shares the "
                             "results with everyone who can reach this machine)")
    viewer.add_argument("-p", "--port", type=int, default=None, help="port (Promptfoo's default: 15500)")
    viewer.add_argument("-y", "--yes", action="store_true", help="open the browser without asking")
    viewer.add_argument("-n", "--no", action="store_true", help="do not ask and do not open the browser")
    viewer.add_argument("--filter-description", default=None, metavar="PATTERN",
                        help="list only evals whose description matches this regex")
    viewer.add_argument("--env-file", "--env-path", default=None, metavar="PATH", help="a .env file for Promptfoo")
    viewer.add_argument("--verbose", dest="pf_verbose", action="store_true", help="Promptfoo's debug logs")
    viewer.set_defaults(handler=_view)

    cleanup = sub.add_parser("cleanup", help="abandon every active PR created by eval runs")
    cleanup.add_argument("--portal-url", default=None, help="a running portal (default: $PORTAL_URL)")
    cleanup.add_argument("--data-dir", type=Path, default=None, help="or the portal's data dir, offline")
    cleanup.add_argument("--eval-id", default=None, help="only the PRs of this eval run")
    cleanup.set_defaults(handler=_cleanup)
    return parser


def _suite_and_flags(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]) -> str | None:
    """For ``run`` and ``check``: a suite was given, and every other flag is one ``promptfoo eval`` knows;
    else one line saying what is wrong."""
    from agent_evals.runner.cli_flags import unknown_flag  # lazy: a subcommand's code loads when it runs (a fast --help)
    from agent_evals.suites.discovery import ALL, discover  # lazy: a subcommand's code loads when it runs (a fast --help)

    names = [suite.name for suite in discover()]
    args.suite = args.suite or None  # suite_first puts "" where no suite was given
    subparser = _subparsers(parser).choices[args.command]
    problem = unknown_flag(extra, subparser._option_string_actions)
    if problem is None and args.suite is None:
        problem = f"which suite? give one of {', '.join(names)}, or {ALL}"
    return problem


def _suite_first(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``run``/``check``: the suite moved before the flags (``cli_flags.suite_first``), so a Promptfoo flag's
    value is never taken for it."""
    from agent_evals.runner.cli_flags import Takes, suite_first  # lazy: a subcommand's code loads when it runs (a fast --help)
    from agent_evals.suites.discovery import ALL, discover  # lazy: a subcommand's code loads when it runs (a fast --help)

    commands = _subparsers(parser).choices
    at = next((i for i, word in enumerate(argv) if word in commands), None)
    if at is None or argv[at] not in ("run", "check"):
        return argv
    kit: dict[str, Takes] = {flag: "none" if action.nargs == 0 else "optional" if action.nargs == "?" else "one"
           for flag, action in commands[argv[at]]._option_string_actions.items()}
    return [*argv[:at + 1], *suite_first(argv[at + 1:], kit, [*(suite.name for suite in discover()), ALL])]


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def _unknown(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]) -> str:
    """One line for arguments a subcommand does not take, with the closest flag it has."""
    import difflib  # lazy: a subcommand's code loads when it runs (a fast --help)

    sub: argparse.ArgumentParser = _subparsers(parser).choices[args.command]
    for name in ("portal_command", "cases_command", "cassettes_command", "live_command"):  # a subcommand's own (portal: a system's)
        if getattr(args, name, None):
            sub = _subparsers(sub).choices[getattr(args, name)]
    word = extra[0].split("=", 1)[0]
    if not word.startswith("-"):
        return f"unexpected argument {word!r} (see --help)"
    close = difflib.get_close_matches(word, list(sub._option_string_actions), n=1, cutoff=0.7)
    return f"unknown flag {word}" + (f"; did you mean {close[0]}?" if close else " (see --help)")


def _live_parser(sub: argparse._SubParsersAction) -> None:
    live = sub.add_parser(
        "live", help="score the agents' real conversations into an eval and a report; alert (exit 1) on thresholds",
        description="Sample stored conversations, score them with the live policy (docs/live.md). "
                    "`agent-evals live promote ID --suite S` turns one into a case.",
    )
    live.add_argument("--portal", default=None, metavar="URL", help="read from this portal (default: $PORTAL_URL)")
    live.add_argument("--from", dest="files", action="append", type=Path, metavar="FILE.jsonl",
                      help="read conversations, run records or OTLP/JSON traces from a file (repeatable)")
    live.add_argument("--window", default="all", help="all (default), today, yesterday (UTC), <N>h, <N>d")
    live.add_argument("--since", default=None, metavar="TIME", help="started at or after (ISO-8601)")
    live.add_argument("--until", default=None, metavar="TIME", help="started before (ISO-8601)")
    live.add_argument("--agent", action="append", default=None, help="only this agent (repeatable; default: the policy's)")
    live.add_argument("--count", type=_positive, default=None, help="at most this many conversations")
    live.add_argument("--rate", type=float, default=None, help="this share of them (0..1)")
    live.add_argument("--seed", type=int, default=0, help="the sample's seed (the same seed, the same sample)")
    live.add_argument("--stratify", default=None, metavar="S,S", help="first: down, tool_errors, long")
    live.add_argument("--policy", type=Path, default=None, help="the policy (default: evals/live-policy.yaml)")
    live.add_argument("--thresholds", type=Path, default=None,
                      help="alert thresholds (default: evals/live-thresholds.yaml when it exists)")
    live.add_argument("-o", "--output", type=Path, default=None, help="the eval's results file (default: results/live/)")
    live.add_argument("--no-import", action="store_true", help="write the file only, not into the viewer's database")
    live.add_argument("--format", choices=["terminal", "markdown", "json"], default="terminal", help="the report's form")
    live.add_argument("--report-output", type=Path, default=None, help="write the report to this file")
    live.add_argument("--no-judge", action="store_true", help="leave the judged checks NOT GRADED")
    live.add_argument("--jobs", type=_positive, default=None, help="score in this many processes (default: the CPUs, at most 4)")
    live.set_defaults(handler=_live)
    live_sub = live.add_subparsers(dest="live_command", required=False)
    promote = live_sub.add_parser("promote", help="turn a stored conversation into a case of a suite (for review)")
    promote.add_argument("conversation", help="the conversation's id")
    promote.add_argument("--suite", required=True, help="the suite to add the case to (a folder under evals/)")
    promote.add_argument("--id", dest="case_id", default=None, help="the case id (default: the next free P<nn>)")
    promote.add_argument("--user", choices=["auto", "messages", "simulated"], default="auto",
                         help="fixed messages, or a simulated-user brief drafted by the judge (auto: simulated with a judge)")
    promote.add_argument("--portal", default=None, metavar="URL", help="read it from this portal (default: $PORTAL_URL)")
    promote.add_argument("--from", dest="files", action="append", type=Path, metavar="FILE.jsonl",
                         help="or from a file of conversations")
    promote.add_argument("--policy", type=Path, default=None, help="the policy (default: evals/live-policy.yaml)")
    promote.add_argument("--no-golden", action="store_true", help="write the case only, not its golden conversation")
    promote.set_defaults(handler=_live)


def main(argv: list[str] | None = None) -> int:
    """``agent-evals`` (``argv``: the arguments; None: this process's own command line, which exits
    when the command is over: SIGINT and SIGTERM are then ignored, see :mod:`agent_evals.command_signals`)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(_suite_first(parser, list(sys.argv[1:] if argv is None else argv)))
    if extra and not getattr(args, "passthrough", False):
        print(f"agent-evals {args.command}: {_unknown(parser, args, extra)}", file=sys.stderr)
        return 2
    if args.command in ("run", "check") and (problem := _suite_and_flags(parser, args, extra)) is not None:
        print(f"agent-evals {args.command}: {problem}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if not args.verbose:  # one line per request is the libraries' INFO, not the user's business
        for name in ("httpx", "httpx2", "httpcore", "httpcore2", "mcp", "openai"):
            logging.getLogger(name).setLevel(logging.WARNING)
    try:
        # Ctrl-C and SIGTERM outside a run's own handling (agent_evals.command_signals); once the process's own
        # command is over, both are ignored while it exits
        with stopping(then_ignore=argv is None):
            if getattr(args, "passthrough", False):
                return args.handler(args, extra)
            return args.handler(args)
    except KeyboardInterrupt:
        print(f"\nagent-evals {args.command}: interrupted", file=sys.stderr, flush=True)
        return 130
    except Terminated:
        print(f"\nagent-evals {args.command}: terminated (SIGTERM)", file=sys.stderr, flush=True)
        return 128 + signal.SIGTERM


if __name__ == "__main__":
    sys.exit(main())
