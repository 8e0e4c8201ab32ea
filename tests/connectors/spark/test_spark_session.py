"""The session factory: settings, one session per process, class detection."""

import os
import sys

import pytest

from connectors.spark.neighbourhoods import GRAPHFRAMES_CLASS
from connectors.spark.session import get_session, has_jvm_class, spark_settings


def test_settings_from_arguments_then_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REASONER_SPARK_MASTER", raising=False)
    monkeypatch.delenv("REASONER_SPARK_MEMORY", raising=False)
    monkeypatch.delenv("REASONER_SPARK_PACKAGES", raising=False)
    default = spark_settings()
    assert default["spark.master"] == "local[*]"
    assert default["spark.driver.memory"] == "2g"
    assert default["spark.ui.enabled"] == "false"
    assert default["spark.sql.shuffle.partitions"] == "8"
    assert "spark.jars.packages" not in default
    monkeypatch.setenv("REASONER_SPARK_MASTER", "spark://head:7077")
    monkeypatch.setenv("REASONER_SPARK_MEMORY", "6g")
    monkeypatch.setenv("REASONER_SPARK_PACKAGES", "a:b:1,c:d:2")
    env = spark_settings()
    assert env["spark.master"] == "spark://head:7077"
    assert env["spark.driver.memory"] == "6g"
    assert env["spark.jars.packages"] == "a:b:1,c:d:2"
    assert "spark.sql.shuffle.partitions" not in env  # a cluster keeps Spark's default
    explicit = spark_settings(master="local[3]", memory="1g", packages=["x:y:3"])
    assert (explicit["spark.master"], explicit["spark.driver.memory"]) == ("local[3]", "1g")
    assert explicit["spark.jars.packages"] == "x:y:3"


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


def test_jvm_class_detection(spark) -> None:
    assert has_jvm_class(spark, "org.apache.spark.sql.Dataset")
    assert has_jvm_class(spark, "org.apache.spark.graphx.Graph")
    assert not has_jvm_class(spark, "org.example.NoSuchClass")
    # The GraphFrames jar is not installed here: the pipeline must take the DataFrame path.
    assert not has_jvm_class(spark, GRAPHFRAMES_CLASS)


def test_importing_the_connectors_starts_no_jvm() -> None:
    import subprocess

    code = (
        "import sys, connectors.spark.cli, connectors.spark.build, connectors.spark.rdfs, "
        "connectors.spark.near, connectors.spark.neighbourhoods, connectors.spark.readers; "
        "print('pyspark' in sys.modules)"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "False", out.stderr
