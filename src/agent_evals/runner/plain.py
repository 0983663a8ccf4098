"""A suite run by plain ``npx promptfoo eval -c evals/<suite>/promptfooconfig.yaml``.

``hooks/kit.js`` calls this from Promptfoo's ``beforeAll`` when the kit's runner did not start it:
``start`` asks the system of the suite's pack to start or attach (a portal, for one: the one
``PORTAL_URL`` names, the one serving the suite's data dir, or a new one on the stable port with a
fresh token, owned by the Promptfoo process: it abandons the run's PRs and stops when Promptfoo
exits, Ctrl-C included) and prints ``{"run_id", "started", "env", "where"}`` for the hook to put
``env`` in the environment (the pack's name in ``AGENT_EVALS_PACK`` included; secrets such as the
portal's token travel only there, never to disk) and print ``where``. ``stop``
(``afterAll``) asks the same system to undo the run and take back what ``start`` made
(``stop_plain``: the release pack's run folder), and stops a process it started.

    python -m agent_evals.runner.plain start <suite folder> --owner-pid <promptfoo pid>
    python -m agent_evals.runner.plain stop <pid> <run id>
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import uuid
from pathlib import Path

from agent_evals.cleanup import cleanup_run
from agent_evals.packs import load_pack
from agent_evals.suites.discovery import Suite
from agent_evals.runner.systems import suite_pack
from agent_evals.system import PACK_ENV, SystemFailure


def start(folder: Path, owner_pid: int) -> dict[str, object]:
    suite = Suite(folder.name, folder)
    run_id = f"run-{uuid.uuid4().hex[:12]}"
    pack = suite_pack(suite)
    answer = load_pack(pack).system.start_plain(suite, owner_pid=owner_pid, run_id=run_id)
    env = {**answer.get("env", {}), PACK_ENV: pack}
    return {"run_id": run_id, "started": answer.get("started"), "env": env, "where": answer.get("where") or ""}


def stop(pid: int, run_id: str) -> dict[str, object]:
    pack = os.environ.get(PACK_ENV, "").strip()  # set by start, in the hook's environment
    report = load_pack(pack).system.stop_plain(pid, run_id) if pack else cleanup_run(run_id)
    if pid:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
    return report.as_dict()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agent_evals.runner.plain")
    sub = parser.add_subparsers(dest="command", required=True)
    begin = sub.add_parser("start")
    begin.add_argument("folder", type=Path)
    begin.add_argument("--owner-pid", type=int, required=True)
    end = sub.add_parser("stop")
    end.add_argument("pid", type=int)
    end.add_argument("run_id")
    args = parser.parse_args(argv)
    try:
        answer = start(args.folder, args.owner_pid) if args.command == "start" else stop(args.pid, args.run_id)
    except SystemFailure as exc:
        print(json.dumps({"error": f"[{exc.kind}] {exc}"}))
        return 2
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
