"""The spoke system's own subcommands of ``agent-evals``: ``portal serve`` and ``portal reset``."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any
from agent_evals.packs.spoke.runs import suite_portal_settings


def _portal_serve(args: argparse.Namespace) -> int:
    from agent_evals.packs.spoke.portal.server import serve  # lazy: loads fastapi, jsonschema, mcp, pydantic, starlette, uvicorn only when used (start-up time)

    data_dir, settings, port = args.data_dir, args.settings, args.port
    if args.suite:
        try:
            data_dir, settings, port = suite_portal_settings(args.suite, data_dir, settings, port)
        except ValueError as exc:
            logging.getLogger("agent_evals.packs.spoke.portal").error("%s", exc)
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
    from agent_evals.packs.spoke.portal.server import reset  # lazy: loads fastapi, jsonschema, mcp, pydantic, starlette, uvicorn only when used (start-up time)

    return reset(data_dir=args.data_dir, force=args.force)


def add_commands(sub: Any) -> None:
    """``agent-evals portal serve|reset`` (``sub``: the command's subparsers)."""
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
