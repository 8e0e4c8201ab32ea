"""GeoNames features: the dump reader and a generator of synthetic dumps (no Spark needed)."""

from connectors.geonames.dump import COLUMNS, Feature, geonames_iri, open_dump, read_dump

__all__ = ["COLUMNS", "Feature", "geonames_iri", "open_dump", "read_dump"]
