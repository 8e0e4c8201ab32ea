"""Files written aside and renamed: a reader sees the old content or the new, never half.

Spark may run one task twice at once (speculative execution, an attempt that outlives its
executor's loss) and the driver may crash while writing: every file the Spark jobs write
(replay runs, a streaming batch's outputs, knowledge versions) goes through
:func:`write_aside`, so two writers of one path each write their own file and the last rename
wins whole.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO


def write_aside(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Call ``write`` on a new file beside ``path`` (a unique hidden name), sync it and rename
    it over ``path``; if ``write`` raises, the new file is removed and ``path`` is untouched.

    Example:
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     write_aside(Path(folder, "a"), lambda f: f.write(b"new"))
        ...     Path(folder, "a").read_bytes()
        b'new'
    """
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as f:
        try:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        except BaseException:
            os.unlink(f.name)
            raise
    os.replace(f.name, path)
