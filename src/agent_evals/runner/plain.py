"""A suite run by plain ``npx promptfoo eval -c evals/<suite>/promptfooconfig.yaml``.

``hooks/kit.js`` calls this from Promptfoo's ``beforeAll`` when ``PORTAL_URL`` is not set
(the kit's runner sets it): ``start`` finds the suite's portal (the one serving its data dir,
or a new one on the stable port with a fresh token, owned by the Promptfoo process: it
abandons the run's PRs and stops when Promptfoo exits, Ctrl-C included) and prints
``{"url", "token", "run_id", "started"}`` for the hook to put in the environment — the token
is never written to disk. ``stop`` (``afterAll``) abandons the run's PRs and stops a portal it
started.

    python -m agent_evals.runner.plain start <suite folder> --owner-pid <promptfoo pid>
    python -m agent_evals.runner.plain stop <portal pid> <run id>
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import sys
import time
import uuid
from pathlib import Path

from agent_evals.runner.portals import PortalSetupError, _free, _shared, data_dir_of, stable_port
from agent_evals.runner.suites import Suite


def start(folder: Path, owner_pid: int) -> dict[str, object]:
    from agent_evals.packs.spoke.portal.process import PortalProcess, PortalStartError

    suite = Suite(folder.name, folder)
    run_id = f"run-{uuid.uuid4().hex[:12]}"
    shared = _shared(suite, data_dir_of(suite))
    if shared is not None:
        return {"url": shared.url, "token": shared.token, "run_id": run_id, "started": None}
    port = stable_port(suite)
    process = PortalProcess(
        data_dir=data_dir_of(suite), token=secrets.token_urlsafe(32), settings_file=suite.portal_settings,
        port=port if _free(port) else 0, owner_pid=owner_pid, sweep_eval_ids=(run_id,),
    )
    try:
        process.start()
    except PortalStartError as exc:
        raise PortalSetupError(f"the portal for {suite.name} did not start: {str(exc).splitlines()[0]}") from None
    return {"url": process.url, "token": process.token, "run_id": run_id, "started": process.pid}


def stop(pid: int, run_id: str) -> dict[str, object]:
    from agent_evals.cleanup import cleanup_run
    from agent_evals.packs.spoke.portal.api import PortalAPI

    report = cleanup_run(run_id, PortalAPI.from_env())
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
    except PortalSetupError as exc:
        print(json.dumps({"error": f"[portal] {exc}"}))
        return 2
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
