"""Spark jobs: the knowledge build (stations, GeoNames, neighbourhoods, RDFS) and its readers."""
