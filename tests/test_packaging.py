"""A wheel of the project, installed non-editable, runs the main job outside the checkout.

The wheel is built offline from a copy of the sources (the checkout stays clean) and installed
without dependencies into a fresh virtual environment that sees this environment's packages
through a ``.pth`` line (so nothing is downloaded and the checkout is not importable).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "README.md", "reasoner", "connectors", "rules", "data", "ontologies")


def test_the_license_is_an_spdx_expression() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0"


def _build_wheel(tmp: Path) -> tuple[Path, str]:
    source = tmp / "source"
    source.mkdir()
    for name in SOURCES:
        origin = ROOT / name
        if origin.is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
            shutil.copytree(origin, source / name, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(origin, source / name)
    dist = tmp / "dist"
    build = (
        "import sys; from setuptools import build_meta; print(build_meta.build_wheel(sys.argv[1]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", build, str(dist)],
        cwd=source,
        capture_output=True,
        text=True,
        check=True,
        env=_clean_env(),
    )
    return dist / done.stdout.splitlines()[-1], done.stderr


def _clean_env() -> dict[str, str]:
    """The environment without PYTHONPATH: the checkout must not be importable."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _venv_with_wheel(tmp: Path, wheel: Path) -> Path:
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # A plain path line: this environment's packages become importable, but its .pth hooks
    # (the editable install of the checkout) do not run.
    Path(purelib, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps"]
        + ["--no-index", str(wheel)],
        check=True,
        env=_clean_env(),
    )
    return venv


def _run(venv: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "reasoner"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=_clean_env(),
        timeout=900,
    )


@pytest.mark.slow
def test_a_wheel_install_runs_the_main_job_outside_the_checkout(tmp_path: Path) -> None:
    wheel, log = _build_wheel(tmp_path)
    assert "deprecated" not in log.lower(), log
    venv = _venv_with_wheel(tmp_path, wheel)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run(
        [venv / "bin" / "python", "-c", "import connectors.shipped as s; print(s.__file__)"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=True,
        env=_clean_env(),
    ).stdout
    assert where.startswith(str(venv)), where

    generated = _run(
        venv, elsewhere, "mesowest", "generate", "--out", "gen", "--stations", "KSLC", "--days", "1"
    )
    assert generated.returncode == 0, generated.stderr
    assert generated.stdout.splitlines() == ["gen/KSLC.csv"]
    assert len((elsewhere / "gen" / "KSLC.csv").read_text().splitlines()) == 8 + 72

    job = _run(venv, elsewhere, "mesowest", "blizzard", "--quiet")
    assert job.returncode == 0, job.stderr
    assert "KOGD  KOGD KSLC KEVW  2021-01-11 04:40  2021-01-11 11:00           3" in job.stdout
    tables = (elsewhere / "out" / "blizzard" / "tables.txt").read_text()
    assert "KSLC          216              27              1           1" in tables
    assert "ontologies: 0 triples" not in job.stderr and "inferred: 0 triples" not in job.stderr
