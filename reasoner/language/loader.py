"""Rule files and text -> one :class:`~reasoner.language.ast.Program`; parsed rules are kept
between processes.

Parsing a rule file costs about as much as the rest of a command's start-up (lark's import,
its lexer, the tree transform), so :func:`parse_file` and :func:`parse_text` keep the program
in the user's cache directory (``$XDG_CACHE_HOME/etalis-reasoner/programs``, else
``~/.cache/...``): one entry per rule file path, or per rule text of at least
:data:`CACHED_TEXT` characters, holding the key it was parsed under (the text and the file's
path, and the parser's own source: grammar, parser, AST and operator modules, the Python
version). A changed file or parser only misses; an entry that cannot be read, was cut short
or does not match its checksum is parsed again and rewritten; a cache that cannot be written
only costs the parse. The most recently written :data:`KEEP` entries are kept. Entries are
pickles, like lark's own cache beside them: the directory is the user's; a fact file's runs
of facts are :class:`~reasoner.language.ast.Facts` tables, pickled as plain columns (no
object per fact). This module does not import lark: a file of facts only is read without it
(:mod:`reasoner.language.facts`), anything else by :mod:`reasoner.language.parser`, loaded on
a miss.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path

from reasoner.aside import write_aside
from reasoner.errors import ReasonerError
from reasoner.language.ast import Program
from reasoner.language.facts import scan

#: The entries' format; a new one misses every old entry.
FORMAT = b"reasoner-program 2"
#: Entries kept (one per rule file path); writing one more removes the oldest.
KEEP = 256
#: Rule text shorter than this is parsed every time: a few rules parse in milliseconds, and the
#: rules that actions add while a stream runs would crowd the files' entries out.
CACHED_TEXT = 2000
#: What the parser's output depends on besides the rule file (relative to this package).
_PARSER_SOURCES = ("grammar/etalis.lark", "parser.py", "facts.py", "ast.py", "operators.py")

#: What :func:`load_rules` accepts: rule text, ``.event`` paths, programs, or a sequence of them.
Rules = str | Path | Program | Sequence[str | Path | Program]


def load_rules(rules: Rules) -> Program:
    """Parse rule text, rule files and programs into one program.

    A string that names an existing ``.event`` file is read as that file; any other string is
    rule text (:func:`parse_text`).

    >>> len(load_rules("c <- a SEQ b.").event_rules)
    1
    """
    if isinstance(rules, Program):
        return rules
    if isinstance(rules, Path):
        return parse_file(rules)
    if isinstance(rules, str):
        if rules.endswith(".event") and "\n" not in rules and Path(rules).is_file():
            return parse_file(rules)
        return parse_text(rules)
    program = Program()
    for part in rules:
        program = program + load_rules(part)
    return program


def parse_file(path: str | Path) -> Program:
    """Read and parse one rule file, or take its program from the cache.

    Args:
        path: the ``.event`` file (spans carry ``str(path)``).

    Raises:
        ReasonerError: the file cannot be read.
        RuleSyntaxError: the text does not parse.

    >>> parse_file("rules/stock.event")  # doctest: +SKIP
    """
    return parse_text(read_file(path), str(path))


def read_file(path: str | Path) -> str:
    """The text of a rule file; ReasonerError when it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReasonerError(f"cannot read rule file '{path}': {exc}") from exc


def parse_text(text: str, file: str | None = None) -> Program:
    """Parse rule text, or take its program from the cache (the text of a ``file``, or rule
    text of at least :data:`CACHED_TEXT` characters).

    Args:
        text: the rules.
        file: the file they were read from (spans carry it), or None.

    Raises:
        RuleSyntaxError: the text does not parse.
    """
    folder = cache_dir() if file is not None or len(text) >= CACHED_TEXT else None
    parser = _parser_digest()
    entry = key = None
    if folder is not None and parser is not None:
        name = b"\0" if file is None else file.encode("utf-8", "surrogateescape")
        source = text.encode("utf-8", "surrogatepass")
        # one entry per file (a changed file replaces its entry), or per text
        entry = folder / hashlib.sha256(source if file is None else name).hexdigest()
        key = hashlib.sha256(parser + name + b"\0" + source).hexdigest().encode()
        program = _read(entry, key)
        if program is not None:
            return program
    found = scan(text, file)
    program = found.program(text)  # (a file of facts only is read without lark)
    if program is None:
        from reasoner.language.parser import parse

        program = parse(text, file, found)
    if entry is not None and key is not None:
        _write(entry, key, program)
    return program


def cache_dir(name: str = "programs") -> Path | None:
    """A folder of the user's cache directory for the reasoner (made if missing: by default
    the parsed rule files'), or None if it cannot be made. The installed package may be
    read-only, hence ``$XDG_CACHE_HOME/etalis-reasoner``, else ``~/.cache/etalis-reasoner``."""
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(home) / "etalis-reasoner" / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder


@functools.cache
def _parser_digest() -> bytes | None:
    """What a parse depends on besides the file (None: the parser's sources are not there to
    read, e.g. an install of bytecode only; nothing is cached then)."""
    digest = hashlib.sha256(FORMAT)
    digest.update(f"python {sys.version_info[0]}.{sys.version_info[1]}\0".encode())
    here = Path(__file__).parent
    try:
        for name in _PARSER_SOURCES:
            digest.update((here / name).read_bytes() + b"\0")
    except OSError:
        return None
    return digest.digest()


def _read(entry: Path, key: bytes) -> Program | None:
    """The program an entry holds under ``key``; None for a miss or a damaged entry."""
    try:
        data = entry.read_bytes()
    except OSError:
        return None
    header, _, body = data.partition(b"\n")
    if header != FORMAT + b" " + key + b" " + hashlib.sha256(body).hexdigest().encode():
        return None  # another key, another format, or damaged
    try:
        program = pickle.loads(body)
    except Exception:  # noqa: BLE001 (a body that passed its checksum but will not load)
        return None
    return program if isinstance(program, Program) else None


def _write(entry: Path, key: bytes, program: Program) -> None:
    """Write an entry aside and rename it over the old one (a reader never sees half)."""
    body = pickle.dumps(program, protocol=pickle.HIGHEST_PROTOCOL)
    header = FORMAT + b" " + key + b" " + hashlib.sha256(body).hexdigest().encode()
    try:
        write_aside(entry, lambda f: f.write(header + b"\n" + body), sync=False)
    except OSError:
        return
    _prune(entry.parent)


def _prune(folder: Path) -> None:
    """Keep the :data:`KEEP` most recently written entries (rule files in ever new temporary
    folders would otherwise add one each, for good)."""
    with contextlib.suppress(OSError):
        entries = list(os.scandir(folder))
        if len(entries) > KEEP:
            entries.sort(key=lambda entry: entry.stat().st_mtime_ns, reverse=True)
            for old in entries[KEEP:]:
                with contextlib.suppress(OSError):
                    os.unlink(old.path)
