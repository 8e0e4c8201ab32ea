"""``reasoner --help`` (and every sub-command's) loads no heavy dependency; handlers do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HEAVY = ("lark", "pyoxigraph", "rdflib", "owlrl", "geopy", "tqdm", "matplotlib", "pyspark")

# Runs in a fresh interpreter: every command path's --help, then the heavy modules loaded.
_PROBE = """
import argparse, contextlib, io, json, sys
from connectors.cli import build_parser, main

def paths(parser, prefix):
    yield prefix
    for action in parser._actions:  # argparse keeps sub-commands in a private action
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from paths(sub, [*prefix, name])

helped = []
for path in paths(build_parser(), []):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main([*path, "--help"])
    helped.append(" ".join(path))
heavy, extra = sys.argv[1].split(","), sys.argv[2:]
if extra:
    with contextlib.redirect_stdout(io.StringIO()):
        main(extra)
print(json.dumps({"helped": helped, "heavy": sorted(m for m in heavy if m in sys.modules)}))
"""


def _probe(*argv: str) -> dict[str, list[str]]:
    return _probe_with(",".join(HEAVY), *argv)


def _probe_with(heavy: str, *argv: str, cache: Path | None = None) -> dict[str, list[str]]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), *sys.path]))
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, heavy, *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=True,
    )
    return json.loads(out.stdout)


def test_help_of_every_command_imports_no_heavy_dependency() -> None:
    found = _probe()
    assert found["helped"] == [
        "",
        "check",
        "run",
        "explain",
        "why-not",
        "serve",
        "knowledge",
        "knowledge build",
        "knowledge refresh",
        "mesowest",
        "mesowest generate",
        "mesowest to-rdf",
        "mesowest blizzard",
        "spark",
        "spark replay",
        "spark stream",
    ]
    assert found["heavy"] == []


def test_running_a_command_does_import_what_it_needs(tmp_path: Path) -> None:
    # The probe sees imports: checking a rule file not yet in the cache loads the parser,
    # hence lark.
    found = _probe_with(",".join(HEAVY), "check", "rules/stock_ticker.event", cache=tmp_path)
    assert found["heavy"] == ["lark"]


def test_a_run_over_json_lines_imports_the_rule_parser_only_once(tmp_path: Path) -> None:
    # No geopy (WHERE's geo_distance imports it when first called), no parallel engine; the
    # rule parser (lark) only until the parsed rule file is in the cache.
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    heavy = ",".join((*HEAVY, "reasoner.runtime.parallel", "multiprocessing"))
    argv = ("run", "rules/stock_ticker.event", "--events", str(empty))
    assert _probe_with(heavy, *argv, cache=tmp_path / "cache")["heavy"] == ["lark"]
    assert _probe_with(heavy, *argv, cache=tmp_path / "cache")["heavy"] == []


def test_a_run_imports_no_other_sub_command(tmp_path: Path) -> None:
    # Only the named sub-command's module is registered: the MesoWest and Spark modules that
    # the `mesowest` and `knowledge` commands take their defaults from stay unloaded (the shared
    # option definitions are no sub-command).
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    probe = (
        "import json, sys\n"
        "from connectors.cli import main\n"
        "status = main(['run', 'rules/stock_ticker.event', '--events', sys.argv[1]])\n"
        "names = ('connectors.cli.', 'connectors.mesowest', 'connectors.spark')\n"
        "print(json.dumps([status, sorted(m for m in sys.modules if m.startswith(names))]))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), *sys.path]))
    out = subprocess.run(
        [sys.executable, "-c", probe, str(empty)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=True,
    )
    assert json.loads(out.stdout) == [0, ["connectors.cli.options", "connectors.cli.run"]]
