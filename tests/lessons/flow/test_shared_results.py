"""Tests for lessons.flow.shared_results: each key computed once for every session, kept for its
time to live, the oldest dropped first."""

from __future__ import annotations

import threading
import time

import pytest

from lessons.flow.shared_results import SharedResults


def test_smoke_computes_once_and_stamps_the_time():
    store, calls = SharedResults(max_entries=4, ttl_s=60), []
    before = time.time()
    value, stamp = store.get_or_compute(("a",), lambda: calls.append(1) or "A")
    again = store.get_or_compute(("a",), lambda: calls.append(1) or "B")
    assert value == "A" and again == ("A", stamp) and calls == [1]
    assert before <= stamp <= time.time() and store.ready(("a",)) and not store.ready(("b",))


def test_concurrent_askers_share_one_computation():
    store, calls, started = SharedResults(max_entries=4, ttl_s=60), [], threading.Event()

    def slow() -> str:
        calls.append(1)
        started.set()
        time.sleep(0.2)
        return "done"

    results = []
    first = threading.Thread(target=lambda: results.append(store.get_or_compute(("k",), slow)))
    first.start()
    started.wait(5)
    results.append(store.get_or_compute(("k",), slow))  # waits for the first one
    first.join(5)
    assert calls == [1] and results[0] == results[1]


def test_oldest_entry_dropped_and_expired_entries_computed_again():
    store = SharedResults(max_entries=2, ttl_s=60)
    for key in ("a", "b", "c"):
        store.get_or_compute((key,), lambda key=key: key)
    assert not store.ready(("a",)) and store.ready(("b",)) and store.ready(("c",))
    short = SharedResults(max_entries=2, ttl_s=0.05)
    short.get_or_compute(("a",), lambda: 1)
    time.sleep(0.1)
    assert not short.ready(("a",)) and short.get_or_compute(("a",), lambda: 2)[0] == 2


def test_exception():
    with pytest.raises(ValueError, match="max_entries must be at least 1, got 0"):
        SharedResults(max_entries=0, ttl_s=60)
    with pytest.raises(ValueError, match="ttl_s must be a positive number of seconds, got -1"):
        SharedResults(max_entries=1, ttl_s=-1)
