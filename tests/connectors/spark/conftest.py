"""One local Spark session (local[2]) for every Spark test of the run."""

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from connectors.spark.session import get_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def spark() -> Iterator["SparkSession"]:
    # get_session returns the process's session, so a session fixture elsewhere that calls
    # it shares this one; it is left running for other tests and ends with the process.
    yield get_session(master="local[2]")
