"""The blizzard knowledge of the shipped sample, built once per test run with local Spark."""

from pathlib import Path

import pytest

from connectors.mesowest.blizzard import SAMPLE, stations_of
from connectors.mesowest.knowledge import prepare_knowledge
from connectors.spark.session import get_session


@pytest.fixture(scope="session")
def sample_files() -> tuple[Path, ...]:
    """The six MesoWest files of the shipped sample."""
    return tuple(sorted(SAMPLE.glob("*.csv")))


@pytest.fixture(scope="session")
def sample_store(tmp_path_factory: pytest.TempPathFactory, sample_files) -> Path:
    """A store built by the Spark pipeline from the sample's stations and GeoNames cities."""
    get_session(master="local[2]")  # the run's one session (shared with the Spark tests)
    folder = tmp_path_factory.mktemp("blizzard") / "knowledge"
    prepared = prepare_knowledge(folder, stations_of(sample_files), log=lambda _: None)
    assert prepared.built
    return prepared.store_dir
