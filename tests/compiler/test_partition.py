"""The partition analysis: keys found, rules keyed, and the operator that prevents keying."""

from pathlib import Path

import pytest

from connectors.cli import main
from reasoner.compiler.partition import analyse
from reasoner.language.parser import parse

ROOT = Path(__file__).resolve().parents[2]


def test_blizzard_keys_by_station_and_leaves_areas_global() -> None:
    text = (ROOT / "rules" / "blizzard.event").read_text()
    unordered = text.replace("area([property(consumption_policy, recent)]) ", "area ")
    program = parse(unordered, "blizzard.event")
    result = analyse(program)
    assert dict(result.keys) == {
        ("sensor_reading", 9): 0,
        ("blizzardReading", 2): 0,
        ("blizzardSettling", 4): 0,
        ("blizzardWarning", 3): 0,
        ("warningNear", 4): 1,
    }
    assert result.keyed == (0, 1, 2, 3, 4)
    assert result.remainder == (5, 6, 7, 8, 9)
    first = result.blockers[0]
    assert (first.rule, first.operator) == ("5", "event warningNear(A, _, _, _)")
    assert str(first) == (
        "blizzard.event:55:66: rule 5: event warningNear(A, _, _, _): "
        "its key (argument 2) is not a named variable"
    )


def test_blizzard_rules_partition_under_their_own_policies() -> None:
    """The area rule (recent) reads warningNear events in arrival order; the global stage
    places the keyed stage's events in one engine's order, so the readings, settlings,
    warnings and warningNear still run per station."""
    program = parse((ROOT / "rules" / "blizzard.event").read_text(), "blizzard.event")
    result = analyse(program)
    assert result.keyed == (0, 1, 2, 3, 4)
    assert result.remainder == (5, 6, 7, 8, 9)
    assert dict(result.keys)[("warningNear", 4)] == 1
    assert result.reads == (
        ("areaSettling", 4),
        ("blizzardArea", 3),
        ("blizzardWarning", 3),
        ("warningNear", 4),
    )


def test_feeders_deriving_at_timers_of_a_global_rule_in_arrival_order_run_globally() -> None:
    """What a keyed rule derives when a timer fires has no input event whose derivation tree
    places it: such a rule feeding a global rule in arrival order runs globally, and so does
    a keyed rule reading what it derives; each says why."""
    text = "c(X) <- a(X) DURING (0 SEQ 3). d(X) <- c(X) SEQ b(X). g <- d(_) AND e."
    for policy, keyed in (("chronological", ()), ("unrestricted", (0, 1))):
        assert analyse(parse(text, "c.event"), policy).keyed == keyed
    assert analyse(parse("c(X) <- a(X). g <- c(_) AND b.", "c.event"), "recent").keyed == (0,)
    alarmed = parse("exceptionAlarm(c(X), 2) <- a(X). g <- c(_) AND b.", "r.event")
    assert analyse(alarmed, "recent").keyed == ()
    assert "(an alarm rule, exceptionAlarm)" in analyse(alarmed, "recent").blockers[0].reason
    taking = parse("c(X) <- a(X) DURING (0 SEQ 3). g <- c(_) FORALL_SEQ b.", "t.event")
    [blocker] = analyse(taking).blockers[:1]
    assert blocker.rule == "0" and "reads its events through FORALL_SEQ" in blocker.reason
    counted = parse(
        "c(X) <- a(X) DURING (0 SEQ 3). d(X) <- c(X) SEQ b(X).\n"
        "n(N) <- aggregate(count, d(_), N, time(3)).",
        "n.event",
    )
    result = analyse(counted)
    assert result.keyed == ()
    reasons = {b.rule: (b.operator, b.reason) for b in result.blockers}
    assert reasons["0"] == (
        "feeds",
        "global rule 2 (n.event:2:1) reads its events into an aggregate, and it may derive "
        "when a timer fires (time point 0): such events cannot be placed in one engine's "
        "order, so it runs in the global stage too",
    )
    assert reasons["1"][1].startswith(
        "global rule 2 (n.event:2:1) reads its events into an aggregate, and it may derive "
        "when a timer fires (it reads c/1, derived by rule 0)"
    )


def test_keyed_rule_sharing_a_node_with_a_global_rule_runs_globally() -> None:
    """k and n share the node of (a SEQ b); n is global (it counts every key) and reads in
    arrival order: one dispatch of b would derive for both stages, so k runs globally."""
    text = "k(K, X) <- a(K, X) SEQ b(K, X). n(N) <- aggregate(count, a(_K, _X) SEQ b(_K, _X), N)."
    result = analyse(parse(text, "s.event"))
    assert result.keyed == ()
    assert str(result.blockers[0]) == (
        "s.event:1:1: rule 0: shares: a network node with global rule 1 (s.event:1:33): one "
        "dispatch would derive for both stages, and a global rule reads in arrival order, "
        "so it runs in the global stage too"
    )
    apart = "k(K, X) <- a(K, X) SEQ b(K, X). n(N) <- aggregate(count, b(_K, _X), N)."
    assert analyse(parse(apart, "s.event")).keyed == (0,)


def test_join_on_different_keys_names_the_operator() -> None:
    program = parse("c(X) <- a(X) SEQ b(X).\nr1 'rule:' d(X, Y) <- a(X) AND\n  b(Y).", "f.event")
    result = analyse(program)
    assert result.keyed == (0,)
    [blocker] = result.blockers
    assert str(blocker) == (
        "f.event:2:23: rule r1: AND: combines occurrences whose keys may differ (keyed by X, Y)"
    )


