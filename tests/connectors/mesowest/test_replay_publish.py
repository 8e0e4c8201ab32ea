"""``replay(publish=...)``: every batch of detections reaches the callback as it is derived."""

from __future__ import annotations

from typing import Any

from connectors.mesowest.blizzard import SAMPLE
from connectors.mesowest.reader import read_mesowest
from connectors.mesowest.replay import replay

# Gusts of 50 mph or more, then a reading of the same station: needs no knowledge.
RULES = """
gusty(S, T) <- sensor_reading(S, T, _, _, _, Gust, _, _, _) WHERE Gust >= 50.
gustThenReading(S, T1, T2) <- gusty(S, T1) SEQ sensor_reading(S, T2, _, _, _, _, _, _, _).
"""


def test_publish_sees_every_detection_in_order_with_sources() -> None:
    batches: list[list[Any]] = []
    files = [SAMPLE / "KSLC.csv", SAMPLE / "KOGD.csv"]
    result = replay(
        RULES, files, keep={"gusty"}, progress=False, provenance=True, publish=batches.append
    )
    published = [d for batch in batches for d in batch]
    assert all(batches)  # no empty batch is published
    # keep= filters what the replay keeps, never what is published.
    assert [d for d in published if d.name == "gusty"] == result.detections
    names = {d.name for d in published}
    assert names == {"gusty", "gustThenReading"}
    followed = [d for d in published if d.name == "gustThenReading"]
    readings = list(read_mesowest(*files))
    assert len(followed) == sum(  # unrestricted SEQ: each gust with every later reading
        1 for g in result.detections for r in readings if r.args[0] == g.args[0] and r.end > g.end
    )
    for d in followed:
        station, t1, t2 = d.args
        assert [(s.name, s.args[0], s.end) for s in d.sources] == [
            ("sensor_reading", station, t1),
            ("sensor_reading", station, t2),
        ]
