#!/usr/bin/env bash
# Install whatever is missing: a virtual environment with the project (editable, with
# test dependencies) and the npm packages (Promptfoo and a Node 22 runtime).
# Safe to run again: it only reinstalls when pyproject.toml or package-lock.json changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
stamp() { sha256sum "$@" | sha256sum | cut -c1-16; }

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($PYTHON --version 2>&1)"
  "$PYTHON" -m venv .venv
fi
want=$(stamp pyproject.toml)
if [ "$(cat .venv/.agent-evals-installed 2>/dev/null)" != "$want" ]; then
  echo "setup: installing the project into .venv"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev]"
  echo "$want" > .venv/.agent-evals-installed
fi

want=$(stamp package.json package-lock.json)
if [ ! -x node_modules/.bin/promptfoo ] || [ "$(cat node_modules/.agent-evals-installed 2>/dev/null)" != "$want" ]; then
  echo "setup: installing npm packages (Promptfoo, Node 22); this takes a minute or two"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > node_modules/.agent-evals-installed
fi

# The project's own Python as bytecode: pip compiles the packages it installs, not an editable
# project's sources, and where PYTHONDONTWRITEBYTECODE is set Python never caches them itself,
# so every process (the runner, the warm server, a cold worker, the portal) compiled the ~300
# modules it imports again: 0.14 s of CPU each. Only what changed is compiled again.
.venv/bin/python -m compileall -q -j 0 src providers assertions hooks > /dev/null
