"""Cases at scale and what judging them costs.

1. **Expansion**: the spoke-create-variants templates over a generated table of ``--rows`` rows
   (valid and overlapping copies of the seed spokes, every style; default 1,000): reading the
   files, the pack's derivation of every row, filling the templates, rendering both generated
   files, and the sync check the preflight runs. Target: under 2 s for 1,000 rows.
2. **Judging**: every case of spoke-create-variants and spoke-qa run through the provider
   (record mode, the real portal) with the scripted model playing agent, user (the golden plans)
   and judge (a yes for every question); prompt tokens are counted as characters / 4 of the
   messages *and* the offered tools, completions as characters / 4 of the reply. The judge calls
   per case, and the judge's share of the tokens and of the cost at the built-in prices
   (``agent_evals.llm.pricing``) for agent / user / judge models as the README suggests.

    .venv/bin/python benchmarks/case_expansion.py [--rows 1000] [--runs 5] [--skip-judging]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

from agent_evals.cases import expand, load_source, out_of_sync, render_cases, render_plan  # noqa: E402
from agent_evals.suites.discovery import select  # noqa: E402

VARIANTS = select("spoke-create-variants")[0]
# /22 sources: their copies take a fresh /22 each, from 10.128.0.0 up (nothing there in the seed data)
SOURCES = [("crm-dev-neu", "crm", "dev"), ("payments-dev-weu", "payments", "dev"),
           ("iot-ingest-dev-neu", "iot-ingest", "dev"), ("hr-portal-test-weu", "hr-portal", "test"),
           ("shared-tools-dev-weu", "shared-tools", "dev")]
OVERLAPPING = {"crm-dev-neu": "10.20.24.0/22", "payments-dev-weu": "10.10.24.0/22", "iot-ingest-dev-neu": "10.50.16.0/22",
               "hr-portal-test-weu": "10.40.8.0/22", "shared-tools-dev-weu": "10.70.0.0/22"}
REGIONS = ("weu", "neu", "sdc", "gwc")
STYLES = ("plain", "terse", "chatty", "command", "on_request")
TAGS = ("", "owner=team{n}@contoso.com", "costCenter=CC-{n:04d}", "")
PRICES = {"agent": "gpt-4.1", "user": "gpt-4.1-mini", "judge": "gpt-4.1"}  # README's example models


def table(rows: int) -> str:
    lines = ["id,template,style,priority,source,name,region,environment,range,tags"]
    for n in range(rows):
        source, app, env = SOURCES[n % len(SOURCES)]
        region = REGIONS[(n // len(SOURCES)) % len(REGIONS)]
        overlapping = n % 5 == 4
        block = 128 * 256 * 256 + n * 4 * 256  # 10.128.0.0 + n /22s, as an offset in 10.0.0.0/8
        free = f"10.{block // 65536}.{block // 256 % 256}.0/22"
        tags = TAGS[n % len(TAGS)].format(n=n % 10000)
        lines.append(",".join([
            f"B{n:04d}", "copy_overlapping" if overlapping else "copy", STYLES[n % len(STYLES)], "full", source,
            f"{app}{n}-{env}-{region}", region, env, OVERLAPPING[source] if overlapping else free, tags,
        ]))
    return "\n".join(lines) + "\n"


def expansion(rows: int, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="case-expansion-") as tmp:
        folder = Path(tmp) / VARIANTS.name
        (folder / "cases").mkdir(parents=True)
        (folder / "cases" / "templates.yaml").write_text((VARIANTS.folder / "cases" / "templates.yaml").read_text())
        (folder / "cases" / "rows.csv").write_text(table(rows))
        times, checks = [], []
        for _ in range(runs):
            started = time.perf_counter()
            result = expand(load_source(folder))
            texts = render_cases(result), render_plan(result)
            times.append(time.perf_counter() - started)
            started = time.perf_counter()
            out_of_sync(result)
            checks.append(time.perf_counter() - started)
        size = sum(len(t or "") for t in texts)
    return {"rows": rows, "cases": len(result.cases), "median_s": statistics.median(times), "best_s": min(times),
            "sync_check_s": statistics.median(checks), "generated_mb": round(size / 1e6, 2)}


def _counted(responder: Any) -> Any:
    """Usage from the request's messages and offered tools (≈ 4 characters a token)."""

    def respond(request: Any) -> Any:
        reply = responder(request)
        if reply.message is None:
            return reply
        prompt = len(json.dumps(request.messages) + json.dumps(request.tools or [])) // 4
        completion = max(1, len(json.dumps([reply.message.get("content"), reply.message.get("tool_calls")])) // 4)
        return replace(reply, usage={"prompt_tokens": prompt, "completion_tokens": completion,
                                     "total_tokens": prompt + completion})

    return respond


def judging() -> dict[str, Any]:
    from agent_evals.golden.record import build_scripts, suite_cases
    from agent_evals.llm.pricing import PriceTable
    from agent_evals.packs.spoke.portal.process import PortalProcess
    from agent_evals.provider.run import call_api
    from agent_evals.suites.files import load_suite
    from agent_evals.testing.conversations import ScriptedConversations
    from agent_evals.testing.scripted_openai import Reply, ScriptedOpenAIServer

    def judge(request: Any) -> Reply:
        return Reply.text(json.dumps({"pass": True, "score": 1, "reason": "It holds: the conversation shows it."}))

    suites = [VARIANTS, select("spoke-qa")[0]]
    scripts = [s for suite in suites for s in build_scripts(suite)]
    prices = PriceTable()
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="judging-") as tmp, \
            PortalProcess(data_dir=Path(tmp) / "data") as portal, \
            ScriptedOpenAIServer(_counted(ScriptedConversations(scripts, judge=judge))) as server:
        os.environ.update(PORTAL_URL=portal.url, OPENAI_BASE_URL=server.base_url, AGENT_MODEL="agent-model",
                          USER_MODEL="user-model", JUDGE_MODEL="judge-model", LLM_MAX_RETRIES="0")
        for suite in suites:
            config = dict(load_suite(suite).providers[0].config)
            config.update(basePath=str(suite.folder), record=str(Path(tmp) / suite.name))
            per_role: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # calls, prompt, completion
            calls_by_group: dict[str, list[int]] = defaultdict(list)
            tests = {t.case_id: t for t in load_suite(suite).tests}
            for case in suite_cases(suite):
                test = tests[case.id]
                context = {"vars": dict(test.vars), "evaluationId": "bench",
                           "test": {"description": test.description, "vars": dict(test.vars),
                                    "metadata": dict(test.metadata), "assert": [dict(a) for a in test.asserts]}}
                row = call_api(str(test.vars.get("question", "")), {"config": config}, context)
                assert "error" not in row, row.get("error")
                for role, usage in row["metadata"]["usage"].items():
                    per_role[role][0] += usage["calls"]
                    per_role[role][1] += usage["prompt_tokens"]
                    per_role[role][2] += usage["completion_tokens"]
                calls_by_group[str(test.metadata.get("group"))].append(row["metadata"]["usage"]["judge"]["calls"])
            cost = {role: prices.cost(p, c, PRICES[role]) for role, (_, p, c) in per_role.items()}
            tokens = {role: p + c for role, (_, p, c) in per_role.items()}
            cases = len(tests)
            out[suite.name] = {
                "cases": cases,
                "judge_calls_per_case": round(per_role["judge"][0] / cases, 2),
                "judge_calls_by_group": {g: round(statistics.mean(v), 2) for g, v in calls_by_group.items()},
                "calls": {role: v[0] for role, v in per_role.items()},
                "tokens": tokens,
                "cost_usd": {role: round(v, 4) for role, v in cost.items()},
                "judge_share_of_tokens": round(tokens["judge"] / sum(tokens.values()), 3),
                "judge_share_of_cost": round(cost["judge"] / sum(cost.values()), 3),
            }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-judging", action="store_true")
    args = parser.parse_args()
    result = {"expansion": expansion(args.rows, args.runs)}
    print(json.dumps(result, indent=2), flush=True)
    if not args.skip_judging:
        result["judging"] = judging()
        print(json.dumps({"judging": result["judging"], "prices": PRICES}, indent=2))
    return 0 if result["expansion"]["median_s"] < 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
