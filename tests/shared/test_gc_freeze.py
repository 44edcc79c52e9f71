"""ui.gc_freeze: freeze after new imports, otherwise a full collection every COLLECT_EVERY runs."""

from __future__ import annotations

import gc
import sys
import types

import pytest

from ui import gc_freeze


@pytest.fixture(autouse=True)
def _unfreeze():
    yield
    gc.unfreeze()
    sys.modules.pop("tp_test_fresh_module", None)


def test_new_modules_are_frozen_once():
    gc_freeze.freeze_after_imports()  # whatever pytest imported so far
    assert not gc_freeze.freeze_after_imports(), "froze again with no new module"
    sys.modules["tp_test_fresh_module"] = types.ModuleType("tp_test_fresh_module")
    assert gc_freeze.freeze_after_imports()
    assert gc.get_freeze_count() > 0


@pytest.fixture
def clock(monkeypatch):
    """A monotonic clock the test moves by hand; collections are recorded, not made."""
    gc_freeze.freeze_after_imports()
    now = [1000.0]
    collections = []
    monkeypatch.setattr(gc_freeze.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(gc_freeze.gc, "collect", lambda *a: collections.append(a) or 0)
    monkeypatch.setattr(gc_freeze, "_runs", 0)
    monkeypatch.setattr(gc_freeze, "_collected_at", 0.0)
    return now, collections


def test_a_full_collection_every_collect_every_runs(clock):
    now, collections = clock
    for _ in range(3 * gc_freeze.COLLECT_EVERY):
        now[0] += gc_freeze.COLLECT_INTERVAL_S  # slow runs: the run count decides
        gc_freeze.after_script_run()
    assert len(collections) == 3


def test_runs_in_a_burst_share_one_collection(clock):
    """A class opening a page at once: 50 runs within a second make one collection, not five."""
    now, collections = clock
    for _ in range(50):
        now[0] += 0.02
        gc_freeze.after_script_run()
    assert len(collections) == 1
    now[0] += gc_freeze.COLLECT_INTERVAL_S
    for _ in range(gc_freeze.COLLECT_EVERY):
        gc_freeze.after_script_run()
    assert len(collections) == 2


def test_garbage_cycles_made_after_the_freeze_are_collected():
    gc_freeze.freeze_after_imports()

    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a
    del a, b
    assert gc.collect() >= 2
