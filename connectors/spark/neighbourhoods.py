"""Job 3: station neighbourhoods and their connected components.

Two stations are neighbours when at most ``distance_km`` apart (the build's default,
:data:`~connectors.spark.build.DEFAULT_NEIGHBOUR_KM`, is seed 004's blizzard-area
distance). The components of the neighbour graph are computed by GraphFrames when its JVM
package is on Spark's classpath (``--packages io.graphframes:graphframes-spark4_2.13:<version>``,
``--jars`` or the ``REASONER_SPARK_*`` variables of :mod:`connectors.spark.session`), else on
DataFrames: contraction of each vertex to its smallest neighbour, with pointer jumping. Both
name a component by its smallest station id, so their outputs are identical.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from connectors.spark.geo import within
from connectors.spark.session import has_jvm_class
from connectors.spark.terms import const, iri, iri_col
from connectors.stations.vocab import RDF_TYPE, SSW
from reasoner.vocab import ER

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: The JVM class whose presence selects the GraphFrames implementation: the entry point
#: graphframes-py loads (through the same context class loader as the detection).
GRAPHFRAMES_CLASS = "org.graphframes.GraphFramePythonAPI"
#: Where neighbourhood (component) IRIs live: ``<prefix><smallest station id>``.
NEIGHBOURHOOD_PREFIX = "https://w3id.org/etalis-reasoner/id/neighbourhood/"


def station_pairs(stations: DataFrame, distance_km: float) -> DataFrame:
    """Pairs of stations at most ``distance_km`` apart, each unordered pair once.

    Args:
        stations: columns ``id``, ``lat``, ``lon`` (at least).
        distance_km: the bound (inclusive).
    Returns:
        columns ``a``, ``b`` (station ids, ``a < b``).

    >>> station_pairs(stations, 300.0).count()  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    probes = stations.select(
        F.col("id").alias("pid"), F.col("lat").alias("plat"), F.col("lon").alias("plon")
    )
    points = stations.select(
        F.col("id").alias("qid"), F.col("lat").alias("qlat"), F.col("lon").alias("qlon")
    )
    pairs = within(probes, points, distance_km, ordered=True)
    return pairs.select(F.col("pid").alias("a"), F.col("qid").alias("b"))


