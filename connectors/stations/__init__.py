"""Weather-station descriptions: CSV tables and Linked-Sensor-Data RDF (no Spark needed)."""

from connectors.stations.lsd import NearLink, StationDescriptions, read_station_rdf
from connectors.stations.table import Station, read_station_csv, write_station_csv

__all__ = [
    "NearLink",
    "Station",
    "StationDescriptions",
    "read_station_csv",
    "read_station_rdf",
    "write_station_csv",
]
