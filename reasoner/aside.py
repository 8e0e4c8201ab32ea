"""Files written aside and renamed: a reader sees the old content or the new, never half.

Every file the project replaces in place goes through :func:`write_aside`: run checkpoints,
the parsed-rules cache, and what the Spark jobs write (replay runs, a streaming batch's
outputs, knowledge versions). Spark may run one task twice at once (speculative execution, an
attempt that outlives its executor's loss) and a process may crash while writing: each writer
writes its own file under a unique hidden name (file sources skip hidden names), and the last
rename wins whole.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO


def write_aside(path: Path, write: Callable[[IO[bytes]], object], *, sync: bool = True) -> None:
    """Call ``write`` on a new file beside ``path`` and rename it over ``path``; if anything
    fails, the new file is removed and ``path`` is untouched.

    Args:
        path: the file to replace (or create).
        write: writes the new content to the binary file it is given.
        sync: put the file on disk before the rename and the rename after it, so that a crash
            leaves the old file or the new one; ``False`` where losing the new one costs
            nothing (a cache).

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     write_aside(Path(folder, "a"), lambda f: f.write(b"new"))
        ...     Path(folder, "a").read_bytes()
        b'new'
    """
    # A random name, created exclusively: not tempfile (its import costs every command ~6 ms
    # through the rules cache, and its files are private, not of the umask's mode).
    aside = path.with_name(f".{path.name}.{os.urandom(6).hex()}")
    f = open(aside, "xb")  # noqa: SIM115 (closed below; removed on failure)
    try:
        with f:
            write(f)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(aside, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(aside)
        raise
    if sync:
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
