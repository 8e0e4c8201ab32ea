"""Occurrence stores: where a node keeps the occurrences waiting for a partner ("goals").

A store is a dict from join key to a bucket of occurrences ``(values, start, end)`` in
arrival order. The consumption policy decides what a bucket keeps:

* unrestricted and chronological: every stored occurrence (chronological removes the ones it
  consumes);
* recent: only the latest occurrence per key; among occurrences ending at the same time the
  tie-break decides which is "latest" (seed 000 §6.2).

Freeing (:meth:`Store.expire`, :meth:`Store.drop`) is told the current time: a recent store
keeps an occurrence that ends now even when it can no longer match, since until time moves on
it still shadows a later arrival with the same end that the tie-break ranks below it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reasoner.values import Time

#: (values, start, end), and whatever a node keeps with it (an aggregate its window).
Occurrence = tuple[Any, ...]
INF = float("inf")


class Store:
    """Occurrences per join key, in arrival order."""

    __slots__ = ("buckets", "size")

    def __init__(self) -> None:
        self.buckets: dict[Any, list[Occurrence]] = {}
        self.size = 0

    def add(self, key: Any, occ: Occurrence) -> None:
        bucket = self.buckets.get(key)
        if bucket is None:
            self.buckets[key] = [occ]
        else:
            bucket.append(occ)
        self.size += 1

    def remove(self, key: Any, index: int) -> None:
        bucket = self.buckets[key]
        del bucket[index]
        if not bucket:
            del self.buckets[key]
        self.size -= 1

    def clear(self) -> None:
        self.buckets.clear()
        self.size = 0

    def fill(self, buckets: dict[Any, list[Occurrence]]) -> None:
        """Hold exactly ``buckets`` (a snapshot's; in place: generated probes hold the dict)."""
        self.buckets.clear()
        self.buckets.update(buckets)
        self.size = sum(len(b) for b in buckets.values())

    def expire(self, cutoff: Time, now: Time) -> int:
        """Drop occurrences that started before ``cutoff`` (at time ``now``); return how many."""
        return self.drop(lambda occ: occ[1] < cutoff, now)

    def drop(self, dead: Callable[[Occurrence], bool], now: Time) -> int:
        """Drop every occurrence for which ``dead(occurrence)`` holds (at time ``now``);
        return how many."""
        dropped = 0
        for key in list(self.buckets):
            bucket = self.buckets[key]
            kept = [o for o in bucket if not dead(o)]
            if len(kept) != len(bucket):
                dropped += len(bucket) - len(kept)
                if kept:
                    self.buckets[key] = kept
                else:
                    del self.buckets[key]
        self.size -= dropped
        return dropped

    def earliest_start(self) -> Time:
        """The earliest start of any stored occurrence (infinity when empty)."""
        return min((o[1] for bucket in self.buckets.values() for o in bucket), default=INF)


class RecentStore(Store):
    """Keeps only the latest occurrence per key (the recent policy)."""

    __slots__ = ("_newer",)

    def __init__(self, tie_break: str = "longer") -> None:
        super().__init__()
        self._newer: Callable[[Occurrence, Occurrence], bool] = (
            _newer_longer if tie_break == "longer" else _newer_shorter
        )

    def add(self, key: Any, occ: Occurrence) -> None:
        bucket = self.buckets.get(key)
        if bucket is None:
            self.buckets[key] = [occ]
            self.size += 1
        elif self._newer(occ, bucket[0]):
            bucket[0] = occ

    def drop(self, dead: Callable[[Occurrence], bool], now: Time) -> int:
        """:meth:`Store.drop`, but an occurrence ending at ``now`` stays: it still decides
        whether a tie arriving at ``now`` is kept."""
        return super().drop(lambda occ: occ[2] < now and dead(occ), now)


def _newer_longer(new: Occurrence, old: Occurrence) -> bool:
    # Same end: the longer interval (earlier start) counts as the more recent one.
    return new[2] > old[2] or (new[2] == old[2] and new[1] <= old[1])


def _newer_shorter(new: Occurrence, old: Occurrence) -> bool:
    return new[2] > old[2] or (new[2] == old[2] and new[1] >= old[1])


def make_store(policy: str, tie_break: str) -> Store:
    """The store a node side uses under ``policy``."""
    return RecentStore(tie_break) if policy == "recent" else Store()
