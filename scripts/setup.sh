#!/usr/bin/env bash
# Create or reuse the virtual environment and install everything the project needs:
# the package with its test extra, Java for Spark and Chromium for the browser tests. Safe to
# run again.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
VENV="${VENV:-.venv}"

ensure_java() {
  if command -v java >/dev/null 2>&1; then
    return
  fi
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: java not found; installing a headless JRE with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq openjdk-17-jre-headless >/dev/null \
      || apt-get install -y -qq default-jre-headless >/dev/null
  else
    echo "setup: Spark needs Java 17 or newer and none was found. Run:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y openjdk-17-jre-headless" >&2
    exit 1
  fi
}

ensure_chromium() {
  # The browser tests drive Debian's chromium with Playwright (never `playwright install`,
  # which downloads a browser of its own).
  if command -v chromium >/dev/null 2>&1 || [ -n "${REASONER_CHROMIUM:-}" ]; then
    return
  fi
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: chromium not found; installing it with apt-get (for the browser tests)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium >/dev/null
  else
    echo "setup: the browser tests need chromium and none was found. Run:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y chromium" >&2
    exit 1
  fi
}

ensure_venv() {
  if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating virtual environment $VENV" >&2
    "$PYTHON" -m venv "$VENV"
  fi
  # Reinstall only when pyproject.toml changed since the last successful install.
  local stamp="$VENV/.installed-$(sha1sum pyproject.toml | cut -c1-12)"
  if [ ! -f "$stamp" ]; then
    echo "setup: installing the project and its dependencies into $VENV" >&2
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q -e ".[test]"
    rm -f "$VENV"/.installed-*
    touch "$stamp"
  fi
}

ensure_java
ensure_chromium
ensure_venv

# Spark's classes loaded and verified once, for every later local session of spark replay to
# map (connectors/spark/classes.py; docs/scale-out.md, "Spark's start"). Built once per Java
# and Spark; a failure only leaves Spark starting as without it.
if ! "$VENV/bin/python" -c "import connectors.spark.classes as c, sys; p = c.archive_path(); sys.exit(p is not None and not p.is_file())"; then
  echo "setup: writing Spark's class archive (once; a minute or two)" >&2
  timeout 600 "$VENV/bin/python" -m connectors.spark.classes \
    || echo "setup: Spark's class archive could not be written; Spark starts without it" >&2
fi
