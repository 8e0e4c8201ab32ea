"""The session factory: settings, one session per process, class detection."""

import os
import struct
import sys
import zipfile
from pathlib import Path

import pytest

from connectors.spark.session import get_session, has_jvm_class, spark_settings


def test_settings_from_arguments_then_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REASONER_SPARK_MASTER", raising=False)
    monkeypatch.delenv("REASONER_SPARK_MEMORY", raising=False)
    monkeypatch.delenv("REASONER_SPARK_PACKAGES", raising=False)
    monkeypatch.delenv("REASONER_SPARK_JARS", raising=False)
    default = spark_settings()
    assert default["spark.master"] == "local[*]"
    assert default["spark.driver.memory"] == "2g"
    assert default["spark.ui.enabled"] == "false"
    assert default["spark.sql.shuffle.partitions"] == "8"
    assert "spark.jars.packages" not in default and "spark.jars" not in default
    monkeypatch.setenv("REASONER_SPARK_MASTER", "spark://head:7077")
    monkeypatch.setenv("REASONER_SPARK_MEMORY", "6g")
    monkeypatch.setenv("REASONER_SPARK_PACKAGES", "a:b:1,c:d:2")
    monkeypatch.setenv("REASONER_SPARK_JARS", "/opt/g.jar, /opt/h.jar")
    env = spark_settings()
    assert env["spark.master"] == "spark://head:7077"
    assert env["spark.driver.memory"] == "6g"
    assert env["spark.jars.packages"] == "a:b:1,c:d:2"
    assert env["spark.jars"] == "/opt/g.jar,/opt/h.jar"
    assert "spark.sql.shuffle.partitions" not in env  # a cluster keeps Spark's default
    explicit = spark_settings(master="local[3]", memory="1g", packages=["x:y:3"], jars=["g.jar"])
    assert (explicit["spark.master"], explicit["spark.driver.memory"]) == ("local[3]", "1g")
    assert explicit["spark.jars.packages"] == "x:y:3"
    assert explicit["spark.jars"] == str(Path("g.jar").absolute())  # Spark resolves no cwd


def test_one_session_per_process(spark) -> None:
    assert get_session() is spark
    assert get_session(master="local[1]") is spark  # later settings are ignored
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    assert spark.conf.get("spark.ui.enabled") == "false"
    assert spark.sparkContext.master == "local[2]"


def test_python_workers_run_this_interpreter(spark) -> None:
    def executable(_: object) -> str:
        import sys

        return sys.executable

    assert spark.sparkContext.parallelize([1], 1).map(executable).collect() == [sys.executable]


def _class_file(name: str) -> bytes:
    """A minimal valid JVM class file: ``public class <name> extends Object {}``."""

    def utf8(text: str) -> bytes:
        return b"\x01" + struct.pack(">H", len(text)) + text.encode()

    pool = [utf8(name), b"\x07\x00\x01", utf8("java/lang/Object"), b"\x07\x00\x03"]
    header = b"\xca\xfe\xba\xbe" + struct.pack(">HHH", 0, 52, len(pool) + 1)
    # access public|super, this #2, super #4, no interfaces, fields, methods, attributes
    return header + b"".join(pool) + struct.pack(">7H", 0x0021, 2, 4, 0, 0, 0, 0)


def test_jvm_class_detection(spark, tmp_path: Path) -> None:
    assert has_jvm_class(spark, "org.apache.spark.sql.Dataset")
    assert has_jvm_class(spark, "org.apache.spark.graphx.Graph")
    assert not has_jvm_class(spark, "org.example.NoSuchClass")
    # A class in a jar given to Spark (as GraphFrames' is) is found through Spark's class
    # loader, not the JVM's own classpath.
    jar = tmp_path / "probe.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr(
            "org/example/reasoner/Probe.class", _class_file("org/example/reasoner/Probe")
        )
    assert not has_jvm_class(spark, "org.example.reasoner.Probe")
    spark.sql(f"ADD JAR '{jar}'")
    assert has_jvm_class(spark, "org.example.reasoner.Probe")


def test_importing_the_connectors_starts_no_jvm() -> None:
    import subprocess

    code = (
        "import sys, connectors.cli.knowledge, connectors.spark.build, connectors.spark.rdfs, "
        "connectors.spark.near, connectors.spark.neighbourhoods, connectors.spark.readers; "
        "print('pyspark' in sys.modules)"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "False", out.stderr


@pytest.fixture
def archive(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Where the class archive lies, the user's cache being ``tmp_path`` (none built)."""
    from connectors.spark import classes

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = classes.archive_path()
    if path is None:
        pytest.skip("no java")
    return path


def test_class_archive_is_named_per_java_and_spark(
    archive: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from connectors.spark import classes

    path = archive
    assert path.parent == tmp_path / "etalis-reasoner" / "jvm"
    assert classes.archive_path() == path  # the same Java and Spark: the same archive
    assert classes.java_options() == ""  # not built: the JVM starts as without it
    path.write_bytes(b"built")
    assert classes.java_options().split()[0] == f"-XX:SharedArchiveFile={path}"
    # another Java (JAVA_HOME) looks for another archive
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    assert classes.archive_path() not in (None, path)
    assert classes.java_options() == ""


def test_the_class_archive_is_written_again_by_a_jvm_mapping_none(
    archive: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Java 17 does not start a JVM told to write an archive while it maps one ("DynamicDump
    # SharedSpaces is unsupported when base CDS archive is not loaded"): rebuilding an archive
    # that exists failed with "cannot start Spark".
    from pyspark import SparkContext

    from connectors.spark import classes, session
    from reasoner.errors import KnowledgeError

    archive.write_bytes(b"built")  # (built before)
    monkeypatch.setattr(session, "_session", None)  # (the test run's session left aside)
    monkeypatch.setattr(session, "_context", None)
    started: list[str] = []

    def no_jvm(conf: object) -> None:
        started.append(conf.get("spark.driver.extraJavaOptions"))  # type: ignore[attr-defined]
        raise RuntimeError("no JVM in this test")

    monkeypatch.setattr(SparkContext, "getOrCreate", no_jvm)
    with pytest.raises(KnowledgeError):
        classes.build()
    [options] = started
    assert "-XX:ArchiveClassesAtExit=" in options and session.QUICK_START in options
    assert "SharedArchiveFile" not in options
    assert archive.read_bytes() == b"built"  # (kept: the build failed)


def test_quick_daemon_takes_the_installed_pyspark(monkeypatch: pytest.MonkeyPatch) -> None:
    import connectors.spark.daemon as daemon

    spark_lib = os.path.join(os.sep, "opt", "spark", "python", "lib")
    archives = [
        os.path.join(spark_lib, "pyspark.zip"),
        os.path.join(spark_lib, "py4j-0.10.9.9-src.zip"),
        os.path.join(os.sep, "opt", "spark", "jars", "spark-core_2.13-4.0.0.jar"),
    ]
    kept = [p for p in sys.path if not p.endswith((".zip", ".jar"))]
    monkeypatch.setattr(sys, "path", [archives[0], *kept, *archives[1:]])
    monkeypatch.setattr(sys, "path_importer_cache", {archives[0] + "/pyspark": None})
    daemon.installed_pyspark()  # pyspark and py4j are installed here: the archives go
    assert sys.path == kept
    assert not [p for p in sys.path_importer_cache if p.startswith(tuple(archives))]
    # without an installed pyspark elsewhere, Spark's copies stay
    monkeypatch.setattr(sys, "path", [archives[0], *archives[1:]])
    daemon.installed_pyspark()
    assert sys.path == archives
