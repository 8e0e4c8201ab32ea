"""Spark's Python daemon for a quick-start session (:data:`connectors.spark.session.QUICK_DAEMON`).

Spark starts one daemon per executor, and the daemon forks the Python workers. This one
prepares what every worker would otherwise redo on its first task, then Spark's own daemon runs:

* Spark puts its own copies of pyspark and py4j first on the workers' path (zip files without
  compiled bytecode, so the daemon compiled pyspark's sources on every start), and its core
  jar; every worker re-read the directories of these archives on its first task (Python's
  import caches are cleared when Spark adds its files folder to the path): up to a CPU
  second per worker on the shared 2-core machine. When this interpreter has pyspark and py4j
  installed (a local master runs the driver's interpreter, whose pyspark is the one Spark
  runs), the archives are left off the path.
* It imports the archive replay's and the streaming query's modules, so that each forked
  worker has them (each would import them on its first task).
"""

import os
import sys
from importlib.machinery import PathFinder


def installed_pyspark() -> None:
    """Leave Spark's pyspark, py4j and core jar off the path when this interpreter has pyspark
    and py4j installed (what :mod:`connectors.spark.daemon` says)."""
    lib = os.sep + os.path.join("python", "lib") + os.sep
    # (Spark's core jar is there too, for a Spark build that packs pyspark in it: this
    # one holds no Python module, but each worker re-read its 6,000 entries)
    rest = [p for p in sys.path if not (p.endswith(".zip") and lib in p or p.endswith(".jar"))]
    zips = tuple(p for p in sys.path if p not in rest)
    if zips and all(PathFinder.find_spec(m, rest) for m in ("pyspark", "py4j")):
        sys.path[:] = rest
        # (finding this module already looked into the zips: forget their importers)
        for path in [p for p in sys.path_importer_cache if p.startswith(zips)]:
            del sys.path_importer_cache[path]


def main() -> None:
    """Run Spark's daemon on the installed pyspark, the replay's and stream's modules imported."""
    installed_pyspark()
    from pyspark.daemon import manager

    import connectors.spark.replay  # noqa: F401  (imported for the workers it forks)
    import connectors.spark.stream  # noqa: F401

    manager()


if __name__ == "__main__":
    main()
