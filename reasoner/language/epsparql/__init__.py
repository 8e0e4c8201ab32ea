"""EP-SPARQL: SPARQL queries over a triple stream, compiled into event rules.

:mod:`.parser` reads query text into a :class:`~.query.Query`; :mod:`.translate` turns it into
ordinary event rules over the triple view (``triple(S, P, O)`` events), so the engine that runs
every other rule detects the query's answers. See docs/ep-sparql.md.
"""
