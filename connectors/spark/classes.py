"""The local JVM's class archive: Spark's classes, loaded and verified once, mapped on start.

Starting a local Spark session and running a first job loads about ten thousand classes from
Spark's jars; parsing and verifying them is most of the JVM's start-up CPU (docs/scale-out.md,
"Spark's start"). Java's application class-data sharing (AppCDS) writes the classes a run
loaded, parsed and verified, to an archive that a later JVM maps instead: :func:`build` runs a
small archive replay in a JVM that writes the archive when it exits (``scripts/setup.sh`` calls
it, ``python -m connectors.spark.classes``), and :func:`java_options` names the archive to the
JVMs :func:`connectors.spark.session.get_context` (and ``get_session``) start with
``quick_start``.

The archive lies in the user's cache (``etalis-reasoner/jvm``) under a name that depends on the
Java runtime and Spark's jars (:func:`archive_path`): another Java or another Spark looks for
another file. It appears whole (written aside, checked by a JVM that must map it, renamed): a
cut archive would crash the JVM mapping it, a stale one is refused by the JVM (silently: its
messages are off) and the session starts as without it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from reasoner.errors import ReasonerError
from reasoner.language.loader import cache_dir

if TYPE_CHECKING:
    from pyspark import SparkContext

#: The JVM's messages about the archive (a stale archive it refuses) kept off standard error.
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def _java() -> Path | None:
    """The java Spark's launcher runs (``$JAVA_HOME/bin/java``, else the one on PATH)."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    return None if found is None else Path(found).resolve()


def _jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def archive_path() -> Path | None:
    """Where the archive for this Java and this Spark lies (whether or not it was built);
    None when there is no java or no cache folder.

    >>> path = archive_path()
    >>> path is None or path.name.startswith("spark-") and path.suffix == ".jsa"
    True
    """
    java, folder = _java(), cache_dir("jvm")
    if java is None or folder is None:
        return None
    digest = hashlib.sha256(f"{java}\0{java.stat().st_mtime_ns}\0".encode())
    jars = _jars()
    try:
        entries = sorted(os.scandir(jars), key=lambda entry: entry.name)
    except OSError:
        return None
    for entry in entries:
        stat = entry.stat()
        digest.update(f"{entry.path}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return folder / f"spark-{digest.hexdigest()[:16]}.jsa"


def java_options() -> str:
    """The JVM options that map the archive, or ``""`` when none was built.

    >>> java_options() in ("", f"-XX:SharedArchiveFile={archive_path()} {_QUIET}")
    True
    """
    path = archive_path()
    if path is None or not path.is_file():
        return ""
    return f"-XX:SharedArchiveFile={path} {_QUIET}"


def build() -> Path:
    """Write the archive for this Java and this Spark: a small replay on ``local[2]`` in a
    JVM that writes the classes it loaded when it exits (tens of CPU seconds, once).

    Returns:
        The archive's path (replaced if it was there).
    Raises:
        ReasonerError: no java or cache folder, or a JVM that failed to write or map it.
    """
    from connectors.spark import session

    path = archive_path()
    if path is None:
        raise ReasonerError("no java on PATH or JAVA_HOME, or no cache folder: no class archive")
    aside = path.with_name(f".{path.name}.{os.getpid()}")
    if session.has_session():
        raise ReasonerError("a Spark session runs in this process: build the archive apart")
    # The quick JIT as a quick start has it, but no archive mapped: Java 17 does not start a
    # JVM that writes an archive while it maps one (an archive built before, replaced here).
    sc = session.get_context(
        master="local[2]",
        java_options=f"-XX:ArchiveClassesAtExit={aside} {session.QUICK_START} {_QUIET}",
    )
    try:
        with tempfile.TemporaryDirectory() as folder:
            _sample_replay(sc, Path(folder))
        classpath, status = session.stop_jvm()
        if status != 0 or not aside.is_file():
            raise ReasonerError(f"the JVM writing the class archive ended with status {status}")
        _check(aside, classpath)
        os.replace(aside, path)
    finally:
        aside.unlink(missing_ok=True)
    return path


def _check(archive: Path, classpath: str) -> None:
    """A JVM on Spark's class path must map the archive (-Xshare:on fails otherwise)."""
    java = _java()
    argv = [str(java), "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp", classpath]
    done = subprocess.run([*argv, "-version"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ReasonerError(f"the class archive does not map: {done.stderr.strip()}")


def _sample_replay(sc: SparkContext, folder: Path) -> None:
    """Replay two small files, one out of time order, so that the JVM loads the classes of
    every job of a replay (the read and shuffle, the admission, the keyed stage)."""
    from connectors.spark.replay import Archive, replay
    from reasoner.language.parser import parse
    from reasoner.runtime.options import EngineOptions

    program = parse("rise(C, P1, P2) <- quote(C, P1) SEQ quote(C, P2) WHERE P2 > P1.")
    quotes = [("a", 1), ("b", 2), ("a", 3), ("b", 1)]
    lines = [
        json.dumps({"name": "quote", "args": [c, p], "start": t, "end": t}) + "\n"
        for t, (c, p) in enumerate(quotes, 1)
    ]
    (folder / "1.jsonl").write_text("".join(lines))
    (folder / "2.jsonl").write_text("".join(reversed(lines)))
    archive = Archive((str(folder / "1.jsonl"), str(folder / "2.jsonl")), "jsonl", program)
    done = replay(sc, archive, runs=folder / "runs", options=EngineOptions())
    list(done.lines)
    done.close()


if __name__ == "__main__":
    print(f"Spark's class archive written: {build()}", file=sys.stderr)
