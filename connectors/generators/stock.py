"""The stock-ticker stream of seed 000 §7 (after its "Event Generator 1").

Events ``stock(Id, Price, Volume)`` for two companies, ``"GO"`` and ``"MS"``, chosen uniformly.
Each company's price is a random walk in [1, 1000]: it goes up with probability ``p``, down
or stays the same with probability ``(1 - p) / 2`` each; steps are 1 to 10 units. Volumes are
uniform in [1, 1000]. Event ``i`` happens at time ``i`` (1, 2, 3, ...). Seeded: the same
arguments give the same stream.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from reasoner.runtime.events import Event

COMPANIES = ("GO", "MS")


def stock_stream(count: int, *, seed: int = 0, p: float = 0.5) -> Iterator[Event]:
    """Yield ``count`` stock events.

    Args:
        count: how many events.
        seed: random seed.
        p: probability that a price goes up at its company's next tick.
    Returns:
        An iterator of atomic events at times 1..count.

    >>> [e.args[0] for e in stock_stream(3, seed=1)]
    ['GO', 'MS', 'GO']
    """
    rng = random.Random(seed)
    prices = {c: rng.randint(1, 1000) for c in COMPANIES}
    for time in range(1, count + 1):
        company = COMPANIES[rng.randrange(2)]
        roll = rng.random()
        step = rng.randint(1, 10)
        if roll < p:
            prices[company] = min(1000, prices[company] + step)
        elif roll < p + (1 - p) / 2:
            prices[company] = max(1, prices[company] - step)
        yield Event("stock", (company, prices[company], rng.randint(1, 1000)), time, time)
