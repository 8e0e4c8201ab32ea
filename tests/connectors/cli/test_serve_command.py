import argparse
import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest

from connectors.cli import main
from connectors.cli.serve import register, run


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return parser.parse_args(["serve", *argv])


def test_defaults_are_loopback_and_read_only() -> None:
    args = _parse()
    assert (args.host, args.port, args.access_token_file) == ("127.0.0.1", 7878, None)
    assert args.handler is run


def test_store_and_knowledge_exclude_each_other() -> None:
    with pytest.raises(SystemExit):
        _parse("--store", "a", "--knowledge", "b")


def test_user_errors_exit_1_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--port", "0", "--access-token-file", str(tmp_path / "none")]) == 1
    assert capsys.readouterr().err.startswith("reasoner: cannot read the access token file")
    assert main(["serve", "--port", "0", "--knowledge", str(tmp_path / "missing.ttl")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("reasoner: ") and "no such file or folder" in err


def test_a_missing_store_is_an_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "kb-typo"
    assert main(["serve", "--port", "0", "--store", str(missing)]) == 1
    assert capsys.readouterr().err == (
        f"reasoner: {missing}: no knowledge store there "
        f"(`reasoner knowledge build --out {missing}` builds one)\n"
    )
    assert not missing.exists()


def test_federation_and_read_timeout_options() -> None:
    assert (_parse().allow_service, _parse().read_timeout) == (False, 10.0)
    args = _parse("--allow-service", "--read-timeout", "2.5")
    assert (args.allow_service, args.read_timeout) == (True, 2.5)


def _serve_and_ask(tmp_path: Path, ask: str, *options: str) -> str:
    """Start `reasoner serve --port 0` on the shipped weather ontology and one observation
    typed wt:Diablo, ask one query, stop the server; the answer body."""
    data = tmp_path / "obs.ttl"
    data.write_text(
        "@prefix wt: <http://etalis.example.org/ontology/weather#> .\n"
        "<http://ex.org/obs1> a wt:Diablo .\n"
    )
    ontology = Path(__file__).parents[3] / "ontologies" / "weather.ttl"
    argv = ["serve", "--port", "0", "--knowledge", str(ontology), str(data), *options]
    command = [sys.executable, "-m", "connectors.cli", *argv]
    # Started as a shell starts a background job (SIGINT ignored), stopped as a supervisor
    # stops a service (SIGTERM): the command installs its own handlers.
    server = subprocess.Popen(
        command,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        while not line.startswith("SPARQL endpoint at "):
            assert line, "the server exited before it listened"
            line = server.stderr.readline()
        url = line.split()[3]
        with urllib.request.urlopen(url + "?query=" + quote(ask), timeout=30) as answer:
            body = str(answer.read().decode())
        server.send_signal(signal.SIGTERM)
        _, rest = server.communicate(timeout=60)
        assert (server.returncode, rest) == (0, "")
        return body
    finally:
        if server.poll() is None:  # (a failed test never waits for it)
            server.kill()
            server.communicate(timeout=60)


ASK_WIND = (
    "ASK { <http://ex.org/obs1> a <http://etalis.example.org/ontology/weather#WindObservation> }"
)


def test_serve_applies_the_entailment_run_applies_by_default(tmp_path: Path) -> None:
    assert json.loads(_serve_and_ask(tmp_path, ASK_WIND)) == {"head": {}, "boolean": True}
    none = _serve_and_ask(tmp_path, ASK_WIND, "--entailment", "none")
    assert json.loads(none) == {"head": {}, "boolean": False}
