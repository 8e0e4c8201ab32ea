"""Files written aside and renamed."""

from pathlib import Path
from typing import IO

import pytest

from reasoner.aside import write_aside


def test_a_writer_that_fails_half_way_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "run-00000"
    write_aside(target, lambda f: f.write(b"old content"))

    def fails(f: IO[bytes]) -> None:
        f.write(b"half of the new")
        assert not target.read_bytes().startswith(b"half")  # not visible while written
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_aside(target, fails)
    assert target.read_bytes() == b"old content"
    assert [p.name for p in tmp_path.iterdir()] == ["run-00000"]  # the new file removed


def test_two_writers_of_one_path_each_write_their_own_file(tmp_path: Path) -> None:
    target = tmp_path / "derived-00003"

    def first(f: IO[bytes]) -> None:
        f.write(b"first ")
        write_aside(target, lambda g: g.write(b"second, whole"))  # another attempt, meanwhile
        f.write(b"whole")

    write_aside(target, first)
    assert target.read_bytes() == b"first whole"  # the last rename wins, whole
    assert [p.name for p in tmp_path.iterdir()] == ["derived-00003"]
