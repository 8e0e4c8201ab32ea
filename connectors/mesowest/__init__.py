"""MesoWest / Synoptic sensor data: reading, writing and generating station time series."""

from connectors.mesowest.generator import GeneratorError, Storm, generate, simulate
from connectors.mesowest.reader import NONE, SENSOR_READING, MesoWestFile, read_mesowest
from connectors.mesowest.station import SHIPPED_STATIONS, load_stations
from connectors.mesowest.writer import write_mesowest
from connectors.stations.table import Station

__all__ = [
    "NONE",
    "SENSOR_READING",
    "SHIPPED_STATIONS",
    "GeneratorError",
    "MesoWestFile",
    "Station",
    "Storm",
    "generate",
    "load_stations",
    "read_mesowest",
    "simulate",
    "write_mesowest",
]
