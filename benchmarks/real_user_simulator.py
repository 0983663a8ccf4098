"""How a real model does as the simulated user: the share of its conversations the user checks flag.

The agent is the suite's golden plan (scripted, so every conversation is the same on the agent's
side); the simulated user is the model behind ``--user-base-url`` (any OpenAI-compatible server:
llama-cpp-python's with SmolLM2, as ``scripts/real-model-smoke.sh`` starts it, or a real
deployment). Each case runs through ``agent-evals run`` (Promptfoo, the portal, the provider,
the user checks), one case at a time, in a scratch folder; then the report's simulator quality
and the invalid runs are printed. Not a test: a real model is slow and not deterministic.

    .venv/bin/python benchmarks/real_user_simulator.py --user-base-url http://127.0.0.1:8000/v1 \\
        --user-model SmolLM2-135M-Instruct --cases C01,C03,C05,C18 [--max-turns 4] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import urllib.request
from pathlib import Path

from agent_evals.golden.record import build_scripts
from agent_evals.report import build_report, load_results
from agent_evals.report.invalid_lines import invalid_lines, simulator_lines
from agent_evals.runner.run import run
from agent_evals.suites.discovery import select
from agent_evals.testing.conversations import ConversationScript
from agent_evals.testing.scripted_openai import ChatRequest, Reply, ScriptedOpenAIServer

AGENT = "scripted-agent"
CLOSING = "Is there anything else I can help you with?"


class RealUser:
    """Agent requests: the golden plan (a courtesy once it has no step left); user requests: the real model."""

    def __init__(self, base_url: str, model: str, timeout_s: float) -> None:
        self.base_url, self.model, self.timeout_s = base_url.rstrip("/"), model, timeout_s
        self.case_agent: ConversationScript | None = None  # the current case's scripted agent

    def __call__(self, request: ChatRequest) -> Reply:
        if request.model == self.model:
            return self._forward(request)
        steps = self.case_agent.agent if self.case_agent is not None else ()
        index = sum(1 for m in request.messages if m.get("role") == "assistant")
        if index >= len(steps):
            return Reply.text(CLOSING)
        step = steps[index]
        return Reply.text(step) if isinstance(step, str) else step if isinstance(step, Reply) else step(request)

    def _forward(self, request: ChatRequest) -> Reply:
        body = json.dumps(dict(request.body)).encode()
        sent = urllib.request.Request(f"{self.base_url}/chat/completions", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(sent, timeout=self.timeout_s) as answer:
            data = json.loads(answer.read())
        choice = data["choices"][0]
        usage = data.get("usage") or {}
        return Reply.text(choice["message"].get("content") or "", finish_reason=choice.get("finish_reason") or "stop",
                          usage=(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="spoke-create")
    parser.add_argument("--cases", required=True, help="comma-separated case ids")
    parser.add_argument("--user-base-url", required=True)
    parser.add_argument("--user-model", required=True)
    parser.add_argument("--max-turns", type=int, default=4)
    parser.add_argument("--timeout-s", type=float, default=900)
    parser.add_argument("--keep", type=Path, default=None, help="copy each case's results file (-o) into this folder")
    args = parser.parse_args()
    user = RealUser(args.user_base_url, args.user_model, args.timeout_s)
    agents = {s.key: s for s in build_scripts(select(args.suite)[0]) if s.agent}
    with tempfile.TemporaryDirectory(prefix="real-user-") as scratch, ScriptedOpenAIServer(user) as server:
        os.environ.update({
            "OPENAI_BASE_URL": server.base_url, "AGENT_MODEL": AGENT, "USER_MODEL": args.user_model,
            "JUDGE_MODEL": "none", "LLM_MAX_RETRIES": "0", "LLM_TIMEOUT_S": str(args.timeout_s),
            "AGENT_EVALS_DATA_DIR": str(Path(scratch) / "data" / "portal"),
            "PROMPTFOO_CONFIG_DIR": str(Path(scratch) / "promptfoo"),
        })
        outputs = []
        for case in args.cases.split(","):
            user.case_agent = _agent_of(case.strip(), agents, args.suite)
            out = Path(scratch) / f"{case}.json"
            run(args.suite, None, None, ["--filter-pattern", f"^{case.strip()} ", "-j", "1", "-o", str(out),
                                         "--var", f"max_turns={args.max_turns}"], check=False)
            if out.is_file():
                outputs.append(str(out))
                if args.keep is not None:
                    args.keep.mkdir(parents=True, exist_ok=True)
                    (args.keep / out.name).write_bytes(out.read_bytes())
        loaded = load_results(outputs)
        report = build_report(loaded.evals, loaded.runs, loaded.rows)
        print("\n".join(["", *simulator_lines(report), *invalid_lines(report, limit=50)]))
        for row in loaded.rows:
            print(f"{row.case_id}: {row.outcome}{' (' + (row.error or '') + ')' if row.error else ''}"[:300])
    return 0


def _agent_of(case: str, agents: dict[str, ConversationScript], suite: str) -> ConversationScript:
    from agent_evals.golden.plan import load_plan

    entries, _ = load_plan(select(suite)[0].folder / "golden" / "plan.yaml")
    first = str((entries[case].get("user") or [""])[0])
    return next(script for key, script in agents.items() if first.startswith(key) or key in first)


if __name__ == "__main__":
    raise SystemExit(main())
