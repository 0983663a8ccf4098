"""The `agent-evals` command: portal, run, check, cases, report, gate, merge, cleanup.

Each subcommand imports its implementation lazily, so `agent-evals --help` is fast
and a broken optional part does not break the others.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path


def _portal_serve(args: argparse.Namespace) -> int:
    from agent_evals.portal.server import serve

    data_dir, settings, port = args.data_dir, args.settings, args.port
    if args.suite:
        from agent_evals.runner.portals import suite_portal_settings

        try:
            data_dir, settings, port = suite_portal_settings(args.suite, data_dir, settings, port)
        except ValueError as exc:
            logging.getLogger("agent_evals.portal").error("%s", exc)
            return 2
    return serve(
        host=args.host,
        port=8400 if port is None else port,
        data_dir=data_dir,
        settings_file=settings,
        public_url=args.public_url,
        owner_pid=args.owner_pid,
        sweep_eval_ids=args.sweep_eval_id,
    )


def _portal_reset(args: argparse.Namespace) -> int:
    from agent_evals.portal.server import reset

    return reset(data_dir=args.data_dir, force=args.force)


def _run(args: argparse.Namespace, extra: list[str]) -> int:
    from agent_evals.runner.run import run

    return run(
        suite=args.suite, replay=args.replay, record=args.record, promptfoo_args=extra,
        check=not args.no_check, allow_stale=args.allow_stale, shard=args.shard, shard_durations=args.shard_durations,
        budget_usd=args.budget_usd, suites_at_once=args.suites_at_once, rerun_invalid=args.rerun_invalid,
    )


def _check(args: argparse.Namespace, extra: list[str]) -> int:
    from agent_evals.preflight.command import check_command

    return check_command(
        args.suite, replay=args.replay, offline=args.offline, allow_stale=args.allow_stale, promptfoo_args=extra
    )


def _cases_expand(args: argparse.Namespace) -> int:
    from agent_evals.cases import expand_command

    return expand_command(args.suite, check=args.check)


def _cassettes_upgrade(args: argparse.Namespace) -> int:
    from agent_evals.conversation.cassette import upgrade_folder

    if not args.folder.is_dir():
        print(f"cassettes upgrade: {args.folder} is not a folder")
        return 2
    upgraded = upgrade_folder(args.folder)
    print(f"cassettes upgrade: {len(upgraded)} cassette(s) upgraded in {args.folder} (their fingerprints are unknown)")
    return 0


def _view(args: argparse.Namespace, extra: list[str]) -> int:
    from agent_evals.runner.run import view

    return view(extra)


def _report(args: argparse.Namespace) -> int:
    from agent_evals.report.command import report_command

    return report_command(
        args.results, k=args.k, output_format=args.format, output=args.output, baseline=args.baseline
    )


def _gate(args: argparse.Namespace) -> int:
    from agent_evals.report.command import gate_command

    return gate_command(args.results, gate_file=args.gate, baseline=args.baseline)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


def _merge(args: argparse.Namespace) -> int:
    from agent_evals.shards.merge_command import merge_command

    return merge_command(args.files, output=args.output, import_eval=not args.no_import)


def _cleanup(args: argparse.Namespace) -> int:
    from agent_evals.runner.cleanup_command import cleanup_command

    return cleanup_command(portal_url=args.portal_url, data_dir=args.data_dir, eval_id=args.eval_id)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-evals", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log at DEBUG level")
    sub = parser.add_subparsers(dest="command", required=True)

    portal = sub.add_parser("portal", help="the portal backend (MCP tools over the git test repository)")
    portal_sub = portal.add_subparsers(dest="portal_command", required=True)
    serve = portal_sub.add_parser("serve", help="serve the portal (MCP at /mcp, REST at /api)")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    serve.add_argument("--port", type=int, default=None, help="port (default 8400; 0 picks a free one)")
    serve.add_argument("--data-dir", type=Path, default=None, help="test repository and PR database")
    serve.add_argument("--settings", type=Path, default=None, help="customer settings file (YAML or JSON)")
    serve.add_argument("--suite", default=None,
                       help="serve the portal a suite runs against (its data dir, settings and port)")
    serve.add_argument("--public-url", default=None, help="base URL used in PR links (default: from host/port)")
    serve.add_argument("--owner-pid", type=int, default=None, help=argparse.SUPPRESS)
    serve.add_argument("--sweep-eval-id", action="append", default=[], help=argparse.SUPPRESS)
    serve.set_defaults(handler=_portal_serve)
    reset = portal_sub.add_parser("reset", help="re-create the test repository from the seed data")
    reset.add_argument("--data-dir", type=Path, default=None)
    reset.add_argument("--force", action="store_true", help="reset even when pull requests are active")
    reset.set_defaults(handler=_portal_reset)

    run = sub.add_parser(
        "run",
        help="run a suite (or all) through promptfoo; unknown flags go to `promptfoo eval`",
        description="Run evaluation suites. Any flag not listed here is passed to `promptfoo eval`.",
    )
    run.add_argument("suite", help="suite name (a folder under evals/) or 'all'")
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
    run.add_argument("--rerun-invalid", type=int, default=0, metavar="N",
                     help="run the rows the simulated user spoiled (invalid) again, up to N times; every attempt "
                          "is kept (docs/user-checks.md)")
    run.set_defaults(handler=_run, passthrough=True)

    check = sub.add_parser(
        "check",
        help="check suites before a run: configs, cases, assertions, cassettes, models; exit 2 on a problem",
        description="Check suites before spending anything. Promptfoo filter flags select the cases.",
    )
    check.add_argument("suite", help="suite name (a folder under evals/) or 'all'")
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
    upgrade = cassettes_sub.add_parser("upgrade", help="upgrade cassettes of an older format in a folder, in place")
    upgrade.add_argument("folder", type=Path)
    upgrade.set_defaults(handler=_cassettes_upgrade)

    results_help = "'latest' (default: the newest run), an eval id, a run id, or a Promptfoo -o JSON file"
    baseline_help = "a baseline: a report JSON (--format json), a -o JSON file, an eval or run id"
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
    report.set_defaults(handler=_report)

    gate = sub.add_parser(
        "gate",
        help="judge results with the gate file: exit 0 it holds, 1 it is broken, 2 it cannot decide",
        description="Check results against the thresholds of a gate file (docs/report.md).",
    )
    gate.add_argument("results", nargs="*", default=[], metavar="CURRENT", help=results_help)
    gate.add_argument("--gate", type=Path, default=None, help="the gate file (default: evals/gate.yaml)")
    gate.add_argument("--baseline", default=None, metavar="EVAL|FILE", help=baseline_help)
    gate.set_defaults(handler=_gate)

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

    viewer = sub.add_parser("view", help="open the Promptfoo viewer on this project's results")
    viewer.set_defaults(handler=_view, passthrough=True)

    cleanup = sub.add_parser("cleanup", help="abandon every active PR created by eval runs")
    cleanup.add_argument("--portal-url", default=None, help="a running portal (default: $PORTAL_URL)")
    cleanup.add_argument("--data-dir", type=Path, default=None, help="or the portal's data dir, offline")
    cleanup.add_argument("--eval-id", default=None, help="only the PRs of this eval run")
    cleanup.set_defaults(handler=_cleanup)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "passthrough", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if not args.verbose:  # one line per request is the libraries' INFO, not the user's business
        for name in ("httpx", "httpx2", "httpcore", "httpcore2", "mcp", "openai"):
            logging.getLogger(name).setLevel(logging.WARNING)
    if getattr(args, "passthrough", False):
        return args.handler(args, extra)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
