"""EP-SPARQL: SPARQL queries over a triple stream, compiled into event rules.

:mod:`.parser` reads query text into a :class:`~.query.Query`; :mod:`.translate` turns it into
ordinary event rules over the triple view (``triple(S, P, O)`` events), so the engine that runs
every other rule detects the query's answers. See docs/ep-sparql.md.
"""

from __future__ import annotations

from pathlib import Path

from reasoner.errors import Diagnostic, RuleCompileError
from reasoner.language.ast import Program
from reasoner.language.epsparql.parser import parse_query_file
from reasoner.language.epsparql.translate import CompiledQuery, compile_query, query_name


def load_query(path: str | Path, rules: Program | None = None) -> CompiledQuery:
    """Read, parse and compile a query file to run beside ``rules``.

    The head is named after the file (``drops.rq`` -> ``drops``).

    Args:
        path: the ``.rq`` file.
        rules: the rules it runs with: their prefixes must agree with the query's, and no rule
            may use the query's head names.
    Returns:
        The compiled query.
    Raises:
        ReasonerError: the file cannot be read; RuleSyntaxError, RuleCompileError: the query
            is wrong, or clashes with the rules.
    """
    query = parse_query_file(path)
    compiled = compile_query(query, query_name(Path(path).stem), Path(path).read_text("utf-8"))
    if rules is not None:
        declared = rules.prefixes
        for prefix, iri in query.prefixes:
            if declared.get(prefix, iri) != iri:
                raise RuleCompileError(
                    [
                        Diagnostic(
                            f"PREFIX {prefix}: <{iri}> differs from the rules' {prefix}: "
                            f"<{declared[prefix]}>",
                            query.span,
                        )
                    ]
                )
        used = {r.head.name for r in rules.event_rules}
        for head, _ in compiled.heads:
            if head in used:
                raise RuleCompileError(
                    [
                        Diagnostic(
                            f"the rules already derive '{head}', an event of the query's "
                            "results (a SELECT query's are named after its file)",
                            query.span,
                        )
                    ]
                )
    return compiled


__all__ = ["CompiledQuery", "compile_query", "load_query", "query_name"]
