"""Why a fact of the static knowledge holds: post-hoc justification, down to asserted facts.

The knowledge is materialised without remembering how (that would cost every build). To
explain a fact, :class:`Justifier` finds, when asked, one rule instance whose premises hold,
then justifies the premises the same way, until every leaf is asserted:

* a triple of the store's asserted graph, or a fact written in a rule file, is *asserted*;
* a triple of the inferred graph was entailed: one RDFS / OWL 2 RL rule of
  :mod:`~reasoner.knowledge.entailment` (``rdfs9`` sub-class, ``rdfs7`` sub-property,
  ``rdfs2`` domain, ``rdfs3`` range, ``rdfs5`` / ``rdfs11`` schema transitivity,
  ``prp-trp`` transitive, ``prp-symp`` symmetric, ``prp-inv`` inverse, ...) with its
  premises in the store;
* a fact of a Horn rule's predicate was derived: one rule (file:line) whose body, with the
  head bound to the fact, has a solution (the body's knowledge calls are its premises;
  ``\\+`` goals use no fact).

A fact being justified is never its own premise (cycle protection), so recursive rules give
finite trees; the first rule instance found (rules in program order, instances with asserted
premises first) is the explanation. A fact no rule instance explains is reported as inferred
with no rule (an owlrl fallback's ``owl:sameAs`` reasoning, for instance).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.datalog.evaluate import DerivedKnowledge, body_term
from reasoner.knowledge.datalog.rules import Rule
from reasoner.knowledge.goals import Goal, compile_goal, term_binder, used_facts
from reasoner.language.ast import Atom, Compound, term_variables
from reasoner.spans import Span
from reasoner.values import IRI, Value
from reasoner.vocab import OWL, RDF, RDFS

_TYPE = IRI(RDF + "type")
_SUBCLASS = IRI(RDFS + "subClassOf")
_SUBPROPERTY = IRI(RDFS + "subPropertyOf")
_DOMAIN = IRI(RDFS + "domain")
_RANGE = IRI(RDFS + "range")
_EQ_CLASS = IRI(OWL + "equivalentClass")
_EQ_PROPERTY = IRI(OWL + "equivalentProperty")
_INVERSE = IRI(OWL + "inverseOf")
_TRANSITIVE = IRI(OWL + "TransitiveProperty")
_SYMMETRIC = IRI(OWL + "SymmetricProperty")
_PROPERTY = IRI(RDF + "Property")

Triple = tuple[Value, Value, Value]


@dataclass(frozen=True, slots=True)
class Fact:
    """A fact and why it holds.

    ``predicate`` is named as :class:`~reasoner.knowledge.base.Knowledge` names it (a triple
    ``s p o`` is ``p`` applied to ``(s, o)``); ``graph`` is ``"asserted"`` or ``"inferred"``;
    ``rule`` names what inferred it (an entailment rule such as ``"rdfs9"``, or a Horn rule's
    ``file:line``) or, for a fact written in a rule file, where it is written; ``text`` is the
    Horn rule as written; ``premises`` are the facts the rule instance used.
    """

    predicate: str
    args: tuple[Value, ...]
    graph: str
    rule: str | None = None
    text: str | None = None
    premises: tuple[Fact, ...] = ()

    @property
    def is_triple(self) -> bool:
        """Whether the fact is an RDF triple (a binary predicate named by an IRI)."""
        return len(self.args) == 2 and ":" in self.predicate

    def facts(self) -> Iterator[Fact]:
        """This fact and every premise below it, depth first."""
        yield self
        for premise in self.premises:
            yield from premise.facts()


#: Entailment rules by name: what each says (for readers of an explanation).
ENTAILMENT_RULES = {
    "rdfs9": "sub-class (cax-sco)",
    "rdfs7": "sub-property (prp-spo1)",
    "rdfs2": "domain (prp-dom)",
    "rdfs3": "range (prp-rng)",
    "rdfs11": "sub-class transitivity (scm-sco)",
    "rdfs5": "sub-property transitivity (scm-spo)",
    "rdf1": "predicates are properties",
    "scm-eqc1": "equivalent classes are sub-classes",
    "scm-eqp1": "equivalent properties are sub-properties",
    "prp-inv": "inverse properties",
    "prp-symp": "symmetric property",
    "prp-trp": "transitive property",
}


class Justifier:
    """Justifies facts of one knowledge version.

    Args:
        knowledge: what the goals asked: a :class:`KnowledgeVersion`, a program's own
            knowledge (:func:`~reasoner.knowledge.program.program_knowledge`) or a fact base.
        facts_at: where each fact written in a rule file is written, by ``(predicate, args)``.

    >>> from reasoner.knowledge.program import program_knowledge
    >>> from reasoner.language.parser import parse
    >>> kb = program_knowledge(parse("e(1, 2). e(2, 3). p(X, Y) :- e(X, Y). "
    ...                              "p(X, Z) :- e(X, Y), p(Y, Z)."))
    >>> fact = Justifier(kb).justify("p", (1, 3))
    >>> [(f.predicate, f.args, f.graph) for f in fact.facts()][:2]
    [('p', (1, 3), 'inferred'), ('e', (1, 2), 'asserted')]
    """

    def __init__(
        self,
        knowledge: Knowledge,
        facts_at: dict[tuple[str, tuple[Value, ...]], Span] | None = None,
    ) -> None:
        self.facts_at = facts_at or {}
        self.entailed: frozenset[Triple] = frozenset()
        closure = getattr(knowledge, "closure", None)
        if closure is not None:  # a KnowledgeVersion
            self.entailed = closure.inferred
            knowledge = knowledge.knowledge  # type: ignore[attr-defined]
        self.view = knowledge
        self.base = knowledge.base if isinstance(knowledge, DerivedKnowledge) else knowledge
        self.rules: dict[tuple[str, int], list[tuple[Rule, Goal]]] = {}
        if isinstance(knowledge, DerivedKnowledge):
            for stratum in knowledge.strata.strata:
                for rule in stratum.rules:
                    goal = compile_goal(body_term(rule), knowledge.prefixes, trace=True)
                    self.rules.setdefault((rule.predicate, rule.arity), []).append((rule, goal))
        self._prefixes = knowledge.prefixes if isinstance(knowledge, DerivedKnowledge) else {}
        self._memo: dict[tuple[str, tuple[Value, ...]], Fact] = {}
        self._open: set[tuple[str, tuple[Value, ...]]] = set()

    def justify(self, predicate: str, args: tuple[Value, ...]) -> Fact | None:
        """Why ``predicate(args)`` holds (None: it does not, or only through itself).

        Args:
            predicate: as the knowledge names it; ``rdf`` triples as ``("rdf", (s, p, o))``.
            args: the fact's values.
        Returns:
            the :class:`Fact` with its premises, down to asserted facts.
        """
        if predicate == "rdf" and len(args) == 3 and isinstance(args[1], IRI):
            predicate, args = args[1].value, (args[0], args[2])
        key = (predicate, args)
        found = self._memo.get(key)
        if found is not None or key in self._open:
            return found
        self._open.add(key)
        try:
            found = self._derive(predicate, args)
        finally:
            self._open.discard(key)
        if found is not None:
            self._memo[key] = found
        return found

    def _derive(self, predicate: str, args: tuple[Value, ...]) -> Fact | None:
        where = self.facts_at.get((predicate, args))
        if where is not None:
            return Fact(predicate, args, "asserted", _line(where))
        if self.base.defines(predicate, len(args)) and _holds(self.base, predicate, args):
            triple = (args[0], IRI(predicate), args[1]) if len(args) == 2 else None
            if triple is None or triple not in self.entailed:
                return Fact(predicate, args, "asserted")
            return self._entailed(triple) or Fact(predicate, args, "inferred")
        for rule, goal in self.rules.get((predicate, len(args)), ()):
            env: dict[str, Value] = {}
            binders = (term_binder(t, self._prefixes) for t in rule.head)
            if not all(bind(v, env) for bind, v in zip(binders, args, strict=True)):
                continue
            if not rule.body and not any(term_variables(Compound(predicate, rule.head))):
                return Fact(predicate, args, "asserted", _line(rule.span))
            for solution in goal.solutions(env, self.view):
                premises = self._all(used_facts(solution))
                if premises is not None:
                    return Fact(
                        predicate, args, "inferred", _line(rule.span), _text(rule), premises
                    )
        return None

    def _all(self, used: Iterable[tuple[str, tuple[Value, ...]]]) -> tuple[Fact, ...] | None:
        out = []
        for predicate, row in used:
            fact = self.justify(predicate, row)
            if fact is None:
                return None
            out.append(fact)
        return tuple(out)

    # ------------------------------------------------------------------ entailment

    def _entailed(self, triple: Triple) -> Fact | None:
        s, p, o = triple
        candidates = sorted(self._instances(s, p, o), key=self._inferred_count)
        for name, premises in candidates:
            facts = self._all((str(q), (a, b)) for a, q, b in premises)
            if facts is not None:
                return Fact(str(p), (s, o), "inferred", name, None, facts)
        return None

    def _inferred_count(self, instance: tuple[str, list[Triple]]) -> int:
        return sum(t in self.entailed for t in instance[1])

    def _has(self, s: Value, p: Value, o: Value) -> bool:
        return _holds(self.base, str(p), (s, o))

    def _objects(self, s: Value, p: Value) -> list[Value]:
        return [o for _, o in self.base.solve(str(p), (s, None))]

    def _subjects(self, p: Value, o: Value) -> list[Value]:
        return [s for s, _ in self.base.solve(str(p), (None, o))]

    def _instances(self, s: Value, p: Value, o: Value) -> Iterator[tuple[str, list[Triple]]]:
        """Every instance of an entailment rule concluding ``s p o`` whose premises hold."""
        if p == _TYPE:
            for c in self._objects(s, _TYPE):
                if self._has(c, _SUBCLASS, o):
                    yield "rdfs9", [(s, _TYPE, c), (c, _SUBCLASS, o)]
            for q in self._subjects(_DOMAIN, o):
                for y in self._objects(s, q)[:1]:
                    yield "rdfs2", [(s, q, y), (q, _DOMAIN, o)]
            for q in self._subjects(_RANGE, o):
                for x in self._subjects(q, s)[:1]:
                    yield "rdfs3", [(x, q, s), (q, _RANGE, o)]
            if o == _PROPERTY:
                for x, y in list(self.base.solve(str(s), (None, None)))[:1]:
                    yield "rdf1", [(x, s, y)]
        for q in self._subjects(_SUBPROPERTY, p):
            if q != p and self._has(s, q, o):
                yield "rdfs7", [(s, q, o), (q, _SUBPROPERTY, p)]
        for schema, name, equivalent, eq_name in (
            (_SUBCLASS, "rdfs11", _EQ_CLASS, "scm-eqc1"),
            (_SUBPROPERTY, "rdfs5", _EQ_PROPERTY, "scm-eqp1"),
        ):
            if p == schema:
                for a, b in ((s, o), (o, s)):
                    if self._has(a, equivalent, b):
                        yield eq_name, [(a, equivalent, b)]
                for y in self._objects(s, schema):
                    if y not in (s, o) and self._has(y, schema, o):
                        yield name, [(s, schema, y), (y, schema, o)]
        for q in {*self._objects(p, _INVERSE), *self._subjects(_INVERSE, p)}:
            if self._has(o, q, s):
                yield "prp-inv", [(o, q, s), (q, _INVERSE, p) if self._has(q, _INVERSE, p)
                                  else (p, _INVERSE, q)]  # fmt: skip
        if self._has(p, _TYPE, _SYMMETRIC) and self._has(o, p, s):
            yield "prp-symp", [(o, p, s), (p, _TYPE, _SYMMETRIC)]
        if self._has(p, _TYPE, _TRANSITIVE):
            for y in self._objects(s, p):
                if y not in (s, o) and self._has(y, p, o):
                    yield "prp-trp", [(s, p, y), (y, p, o), (p, _TYPE, _TRANSITIVE)]


def _holds(knowledge: Knowledge, predicate: str, args: tuple[Value, ...]) -> bool:
    return next(iter(knowledge.solve(predicate, args)), None) is not None


def _line(span: Span | None) -> str | None:
    return None if span is None else f"{span.file or '<rules>'}:{span.line}"


def _text(rule: Rule) -> str:
    from reasoner.language.printer import to_source

    head = Compound(rule.predicate, rule.head) if rule.head else Atom(rule.predicate)
    body = ", ".join(to_source(lit.term) for lit in rule.body)
    return f"{to_source(head)} :- {body}." if body else f"{to_source(head)}."
