#!/usr/bin/env bash
# The real Claude Code and Codex CLIs, installed from the npm registry at pinned versions
# into a cache outside the clone, driven offline against our scripted server through
# `ctxlab proxy`; every number ctxlab shows about their runs is checked against what they
# wrote themselves (docs/real-agents.md). Needs node/npm and python3; fails loudly, never skips.
# Usage: scripts/real-agents-check.sh [--ctxlab BIN] [--work DIR] [--keep] [--only claude|codex]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v npm >/dev/null 2>&1; then
    echo "real agents: npm is required (Debian: apt-get install npm)" >&2
    exit 1
fi
exec python3 scripts/real_agents/harness.py "$@"
