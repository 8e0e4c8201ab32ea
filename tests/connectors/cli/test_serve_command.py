import argparse
from pathlib import Path

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
