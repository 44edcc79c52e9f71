"""ui.turns: at most SLOTS scripts compute at once; a turn is given back however a script ends."""

from __future__ import annotations

import threading
import time

import pytest

from ui import turns


def _hold_turn(entered: threading.Event, leave: threading.Event) -> None:
    with turns.turn_released():
        turns.take_turn()
        entered.set()
        leave.wait(10)


def test_a_script_waits_while_every_turn_is_taken_and_goes_on_when_one_is_given_back():
    leave = threading.Event()
    holders = []
    for _ in range(turns.SLOTS):
        entered = threading.Event()
        holder = threading.Thread(target=_hold_turn, args=(entered, leave))
        holder.start()
        assert entered.wait(5)
        holders.append(holder)
    late_entered = threading.Event()
    late = threading.Thread(target=_hold_turn, args=(late_entered, threading.Event()))
    late.start()
    try:
        assert not late_entered.wait(0.5), "a script computed while every turn was taken"
    finally:
        leave.set()
    assert late_entered.wait(5), "a freed turn was not given to the waiting script"
    for thread in [*holders, late]:
        thread.join(15)
    assert not turns.holds_turn()


def test_taking_a_turn_twice_in_one_run_takes_one_turn():
    with turns.turn_released():
        turns.take_turn()
        turns.take_turn()
        assert turns.holds_turn()
    assert not turns.holds_turn()
    # Every turn is free again: SLOTS more can be taken without blocking.
    for _ in range(turns.SLOTS):
        assert turns._turns.acquire(timeout=1)
    for _ in range(turns.SLOTS):
        turns._turns.release()


def test_a_turn_is_given_back_when_the_script_raises():
    with pytest.raises(RuntimeError), turns.turn_released():
        turns.take_turn()
        raise RuntimeError("the page failed")
    assert not turns.holds_turn()
    started = time.perf_counter()
    for _ in range(turns.SLOTS):
        assert turns._turns.acquire(timeout=1)
    for _ in range(turns.SLOTS):
        turns._turns.release()
    assert time.perf_counter() - started < 2


def test_releasing_without_a_turn_is_harmless():
    turns.release_turn()
    with turns.turn_released():
        pass
    assert not turns.holds_turn()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(None, turns.DEFAULT_SLOTS), ("3", 3), ("0", turns.DEFAULT_SLOTS),
     ("-2", turns.DEFAULT_SLOTS), ("many", turns.DEFAULT_SLOTS)],
)  # fmt: skip
def test_slots_come_from_the_environment_when_valid(raw, expected):
    assert turns._slots_from_env(raw) == expected
