#!/usr/bin/env bash
# Install whatever is missing, then run the tests (offline), one worker per CPU (pytest-xdist; whole
# test files per worker). Arguments go to pytest: ./test.sh tests/runner/test_lifecycle.py -x -n 0
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1
exec .venv/bin/python -m pytest -n auto --dist loadfile "$@"
