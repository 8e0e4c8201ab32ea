"""The files commands use by default, shipped inside the package.

The repository keeps them where a user of a clone looks for them (``rules/``, ``data/``,
``ontologies/``); this package links to those folders so that a wheel carries the same files
as package data, and :func:`shipped` finds them with :mod:`importlib.resources` whether the
project runs from a checkout or from an ordinary (non-editable) install.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def shipped(*parts: str) -> Path:
    """The path of a shipped file or folder.

    Args:
        parts: the path below the repository root, e.g. ``("rules", "blizzard.event")``.
    Returns:
        the file system path (wheels install unpacked, so package data are plain files).

    >>> shipped("rules", "blizzard.event").name
    'blizzard.event'
    """
    return Path(str(resources.files(__name__))).joinpath(*parts)