def components_dataframe(vertices: DataFrame, edges: DataFrame) -> DataFrame:
    """Connected components by contraction to the smallest neighbour, on DataFrames.

    A round points every vertex of the graph to the smallest id among itself and its
    neighbours, follows the pointers to their ends by pointer jumping (an end is smaller
    than all its neighbours), and replaces the graph by the edges between different ends.
    An end is never larger than the vertices that reach it and is connected to them, so when
    no edge is left every vertex is labelled with its component's smallest id. A dense
    neighbour graph keeps about one vertex per neighbourhood after the first round, so the
    edges are read in two or three rounds (min-label propagation reads them in every round,
    and needs a round per few hops of the longest path).

    Args:
        vertices: a column ``id`` (strings).
        edges: columns ``a``, ``b`` (undirected).
    Returns:
        columns ``id``, ``component`` (the smallest id of the component).

    >>> components_dataframe(stations.select("id"), pairs).count()  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    labels = vertices.select("id", F.col("id").alias("component")).localCheckpoint()
    graph = (
        edges.select("a", "b")
        .unionByName(edges.select(F.col("b").alias("a"), F.col("a").alias("b")))
        .filter(F.col("a") != F.col("b"))
        .distinct()
        .localCheckpoint()
    )
    while not graph.isEmpty():
        smallest = graph.groupBy("a").agg(F.min("b").alias("b"))
        parent = smallest.select(F.col("a").alias("v"), F.least("a", "b").alias("p"))
        parent = parent.localCheckpoint()
        while True:
            up = parent.select(F.col("v").alias("p"), F.col("p").alias("pp"))
            jump = parent.join(up, "p")
            if jump.filter(F.col("pp") != F.col("p")).isEmpty():
                break
            parent = jump.select("v", F.col("pp").alias("p")).localCheckpoint()
        ends_a = parent.select(F.col("v").alias("a"), F.col("p").alias("end_a"))
        ends_b = parent.select(F.col("v").alias("b"), F.col("p").alias("end_b"))
        graph = (
            graph.join(ends_a, "a")
            .join(ends_b, "b")
            .select(F.col("end_a").alias("a"), F.col("end_b").alias("b"))
            .filter(F.col("a") != F.col("b"))
            .distinct()
            .localCheckpoint()
        )
        moved = parent.select(F.col("v").alias("component"), F.col("p").alias("end"))
        labels = (
            labels.join(moved, "component", "left")
            .select("id", F.coalesce("end", "component").alias("component"))
            .localCheckpoint()
        )
    return labels


def components_graphframes(vertices: DataFrame, edges: DataFrame) -> DataFrame:
    """Connected components with GraphFrames (needs its JVM package), named like
    :func:`components_dataframe`.

    Args:
        vertices: a column ``id``.
        edges: columns ``a``, ``b``.
    Returns:
        columns ``id``, ``component`` (the smallest id of the component).

    >>> components_graphframes(stations.select("id"), pairs).count()  # doctest: +SKIP
    """
    from graphframes import GraphFrame
    from pyspark.sql import functions as F

    graph = GraphFrame(
        vertices.select("id"), edges.select(F.col("a").alias("src"), F.col("b").alias("dst"))
    )
    # Local checkpoints, like the DataFrame path: no checkpoint folder to set up and clean.
    found = graph.connectedComponents(use_local_checkpoints=True)
    smallest = found.groupBy("component").agg(F.min("id").alias("name"))
    return found.join(smallest, "component").select("id", F.col("name").alias("component"))


def uses_graphframes(spark: SparkSession) -> bool:
    """Whether :func:`connected_components` uses GraphFrames in this session.

    Args:
        spark: the session.
    Returns:
        True when GraphFrames' JVM package is on the session's classpath.

    >>> uses_graphframes(get_session())  # doctest: +SKIP
    False
    """
    return has_jvm_class(spark, GRAPHFRAMES_CLASS)


def connected_components(vertices: DataFrame, edges: DataFrame) -> DataFrame:
    """Connected components: GraphFrames when on the classpath, else DataFrame iteration.

    Args:
        vertices: a column ``id``.
        edges: columns ``a``, ``b``.
    Returns:
        columns ``id``, ``component`` (the smallest id of the component).

    >>> connected_components(stations.select("id"), pairs).count()  # doctest: +SKIP
    """
    if uses_graphframes(vertices.sparkSession):
        return components_graphframes(vertices, edges)
    return components_dataframe(vertices, edges)


def neighbourhood_triples(pairs: DataFrame, components: DataFrame) -> DataFrame:
    """RDF for neighbours and components.

    ``S1 er:nearStation S2`` in both directions for each pair; for each station
    ``S er:neighbourhood N`` and ``N a er:StationNeighbourhood``, with ``N`` named after the
    component's smallest station id.

    Args:
        pairs: the DataFrame of :func:`station_pairs`.
        components: the DataFrame of :func:`connected_components`.
    Returns:
        a triple table.

    >>> neighbourhood_triples(pairs, components).count()  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    near = iri(ER + "nearStation")
    forward = pairs.select(
        iri_col(SSW + "System_", F.col("a")).alias("s"),
        F.lit(near).alias("p"),
        iri_col(SSW + "System_", F.col("b")).alias("o"),
    )
    backward = forward.select(F.col("o").alias("s"), "p", F.col("s").alias("o"))
    hood = iri_col(NEIGHBOURHOOD_PREFIX, F.col("component"))
    member = components.select(
        iri_col(SSW + "System_", F.col("id")).alias("s"),
        F.lit(iri(ER + "neighbourhood")).alias("p"),
        hood.alias("o"),
    )
    kinds = components.select(
        hood.alias("s"),
        F.lit(iri(RDF_TYPE)).alias("p"),
        const(iri(ER + "StationNeighbourhood")).alias("o"),
    ).distinct()
    return forward.unionByName(backward).unionByName(member).unionByName(kinds)
