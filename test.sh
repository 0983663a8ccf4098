#!/usr/bin/env bash
# Install whatever is missing, then run the whole test suite (offline; about 7 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1
exec .venv/bin/python -m pytest "$@"
