"""Spark's ``hash`` of a string, computed in Python.

``reasoner spark stream`` puts a key in key group ``pmod(hash(key), n)``, Spark's SQL
``hash`` (Murmur3 x86 32-bit, seed 42, over the UTF-8 bytes, with Spark's own handling of the
last 1-3 bytes: each one mixed in as a signed int). The file reader computes the group in
the Python worker, where it packs a file's rows by group, and a checkpoint's groups must stay
where Spark's expression put them.
"""

from __future__ import annotations

from functools import lru_cache

_C1, _C2, _MASK = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
#: Spark's seed of ``hash``.
SEED = 42


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _mix_k1(k1: int) -> int:
    return _rotl((k1 * _C1) & _MASK, 15) * _C2 & _MASK


def _mix_h1(h1: int, k1: int) -> int:
    return (_rotl(h1 ^ k1, 13) * 5 + 0xE6546B64) & _MASK


def spark_hash(text: str) -> int:
    """Spark's ``hash(text)`` (a signed 32-bit int).

    >>> spark_hash("C1"), spark_hash("")
    (1240858952, 142593372)
    """
    data = text.encode("utf-8")
    aligned = len(data) - len(data) % 4
    h1 = SEED
    for i in range(0, aligned, 4):
        h1 = _mix_h1(h1, _mix_k1(int.from_bytes(data[i : i + 4], "little")))
    for byte in data[aligned:]:  # (a signed byte, as a Java int)
        h1 = _mix_h1(h1, _mix_k1((byte - 256 if byte > 127 else byte) & _MASK))
    h1 ^= len(data)
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _MASK
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 > 0x7FFFFFFF else h1


@lru_cache(maxsize=1 << 16)
def key_group(key: str, groups: int) -> int:
    """The group of ``key`` among ``groups``: Spark's ``pmod(hash(key), groups)``.

    >>> key_group("C1", 64)
    8
    """
    return spark_hash(key) % groups
