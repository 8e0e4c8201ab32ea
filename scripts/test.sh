#!/usr/bin/env bash
# Run every check: lint and format (ruff), types (mypy) and the test suite (pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
VENV="${VENV:-.venv}"
echo "== ruff" && "$VENV/bin/ruff" check reasoner connectors tests benchmarks examples
"$VENV/bin/ruff" format --check reasoner connectors tests benchmarks examples
echo "== mypy" && "$VENV/bin/mypy"
echo "== pytest" && "$VENV/bin/pytest" -q "$@"
