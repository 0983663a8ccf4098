"""What a case's fixtures cost: making them through the portal before the conversation and
removing them after, per case, for each kind the spoke pack has (a pull request whose gate
fails, an abandoned one, an extra spoke on main), on a real portal over its git repository.

    .venv/bin/python benchmarks/fixture_cost.py [--runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agent_evals.packs import load_pack
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.portal.api import PortalAPI

KINDS = {
    "pull request, gate fails": [{"pull_request": {"copy": "crm-dev-neu", "name": "crm-dev-weu",
                                                   "changes": {"/location": "westeurope"}, "validation": "failed"}}],
    "pull request, abandoned": [{"pull_request": {"copy": "hr-portal-test-weu", "name": "hr-portal-dev-weu",
                                                  "address_space": "10.40.12.0/22", "state": "abandoned"}}],
    "extra spoke on main": [{"spoke": {"copy": "analytics-test-sdc", "name": "ledger-test-sdc",
                                       "address_space": "10.61.0.0/21"}}],
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    pack = load_pack("spoke")
    with tempfile.TemporaryDirectory() as tmp, PortalProcess(data_dir=Path(tmp) / "data") as portal:
        api = PortalAPI(portal.url, token=portal.token)
        print(f"fixture set-up and clean-up per case, median of {args.runs} (ms):")
        for label, fixtures in KINDS.items():
            made, removed = [], []
            for run in range(args.runs):
                trace = {"X-Eval-Id": "eval-bench", "X-Test-Id": f"B{run}#{label[:4]}"}
                started = time.perf_counter()
                pack.create_fixtures(api, fixtures, trace)
                middle = time.perf_counter()
                api.remove_fixtures(test_id=trace["X-Test-Id"])
                made.append((middle - started) * 1000)
                removed.append((time.perf_counter() - middle) * 1000)
            print(f"  {label:<26} set-up {statistics.median(made):6.1f}   clean-up {statistics.median(removed):6.1f}")
        leftover = api.list_fixtures(eval_id="eval-bench")
        assert leftover == {"spokes": [], "pull_requests": []}, leftover
    return 0


if __name__ == "__main__":
    sys.exit(main())
