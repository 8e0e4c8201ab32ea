"""``reasoner check`` through the ``reasoner`` command line (in-process, via ``main``)."""

from pathlib import Path

import pytest

from connectors.cli import main

ROOT = Path(__file__).resolve().parents[3]


def test_help_lists_check(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    assert "check" in capsys.readouterr().out


def test_check_valid_files(capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(ROOT / "rules" / "stock_ticker.event"), str(ROOT / "rules" / "weather.event")]
    assert main(["check", *files]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_check_emit_ast(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(ROOT / "rules" / "stock_ticker.event"), "--emit", "ast"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("EventRule(head=EventAtom(name=ce1")


def test_check_broken_file_names_first_syntax_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.event"
    bad.write_text("ok <- a.\n\nc(X) <- a(X) b(X).\n", encoding="utf-8")
    good = ROOT / "rules" / "income.event"
    assert main(["check", str(bad), str(good)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:3:14: expected a pattern operator")
    assert "    c(X) <- a(X) b(X).\n                 ^" in err


def test_check_refuses_a_zero_denominator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.etr"
    bad.write_text("c(X) <- a(X) WHERE X > 1r0.\n", encoding="utf-8")
    assert main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"{bad}:1:24: expected a rational with a nonzero denominator, found '1r0'",
        "    c(X) <- a(X) WHERE X > 1r0.",
        "                           ^",
    ]


def test_check_reports_every_compile_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "unbound.event"
    bad.write_text("c(X, Y) <- a(X).\nd <- a(X) WHERE Z > 1.\n", encoding="utf-8")
    assert main(["check", str(bad)]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith(str(bad))]
    assert lines == [
        f"{bad}:1:6: unbound variable 'Y' in the rule head",
        f"{bad}:2:17: unbound variable 'Z' in WHERE",
    ]


def test_check_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "missing.event")]) == 1
    assert "cannot read rule file" in capsys.readouterr().err


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: reasoner" in capsys.readouterr().err


def test_check_refuses_the_static_rules_run_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A recursive predicate whose rule leaves a head variable unbound cannot be materialised:
    # `reasoner run` refuses it when loading the knowledge, so `reasoner check` must too.
    bad = tmp_path / "reach.event"
    bad.write_text(
        "edge(1, 2).\nreach(X, Y) :- edge(X, Y).\nreach(X, Y) :- reach(X, Z), edge(Z, _W).\n"
        "c(Y) <- a(X) WHERE reach(X, Y).\n",
        encoding="utf-8",
    )
    message = (
        f"{bad}:3:1: recursive predicate reach/2 has a rule that is not range-restricted "
        "(every head variable must be bound by the body)"
    )
    assert main(["check", str(bad)]) == 1
    assert capsys.readouterr().err.splitlines()[0] == message
    events = tmp_path / "a.jsonl"
    events.write_text('{"name": "a", "args": [1], "time": 1}\n', encoding="utf-8")
    assert main(["run", str(bad), "--events", str(events)]) == 1
    assert capsys.readouterr().err.strip() == f"reasoner: {message}"


def test_check_refuses_a_materialised_rule_calling_an_on_demand_one_unbound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # q0 is answered per call; q1, materialised, would call it with nothing bound
    bad = tmp_path / "q.event"
    bad.write_text(
        "e(1, 2).\nq0(X, Y) :- \\+ e(Y, X).\nq1(X, Y) :- q0(X, Y), X < Y.\n", encoding="utf-8"
    )
    assert main(["check", str(bad)]) == 1
    assert capsys.readouterr().err.splitlines()[0] == (
        f"{bad}:3:13: variable 'X' is not bound when q0/2 is called: q0/2 is answered per call "
        "(top-down) and needs it bound (bind it by an earlier goal)"
    )
    bad.write_text(
        "e(1, 2).\nd(1). d(2).\nq0(X, Y) :- \\+ e(Y, X).\n"
        "q1(X, Y) :- d(X), d(Y), q0(X, Y), X < Y.\n",
        encoding="utf-8",
    )
    assert main(["check", str(bad)]) == 0


def test_check_refuses_a_condition_calling_an_on_demand_predicate_unbound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a(X) binds X only: q0, answered per call, would be asked without Y
    bad = tmp_path / "q.event"
    bad.write_text(
        "e(1, 2).\nq0(X, Y) :- \\+ e(Y, X).\nhit(X, Y) <- a(X) WHERE q0(X, Y).\n",
        encoding="utf-8",
    )
    assert main(["check", str(bad)]) == 1
    assert capsys.readouterr().err.splitlines()[0] == (
        f"{bad}:3:25: variable 'Y' is not bound when q0/2 is called: q0/2 is answered per call "
        "(top-down) and needs it bound (bind it by an earlier goal)"
    )
    bad.write_text(
        "e(1, 2).\nd(1). d(2).\nq0(X, Y) :- \\+ e(Y, X).\n"
        "hit(X, Y) <- a(X) WHERE (d(Y), q0(X, Y)).\n",
        encoding="utf-8",
    )
    assert main(["check", str(bad)]) == 0


def test_check_refuses_a_materialised_rule_calling_a_built_in_unbound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # p needs X bound (atom_length/2 needs its first argument): p is answered per call, and
    # q, materialised, would call it with nothing bound
    bad = tmp_path / "p.etr"
    bad.write_text("p(X) :- atom_length(X, 3).\nq(X) :- p(X).\n", encoding="utf-8")
    assert main(["check", str(bad)]) == 1
    assert capsys.readouterr().err.splitlines()[0] == (
        f"{bad}:2:9: variable 'X' is not bound when p/1 is called: p/1 is answered per call "
        "(top-down) and needs it bound (bind it by an earlier goal)"
    )
    bad.write_text("p(X) :- atom_length(X, 3).\nh(X) <- a(X) WHERE p(X).\n", encoding="utf-8")
    assert main(["check", str(bad)]) == 0
