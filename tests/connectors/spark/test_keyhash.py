"""The key group a Python worker computes for a key is the one Spark's expression
``pmod(hash(key), n)`` names (a checkpoint written when Spark computed it keeps its groups)."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from connectors.spark.keyhash import key_group, spark_hash

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def test_python_hashes_keys_as_spark_does(spark: SparkSession) -> None:
    from pyspark.sql import functions as F

    rng = random.Random(1)
    alphabet = "abcXYZ019 .-é€😀\0\"'"
    keys = ["", "C1", "\0rejects", "2", "2.5", '"x"'] + [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(12))) for _ in range(500)
    ]
    frame = spark.createDataFrame([(k,) for k in keys], "key string")
    found = frame.select("key", F.hash("key"), F.pmod(F.hash("key"), F.lit(64))).collect()
    assert [(k, spark_hash(k), key_group(k, 64)) for k in keys] == [tuple(r) for r in found]
