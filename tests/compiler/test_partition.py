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


def test_feeders_of_a_global_rule_in_arrival_order_run_globally() -> None:
    """The area rule (recent) reads warningNear events in arrival order: with them derived
    apart, in workers, it could not see them in one engine's order; so every rule feeding it
    runs in the global stage too, and each says why."""
    program = parse((ROOT / "rules" / "blizzard.event").read_text(), "blizzard.event")
    result = analyse(program)
    assert result.keyed == () and result.keys == ()
    reasons = {b.rule: (b.operator, b.reason) for b in result.blockers}
    assert reasons["4"] == (
        "feeds",
        "global rule area (blizzard.event:56:1) reads its events under the recent policy: "
        "they must reach it in one engine's order, so it runs in the global stage too",
    )
    assert reasons["0"][1].startswith("global rule warn (blizzard.event:40:1) reads its events")
    chronological = analyse(parse("c(X) <- a(X). g <- c(_) AND b.", "c.event"), "chronological")
    assert chronological.keyed == ()
    assert analyse(parse("c(X) <- a(X). g <- c(_) AND b.", "c.event")).keyed == (0,)
    counted = parse("c(X) <- a(X). n(N) <- aggregate(count, c(_), N, time(3)).", "n.event")
    [blocker] = [b for b in analyse(counted).blockers if b.rule == "0"]
    assert "reads its events into an aggregate" in str(blocker)


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
    assert lines[0] == "key: none (nothing runs partitioned)"
    assert f"global rule warn ({files[0]}:40:1): blizzardWarning(S, T1, T3)" in lines
    assert f"global rule area ({files[0]}:56:1): areaSettling(A, Stations, N + 1, T4)" in lines
    assert (
        f"blocked {files[0]}:48:1: rule 4: feeds: global rule area ({files[0]}:56:1) reads its "
        "events under the recent policy: they must reach it in one engine's order, so it runs "
        "in the global stage too"
    ) in lines
