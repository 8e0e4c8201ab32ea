"""Writing triple tables as N-Triples part files, and the STORE_DIR swap.

Spark writes ``part-*.txt`` files; they are renamed ``.nt`` (so the store's loader knows their
syntax) and Spark's bookkeeping files are removed. A finished build replaces STORE_DIR with
one ``renameat2(RENAME_EXCHANGE)`` where Linux offers it, so readers see the old or the new
store and never a mix; elsewhere two renames leave a moment without STORE_DIR.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from reasoner.errors import KnowledgeError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def write_ntriples(triples: DataFrame, folder: Path) -> int:
    """Write a triple table as N-Triples files in a new folder.

    Args:
        triples: columns ``s``, ``p``, ``o`` in N-Triples syntax.
        folder: the folder to create (replaced if it exists).
    Returns:
        the number of triples written.

    >>> write_ntriples(station_triples(frame), Path("out/parts/stations"))  # doctest: +SKIP
    1586
    """
    from pyspark.sql import functions as F

    if folder.exists():
        shutil.rmtree(folder)
    line = F.concat_ws(" ", "s", "p", "o", F.lit("."))
    triples.select(line.alias("value")).write.text(str(folder))
    return finish_parts(folder)


def finish_parts(folder: Path) -> int:
    """Rename Spark's ``part-*`` files to ``.nt``, drop its markers, count the lines.

    Args:
        folder: a folder Spark wrote text into.
    Returns:
        the number of lines (triples) in the part files.

    >>> finish_parts(Path("out/parts/stations"))  # doctest: +SKIP
    1586
    """
    lines = 0
    for file in sorted(folder.iterdir()):
        if file.name.startswith("part-"):
            target = file.with_suffix(".nt")
            file.rename(target)
            with target.open("rb") as f:
                while chunk := f.read(1 << 20):
                    lines += chunk.count(b"\n")
        else:
            file.unlink()  # _SUCCESS and .crc checksums
    return lines


def count_lines(folder: Path) -> int:
    """The number of triples in a folder of ``.nt`` part files.

    Args:
        folder: the folder.
    Returns:
        the line count.

    >>> count_lines(Path("out/parts/stations"))  # doctest: +SKIP
    1586
    """
    total = 0
    for file in folder.glob("*.nt"):
        with file.open("rb") as f:
            while chunk := f.read(1 << 20):
                total += chunk.count(b"\n")
    return total


def swap_into_place(built: Path, target: Path) -> None:
    """Put a freshly built folder at ``target``, removing what was there.

    Args:
        built: the new folder (same file system as ``target``).
        target: STORE_DIR.
    Raises:
        KnowledgeError: when the rename fails (the old ``target`` is then unchanged).

    >>> swap_into_place(Path("kb.building"), Path("kb"))  # doctest: +SKIP
    """
    try:
        if not target.exists():
            built.rename(target)
            return
        if not _exchange(built, target):
            old = target.with_name(target.name + ".old")
            if old.exists():
                shutil.rmtree(old)
            target.rename(old)
            built.rename(target)
            built = old
        shutil.rmtree(built)
    except OSError as e:
        raise KnowledgeError(f"cannot put the new store at {target}: {e}") from e


def _exchange(a: Path, b: Path) -> bool:
    """Atomically exchange two paths with Linux's renameat2; False where unsupported."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result != 0:
        errno = ctypes.get_errno()
        # EINVAL / ENOSYS: the file system or kernel cannot exchange; fall back.
        if errno in (22, 38):
            return False
        raise OSError(errno, os.strerror(errno), str(b))
    return True
