"""A detection's derivation (``Engine(explain=True)``) in PROV-O, next to its description.

Each rule application is a ``prov:Activity`` that used the events it was built from and the
knowledge facts its WHERE / EVENT_MULTIPLY goals used; each inference of a fact is one too::

    <d> prov:wasGeneratedBy <d:derivation> .
    <d:derivation> a prov:Activity ; r:rule "rules/x.event:4:1" ; r:head "warn(X, Y)" ;
        prov:used <e1> , <d2> , <f1> .       # input events, derived events, facts
    <d2> a r:Detection ; ... ; prov:wasGeneratedBy <d2:derivation> .      # and so on, down
    <f1> a r:Fact , rdf:Statement ; r:graph "inferred" ;                   # a triple
        rdf:subject <s> ; rdf:predicate <p> ; rdf:object <o> ;
        prov:wasGeneratedBy <f1:inference> .
    <f1:inference> a prov:Activity ; r:rule "rdfs9" ; prov:used <f2> , <f3> .
    <f4> a r:Fact ; r:graph "asserted" ; r:predicate "near" ; rdf:_1 "a" ; rdf:_2 "b" ;
        r:writtenAt "rules/x.event:2" .                                    # a rule file's fact

with ``r:`` = ``urn:reasoner:vocab#``. Facts are ``urn:reasoner:fact:<hash>`` of predicate and
arguments, so a fact used by several detections is one resource in the endpoint's graph.
"""

from __future__ import annotations

import hashlib

from reasoner.knowledge.justify import Fact
from reasoner.rdf.ntriples import VOCAB, iri, string, term
from reasoner.runtime.explain import Step
from reasoner.vocab import PROV, RDF

#: The class of a knowledge fact used by a derivation.
FACT_CLASS = f"{VOCAB}Fact"


def derivation_triples(step: Step, *, dates: bool = True) -> list[str]:
    """The PROV-O statements of a derivation (see the module doc), without the final dot.

    Args:
        step: from :func:`reasoner.runtime.explain.explain` (a derived event).
        dates: as for :func:`~reasoner.rdf.detections.event_triples` (derived events used).
    Returns:
        the statements; those describing a shared fact or event may repeat (RDF merges them).

    >>> from reasoner.runtime.engine import Engine
    >>> from reasoner.runtime.events import Event
    >>> from reasoner.runtime.explain import explain
    >>> engine = Engine("near(a, b). w(X, Y) <- alarm(X) WHERE near(X, Y).", explain=True)
    >>> [d] = engine.push(Event.at("alarm", ("a",), 1))
    >>> [line for line in derivation_triples(explain(d)) if "writtenAt" in line][0][-11:]
    '"<rules>:1"'
    """
    from reasoner.rdf.detections import DETECTION_CLASS, detection_iri, event_iri, event_triples

    if step.rule is None:
        return []
    subject = detection_iri(step.event)
    activity = f"<{subject}:derivation>"
    lines = [
        f"<{subject}> <{PROV}wasGeneratedBy> {activity}",
        f"{activity} <{RDF}type> <{PROV}Activity>",
        f"{activity} <{VOCAB}rule> {string(step.rule.at)}",
        f"{activity} <{VOCAB}head> {string(step.rule.head)}",
    ]
    for used in step.inputs:
        if used.rule is None:
            lines.append(f"{activity} <{PROV}used> <{event_iri(used.event)}>")
        else:
            derived = detection_iri(used.event)
            lines.append(f"{activity} <{PROV}used> <{derived}>")
            lines += event_triples(used.event, derived, DETECTION_CLASS, dates=dates)
            lines += derivation_triples(used, dates=dates)
    for goal in step.goals:
        for fact in goal.facts:
            lines.append(f"{activity} <{PROV}used> <{fact_iri(fact)}>")
            lines += fact_triples(fact)
    return lines


def fact_iri(fact: Fact) -> str:
    """The IRI of a fact: a hash of its predicate and arguments.

    >>> fact_iri(Fact("near", ("a", "b"), "asserted")).startswith("urn:reasoner:fact:")
    True
    """
    key = repr((fact.predicate, fact.args)).encode()
    return f"urn:reasoner:fact:{hashlib.sha256(key).hexdigest()[:32]}"


def fact_triples(fact: Fact) -> list[str]:
    """A fact, and how it was inferred (down to asserted facts), as statements.

    >>> fact_triples(Fact("near", ("a", "b"), "asserted"))[1][-37:]
    '<urn:reasoner:vocab#graph> "asserted"'
    """
    node = f"<{fact_iri(fact)}>"
    lines = [f"{node} <{RDF}type> <{FACT_CLASS}>", f"{node} <{VOCAB}graph> {string(fact.graph)}"]
    if fact.is_triple:
        lines += [
            f"{node} <{RDF}type> <{RDF}Statement>",
            f"{node} <{RDF}subject> {term(fact.args[0])}",
            f"{node} <{RDF}predicate> {iri(fact.predicate)}",
            f"{node} <{RDF}object> {term(fact.args[1])}",
        ]
    else:
        lines.append(f"{node} <{VOCAB}predicate> {string(fact.predicate)}")
        lines += [f"{node} <{RDF}_{i}> {term(a)}" for i, a in enumerate(fact.args, start=1)]
    if fact.graph == "asserted":
        if fact.rule is not None:
            lines.append(f"{node} <{VOCAB}writtenAt> {string(fact.rule)}")
        return lines
    inference = f"<{fact_iri(fact)}:inference>"
    lines += [
        f"{node} <{PROV}wasGeneratedBy> {inference}",
        f"{inference} <{RDF}type> <{PROV}Activity>",
    ]
    if fact.rule is not None:
        lines.append(f"{inference} <{VOCAB}rule> {string(fact.rule)}")
    for premise in fact.premises:
        lines.append(f"{inference} <{PROV}used> <{fact_iri(premise)}>")
        lines += fact_triples(premise)
    return lines
