#!/usr/bin/env bash
# The main job on embedded defaults: the blizzard application of seed 004 on the shipped
# MesoWest sample (knowledge built with local Spark, replay with a progress bar, tables, a map
# and a timeline in out/blizzard/). Extra arguments go to `reasoner mesowest blizzard`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
VENV="${VENV:-.venv}"
"$VENV/bin/reasoner" mesowest blizzard "$@"
