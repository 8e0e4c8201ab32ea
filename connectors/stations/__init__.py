"""Weather stations and their descriptions: CSV tables (:mod:`.table`), Linked-Sensor-Data
RDF (:mod:`.lsd`, which imports rdflib) and synthetic tables (no Spark needed)."""

from connectors.stations.table import Station, read_station_csv, write_station_csv

__all__ = ["Station", "read_station_csv", "write_station_csv"]
