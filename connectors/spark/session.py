"""The one SparkSession of a process.

Starting Spark costs seconds, so a session starts only when a job asks for it and is then
reused: the first call of :func:`get_session` fixes the configuration, later calls return the
same session. Settings come from arguments, else the environment, else local defaults:

=================  ==========================  ===========================================
argument           environment variable        default
=================  ==========================  ===========================================
``master``         ``REASONER_SPARK_MASTER``   ``local[*]``
``memory``         ``REASONER_SPARK_MEMORY``   ``2g`` (driver memory)
``packages``       ``REASONER_SPARK_PACKAGES`` none (comma-separated Maven coordinates,
                                               fetched from Maven Central)
``jars``           ``REASONER_SPARK_JARS``     none (comma-separated local jar files)
=================  ==========================  ===========================================
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reasoner.errors import KnowledgeError, ReasonerError

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
DEFAULT_MEMORY = "2g"

_session: SparkSession | None = None
_context: SparkContext | None = None  # started by get_context, with no session


def spark_settings(
    master: str | None = None,
    memory: str | None = None,
    packages: Sequence[str] | None = None,
    jars: Sequence[str] | None = None,
) -> dict[str, str]:
    """The Spark configuration a session would start with (no JVM is started).

    Args:
        master: Spark master URL; None reads ``REASONER_SPARK_MASTER``.
        memory: driver memory such as ``"4g"``; None reads ``REASONER_SPARK_MEMORY``.
        packages: Maven coordinates; None reads ``REASONER_SPARK_PACKAGES``.
        jars: jar files; None reads ``REASONER_SPARK_JARS``.
    Returns:
        the configuration keys and values.

    >>> spark_settings(master="local[2]")["spark.master"]
    'local[2]'
    """
    master = master or os.environ.get("REASONER_SPARK_MASTER") or DEFAULT_MASTER
    memory = memory or os.environ.get("REASONER_SPARK_MEMORY") or DEFAULT_MEMORY
    if packages is None:
        packages = _from_env("REASONER_SPARK_PACKAGES")
    if jars is None:
        jars = _from_env("REASONER_SPARK_JARS")
    settings = {
        "spark.master": master,
        "spark.app.name": "etalis-reasoner",
        "spark.driver.memory": memory,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        # The pipeline's joins are keyed by spatial cells and IRIs; adaptive execution
        # coalesces the shuffle partitions a small local run does not need.
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
    }
    if master.startswith("local"):
        # 200 shuffle partitions (Spark's default) means 200 tiny tasks per join on a laptop.
        settings["spark.sql.shuffle.partitions"] = "8"
    if packages:
        settings["spark.jars.packages"] = ",".join(packages)
    if jars:
        settings["spark.jars"] = ",".join(str(Path(j).absolute()) for j in jars)
    return settings


def _from_env(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


#: log4j2 configuration that keeps the driver quiet from the first line (setLogLevel only
#: takes effect once the JVM is up, after the start-up banner and warnings).
_QUIET_LOG4J = """rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
# PySpark's gateway counts as a shell: Spark prints "Setting default log level ..." unless
# the gateway's logger has the root's level.
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
"""


def _quiet_log_config() -> str:
    path = Path(tempfile.gettempdir()) / "etalis-reasoner-spark-log4j2.properties"
    if not path.is_file() or path.read_text() != _QUIET_LOG4J:
        path.write_text(_QUIET_LOG4J)
    return f"-Dlog4j.configurationFile={path.as_uri()}"


#: The local JVM's options for a quick start: its quick (C1) JIT compiler only. Compiling
#: Spark's start-up code with C2 too took a third of the CPU time of starting a local session
#: and running a first job here (30 against 20 CPU seconds, on a shared 2-core machine); a job
#: whose work is in Python (``spark replay``: the JVM only passes batches of bytes) loses
#: nothing to it. Nor does ``spark stream``, whose Python workers step the keys: over the
#: streaming benchmark's 8 micro-batches, C2 took 27 of the JVM's 38 CPU seconds, while its
#: threads running the query used the same CPU with C1 code (docs/scale-out.md).
#: The class archive (:mod:`connectors.spark.classes`), when built, is added.
QUICK_START = "-XX:TieredStopAtLevel=1"

#: The Python daemon of a quick-start session: Spark's, with the replay's and the streaming
#: query's modules imported before it forks its workers (each would import them again: a third
#: of a CPU second).
QUICK_DAEMON = "connectors.spark.daemon"


def get_session(
    master: str | None = None,
    memory: str | None = None,
    packages: Sequence[str] | None = None,
    jars: Sequence[str] | None = None,
    quick_start: bool = False,
    java_options: str = "",
) -> SparkSession:
    """The process's SparkSession, started on first use.

    Args:
        master, memory, packages, jars: as in :func:`spark_settings`; ignored once a session
            runs.
        quick_start: with a local master, start the JVM with :data:`QUICK_START` and the
            class archive if built, and the Python workers from :data:`QUICK_DAEMON` (for
            jobs whose work is in Python); ignored once a session runs.
        java_options: more options for the driver's JVM; ignored once a session runs.
    Returns:
        the session (the same object on every call until :func:`stop_session`).
    Raises:
        KnowledgeError: when Spark cannot start (no Java, a bad master URL ...).

    >>> spark = get_session(master="local[2]")  # doctest: +SKIP
    >>> spark is get_session()  # doctest: +SKIP
    True
    """
    global _session
    if _session is not None:
        return _session
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in _configuration(master, memory, packages, jars, quick_start, java_options):
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()  # (on the context get_context started, if it did)
    except Exception as e:  # py4j and the launcher raise several unrelated classes
        raise KnowledgeError(f"cannot start Spark: {e}") from e
    session.sparkContext.setLogLevel("ERROR")
    _session = session
    return session


def get_context(
    master: str | None = None,
    memory: str | None = None,
    packages: Sequence[str] | None = None,
    jars: Sequence[str] | None = None,
    quick_start: bool = False,
    java_options: str = "",
) -> SparkContext:
    """The process's SparkContext: the session's, else one started without Spark SQL, for
    jobs of RDDs only (starting Spark SQL's session took the JVM a CPU second and a half);
    a later :func:`get_session` runs on it.

    Args:
        master, memory, packages, jars, quick_start, java_options: as in
            :func:`get_session`; ignored once a context runs.
    Returns:
        the context (the same object on every call until :func:`stop_session`).
    Raises:
        KnowledgeError: when Spark cannot start (no Java, a bad master URL ...).

    >>> get_context(master="local[2]") is get_context()  # doctest: +SKIP
    True
    """
    global _context
    if _session is not None:
        return _session.sparkContext
    if _context is None:
        from pyspark import SparkConf, SparkContext

        conf = SparkConf().setAll(
            _configuration(master, memory, packages, jars, quick_start, java_options)
        )
        try:
            _context = SparkContext.getOrCreate(conf)
        except Exception as e:  # py4j and the launcher raise several unrelated classes
            raise KnowledgeError(f"cannot start Spark: {e}") from e
        _context.setLogLevel("ERROR")
    return _context


def _configuration(
    master: str | None,
    memory: str | None,
    packages: Sequence[str] | None,
    jars: Sequence[str] | None,
    quick_start: bool,
    java_options: str,
) -> list[tuple[str, str]]:
    """The settings a session or a context starts with (the process made ready for it)."""
    # Spark's Python workers must run this interpreter (and see this venv's packages).
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    _wrap_numpy_converters()
    settings = spark_settings(master, memory, packages, jars)
    java = f"{_quiet_log_config()} {java_options}".strip()
    if quick_start and settings["spark.master"].startswith("local"):
        from connectors.spark.classes import java_options as archive

        java = f"{java} {QUICK_START} {archive()}".strip()
        settings["spark.python.daemon.module"] = QUICK_DAEMON
    settings["spark.driver.extraJavaOptions"] = java
    return list(settings.items())


class _ImportedNumpy:
    """One of PySpark's py4j converters of numpy values, that first asks whether numpy was
    imported: PySpark's own import ``pyspark.testing`` (and pandas with it, a CPU second) on
    the first call into the JVM, to learn whether numpy is installed; a numpy value exists
    only once numpy was imported."""

    def __init__(self, converter: Any) -> None:
        self.converter = converter

    def can_convert(self, obj: Any) -> bool:
        return "numpy" in sys.modules and bool(self.converter.can_convert(obj))

    def convert(self, obj: Any, gateway_client: Any) -> Any:
        return self.converter.convert(obj, gateway_client)


def _wrap_numpy_converters() -> None:
    """Wrap PySpark's numpy converters in :class:`_ImportedNumpy` (at every start: a
    converter wrapped by an earlier start is not wrapped again)."""
    from py4j import protocol
    from pyspark.sql.types import NumpyArrayConverter, NumpyScalarConverter

    numpy = (NumpyArrayConverter, NumpyScalarConverter)
    protocol.INPUT_CONVERTER[:] = [
        _ImportedNumpy(c) if isinstance(c, numpy) else c for c in protocol.INPUT_CONVERTER
    ]


def stop_session() -> None:
    """Stop the process's session, if one runs (the next :func:`get_session` starts anew).

    >>> stop_session()
    """
    global _session, _context
    if _session is not None:
        _session.stop()  # (and its context)
    elif _context is not None:
        _context.stop()
    _session = _context = None


def has_session() -> bool:
    """Whether this process's session or context runs (:func:`get_session` or
    :func:`get_context` was called, and not :func:`stop_session` after it).

    >>> stop_session(); has_session()
    False
    """
    return _session is not None or _context is not None


def stop_jvm() -> tuple[str, int]:
    """Stop the process's session and its JVM, and wait for the JVM to end (it writes a
    class archive when exiting, :mod:`connectors.spark.classes`). The next
    :func:`get_session` starts a new JVM.

    Returns:
        The JVM's class path and its exit status.
    Raises:
        ReasonerError: no session runs.
    """
    from pyspark import SparkContext

    if not has_session():
        raise ReasonerError("no Spark session runs")
    # PySpark has no public handle on the JVM or the process running it: its gateway holds
    # both (the process ends when its standard input closes).
    gateway = SparkContext._gateway  # noqa: SLF001
    jvm = get_context()._jvm  # noqa: SLF001
    if gateway is None or jvm is None:
        raise ReasonerError("no Spark session runs")
    classpath = str(jvm.java.lang.System.getProperty("java.class.path"))
    stop_session()
    gateway.shutdown()
    process = gateway.proc
    process.stdin.close()
    status = process.wait()
    SparkContext._gateway = SparkContext._jvm = None  # noqa: SLF001
    return classpath, status


def has_jvm_class(spark: SparkSession, name: str) -> bool:
    """Whether a JVM class is on the session's driver classpath.

    Args:
        spark: the session.
        name: a fully qualified class name, e.g. ``"org.graphframes.GraphFrame"``.
    Returns:
        True when the class loads.

    >>> has_jvm_class(get_session(), "org.apache.spark.sql.Dataset")  # doctest: +SKIP
    True
    """
    from py4j.protocol import Py4JError

    # PySpark has no public handle on the driver's JVM.
    jvm = spark.sparkContext._jvm  # noqa: SLF001
    if jvm is None:
        return False
    # --packages jars live in Spark's context class loader, not the system one.
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        jvm.java.lang.Class.forName(name, False, loader)
    except Py4JError:
        return False
    return True
