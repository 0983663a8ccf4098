#!/usr/bin/env bash
# Install whatever is missing, then run the tests (offline) in one worker more than the CPUs (pytest-xdist;
# whole test files per worker: the end-to-end tests wait on child processes part of the time, and a third
# worker on 2 cores fills some of that: 7 min 10 s against 7 min 56 s, once each; a fourth costs more than
# it fills: 5 min 35 s against 5 min 15-20 s; runs vary by a minute on this kind of machine). Arguments go to pytest:
# ./test.sh tests/runner/test_lifecycle.py -x -n 0   (TEST_WORKERS=n sets the workers)
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1
# Bytecode caches on, whatever the shell says: the tests start some 700 Python processes and each pytest
# worker rewrites the test modules it collects (5.2 s of CPU per worker without its cache, 2.6 s with).
unset PYTHONDONTWRITEBYTECODE
workers=${TEST_WORKERS:-$(( $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1) + 1 ))}
exec .venv/bin/python -m pytest -n "$workers" --dist loadfile "$@"
