#!/usr/bin/env bash
# Install whatever is missing, then run every suite offline: golden conversations replayed
# against a real local portal (real tool calls, real pull requests, real cleanup).
# Extra arguments go to `agent-evals run`, e.g. ./evals.sh --filter-metadata priority=smoke
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
exec npm run --silent eval -- all --replay "$@"
