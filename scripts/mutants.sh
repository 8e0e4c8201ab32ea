#!/usr/bin/env bash
# Hand-picked mutation check: apply each mutant below, one at a time, to a temporary copy of
# the repository, run the tests meant to catch it, and report it killed or survived.
# Not part of scripts/test.sh (it runs the chosen tests once per mutant).
#
# Usage: scripts/mutants.sh [NAME...]   (no name: every mutant; --list: the names)
# Exit status: 0 every mutant killed, 1 one survived, 2 the tests fail without any mutant or
# a mutant no longer applies (its text is not found exactly once: update the list).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV="${VENV:-.venv}"
case "$VENV" in /*) ;; *) VENV="$ROOT/$VENV" ;; esac

ENGINE="tests/runtime/test_boundaries.py tests/runtime/test_collection.py"
SPARK="tests/connectors/spark/test_radius.py"

# name | file | text | mutated text | tests (ENGINE, SPARK or paths)
MUTANTS=$(cat <<'EOF'
starts-freed-early|reasoner/language/operators.py|("s < floor", None)|("s <= floor", None)|ENGINE
meets-freed-early|reasoner/language/operators.py|("e < floor", None)|("e <= floor", None)|ENGINE
during-freed-early|reasoner/language/operators.py|("s <= floor", None)|("s <= floor + 1", None)|ENGINE
par-left-freed-early|reasoner/language/operators.py|("e <= floor", "e <= floor")|("e <= floor + 1", "e <= floor")|ENGINE
par-right-freed-early|reasoner/language/operators.py|("e <= floor", "e <= floor")|("e <= floor", "e <= floor + 1")|ENGINE
not-blocked-early|reasoner/runtime/nodes.py|between(key(o[0]), o[2], right_floor)|between(key(o[0]), o[2], right_floor + 1)|ENGINE
not-blocker-freed-early|reasoner/runtime/nodes.py|self.blockers.expire(earliest_end, strict=False)|self.blockers.expire(earliest_end + 1, strict=False)|ENGINE
window-freed-early|reasoner/runtime/nodes.py|cutoff = now - self.horizon|cutoff = now - self.horizon + 1|ENGINE
seq-touching|reasoner/language/operators.py|Interval("le < rs"|Interval("le <= rs"|ENGINE
par-touching|reasoner/language/operators.py|(ls if ls > rs else rs) < (le|(ls if ls > rs else rs) <= (le|ENGINE
equals-start|reasoner/language/operators.py|"ls == rs and le == re"|"ls <= rs and le == re"|ENGINE
meets-gap|reasoner/language/operators.py|Interval("le == rs"|Interval("le <= rs"|ENGINE
during-same-start|reasoner/language/operators.py|"rs < ls and le < re"|"rs <= ls and le < re"|ENGINE
during-same-end|reasoner/language/operators.py|"rs < ls and le < re"|"rs < ls and le <= re"|ENGINE
starts-same-end|reasoner/language/operators.py|"ls == rs and le < re"|"ls == rs and le <= re"|ENGINE
finishes-same-start|reasoner/language/operators.py|"le == re and rs < ls"|"le == re and rs <= ls"|ENGINE
radius-exclusive|connectors/spark/geo.py|F.col("distance_km") <= radius_km|F.col("distance_km") < radius_km|SPARK
EOF
)

if [ "${1:-}" = "--list" ]; then
  cut -d'|' -f1 <<<"$MUTANTS"
  exit 0
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$WORK"

tests_of() {
  case "$1" in ENGINE) echo "$ENGINE" ;; SPARK) echo "$SPARK" ;; *) echo "$1" ;; esac
}

run_tests() {  # the given test paths in the copy; quiet, first failure stops
  # shellcheck disable=SC2086
  (cd "$WORK" && PYTHONPATH="$WORK" nice "$VENV/bin/python" -m pytest -q -x \
    -p no:cacheprovider $1 </dev/null >"$WORK/.last-run.log" 2>&1)
}

selected() {  # NAME [WANTED...]: whether NAME is wanted (every name when none is given)
  local name=$1; shift
  [ $# -eq 0 ] && return 0
  for wanted in "$@"; do [ "$wanted" = "$name" ] && return 0; done
  return 1
}

# The tests must pass on the unmutated copy, or a "killed" would mean nothing.
groups=$(while IFS='|' read -r name _ _ _ group; do
  if selected "$name" "$@"; then echo "$group"; fi
done <<<"$MUTANTS" | sort -u)
for group in $groups; do
  if ! run_tests "$(tests_of "$group")"; then
    echo "mutants: the tests fail without any mutant ($(tests_of "$group")):" >&2
    tail -20 "$WORK/.last-run.log" >&2
    exit 2
  fi
done

survived=0
while IFS='|' read -r name file text mutated group; do
  selected "$name" "$@" || continue
  cp "$ROOT/$file" "$WORK/$file.orig"
  if ! "$VENV/bin/python" - "$WORK/$file" "$text" "$mutated" <<'PY'
import sys
path, text, mutated = sys.argv[1:]
source = open(path, encoding="utf-8").read()
if source.count(text) != 1:
    sys.exit(f"'{text}' occurs {source.count(text)} times in {path}, not once")
open(path, "w", encoding="utf-8").write(source.replace(text, mutated))
PY
  then
    echo "mutants: $name no longer applies to $file: update scripts/mutants.sh" >&2
    exit 2
  fi
  if run_tests "$(tests_of "$group")"; then
    echo "SURVIVED  $name  ($file: $text -> $mutated)"
    survived=1
  else
    echo "killed    $name"
  fi
  mv "$WORK/$file.orig" "$WORK/$file"
done <<<"$MUTANTS"
exit $survived
