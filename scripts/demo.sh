#!/usr/bin/env bash
# The main job on embedded defaults: replay the bundled stock-ticker stream through the
# engine and print the complex events it detects.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
VENV="${VENV:-.venv}"
"$VENV/bin/reasoner" run rules/stock_ticker.event --events examples/data/stock_ticker.jsonl "$@"
