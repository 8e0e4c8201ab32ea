"""Event input and output shared by every connector: JSON lines, rejects, times, merging."""

from connectors.events.jsonl import JsonLinesWriter, read_jsonl
from connectors.events.merge import merge_streams
from connectors.events.rejects import InputFormatError, Rejected, RejectHandler, log_rejected
from connectors.events.times import TimeStyle, epoch_to_iso, iso_to_epoch, parse_time

__all__ = [
    "InputFormatError",
    "JsonLinesWriter",
    "RejectHandler",
    "Rejected",
    "TimeStyle",
    "epoch_to_iso",
    "iso_to_epoch",
    "log_rejected",
    "merge_streams",
    "parse_time",
    "read_jsonl",
]
