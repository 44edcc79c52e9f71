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


def _take_every_turn(leave: threading.Event) -> list[threading.Thread]:
    """SLOTS threads that each hold a turn until ``leave`` is set."""
    holders = []
    for _ in range(turns.SLOTS):
        entered = threading.Event()
        holder = threading.Thread(target=_hold_turn, args=(entered, leave))
        holder.start()
        assert entered.wait(5)
        holders.append(holder)
    return holders


def test_a_script_waits_while_every_turn_is_taken_and_goes_on_when_one_is_given_back():
    leave = threading.Event()
    holders = _take_every_turn(leave)
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


def _all_turns_free_within(seconds: float) -> bool:
    """Whether SLOTS other threads can each take a turn within ``seconds`` (then give it back)."""
    started = time.perf_counter()
    leave = threading.Event()
    holders = []
    for _ in range(turns.SLOTS):
        entered = threading.Event()
        holder = threading.Thread(target=_hold_turn, args=(entered, leave))
        holder.start()
        holders.append((holder, entered))
    ok = all(entered.wait(seconds) for _, entered in holders)
    leave.set()
    for holder, _ in holders:
        holder.join(15)
    return ok and time.perf_counter() - started < seconds


def test_taking_a_turn_twice_in_one_run_takes_one_turn():
    with turns.turn_released():
        turns.take_turn()
        turns.take_turn()
        assert turns.holds_turn()
    assert not turns.holds_turn()
    assert _all_turns_free_within(1.0)


def test_a_turn_is_given_back_when_the_script_raises():
    with pytest.raises(RuntimeError), turns.turn_released():
        turns.take_turn()
        raise RuntimeError("the page failed")
    assert not turns.holds_turn()
    assert _all_turns_free_within(1.0)


def test_a_turn_lost_by_a_thread_that_ended_does_not_block_others():
    """A script that took a turn but never reached app.py's release (a page function run by
    AppTest.from_function) must not hold it after its thread ends."""
    lost = threading.Thread(target=turns.take_turn)
    lost.start()
    lost.join(5)
    assert _all_turns_free_within(1.0)


def test_a_long_holder_stops_counting_after_the_hold_limit(monkeypatch):
    monkeypatch.setattr(turns, "HOLD_LIMIT_S", 0.3)
    leave = threading.Event()
    long_holders = _take_every_turn(leave)
    try:
        started = time.perf_counter()
        assert _all_turns_free_within(3.0), "a long computation blocked the class"
        assert time.perf_counter() - started >= 0.25, "went ahead before the hold limit"
    finally:
        leave.set()
        for holder in long_holders:
            holder.join(15)


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