def test_negation_without_the_key_prevents_keying() -> None:
    program = parse("c(X) <- NOT(alarm).[a(X), b(X)].", "n.event")
    [blocker] = analyse(program).blockers
    assert (blocker.operator, blocker.span.line, blocker.span.column) == ("event alarm", 1, 13)
    assert blocker.reason == "event type alarm/0 has no partition key"


def test_negation_sharing_the_key_is_keyed() -> None:
    result = analyse(parse("c(X) <- NOT(alarm(X)).[a(X), b(X)]. d(X) <- c(X) FNOT e(X)."))
    assert result.keyed == (0, 1) and result.remainder == ()


def test_aggregate_must_group_by_the_key() -> None:
    grouped = analyse(parse("c(K, N) <- aggregate(count, a(K, V), N)."))
    assert grouped.keyed == (0,)
    program = parse("c(K) <- a(K) SEQ aggregate(sum(K), b(K), N).", "g.event")
    [blocker] = analyse(program).blockers
    assert blocker.operator == "aggregate"
    assert blocker.reason == "its groups do not include the key K (aggregated or written _Name)"


def test_time_point_joins_keyed_occurrences_only_when_unrestricted() -> None:
    program = parse("c(X) <- 5 SEQ a(X).", "t.event")
    assert analyse(program).keyed == (0,)
    [blocker] = analyse(program, policy="recent").blockers
    assert blocker.operator == "time point 5"
    assert str(blocker.span) == "t.event:1:9"


def test_recursion_keeps_the_key() -> None:
    program = parse(
        "s(X, 1) <- r(X).\n"
        "s(X, N + 1) <- s(X, N) SEQ r(X).\n"
        "t(Y, N) <- s(X, N) SEQ r(Y)."  # moves to another key: global
    )
    result = analyse(program)
    assert dict(result.keys) == {("r", 1): 0, ("s", 2): 0}
    assert result.keyed == (0, 1) and result.remainder == (2,)
    assert result.reads == (("r", 1), ("s", 2))


def test_head_without_the_key_makes_the_type_unkeyed_for_readers() -> None:
    program = parse(
        "e(X) <- a(X) SEQ b(X, Y). c(Y) <- a(X) SEQ b(X, Y). d(Y) <- c(Y) SEQ c(Y).", "h.event"
    )
    result = analyse(program)
    assert result.keyed == (0,)
    assert [b.operator for b in result.blockers] == ["head", "event c(Y)"]
    assert result.blockers[0].reason == "c(Y) does not carry the key X"


def test_declared_key_trusts_the_rule() -> None:
    text = (
        "near(X, Y) :- X = Y.\n"
        "r([property(partition_key, S)]) 'rule:' c(S) <- a(S) SEQ b(T) WHERE near(S, T)."
    )
    assert analyse(parse(text)).keyed == (0,)
    assert analyse(parse(text.replace("([property(partition_key, S)])", ""))).keyed == ()


def test_check_emit_partitioning_reads_all_files(capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(ROOT / "rules" / "blizzard.event"), str(ROOT / "rules" / "blizzard_noaa.event")]
    assert main(["check", *files, "--emit", "partitioning"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "key blizzardReading/2: argument 1"
    assert f"keyed rule warn ({files[0]}:40:1): blizzardWarning(S, T1, T3)" in lines
    assert f"global rule area ({files[0]}:56:1): areaSettling(A, Stations, N + 1, T4)" in lines
    assert (
        f"blocked {files[0]}:55:66: rule 5: event warningNear(A, _, _, _): its key "
        "(argument 2) is not a named variable"
    ) in lines


def test_rule_changing_actions_keep_every_rule_global() -> None:
    program = parse("c(X) <- a(X) SEQ b(X).\nr 'rule:' d(X) <- c(X) do ins_event_rule(e <- f).\n")
    p = analyse(program)
    reason = (
        "<rules>:2:27: rule {}: action: rule r (<rules>:2:1) runs ins_event_rule, which changes "
        "the rules while the stream runs: every partition would need the change, so nothing "
        "runs partitioned"
    )
    assert p.dump(program) == "\n".join(
        [
            "key: none (nothing runs partitioned)",
            "global rule 0 (<rules>:1:1): c(X)",
            "global rule r (<rules>:2:1): d(X)",
            "global reads a/1",
            "global reads b/1",
            "global reads c/1",
            "blocked " + reason.format(0),
            "blocked " + reason.format("r"),
            "",
        ]
    )


def test_a_rule_change_among_other_actions_keeps_every_rule_global() -> None:
    program = parse("c(X) <- a(X) SEQ b(X).\nd(X) <- c(X) do (write(X), ins_event_rule(e <- f)).\n")
    reason = (
        "<rules>:2:28: rule {}: action: rule 1 (<rules>:2:1) runs ins_event_rule, which changes "
        "the rules while the stream runs: every partition would need the change, so nothing "
        "runs partitioned"
    )
    lines = analyse(program).dump(program).splitlines()
    assert lines[0] == "key: none (nothing runs partitioned)"
    assert lines[-2:] == ["blocked " + reason.format(0), "blocked " + reason.format(1)]
