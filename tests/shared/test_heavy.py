"""ui.heavy: the click gate, the FIFO queue of heavy jobs, one computation per key."""

from __future__ import annotations

import threading

import pytest
from streamlit.testing.v1 import AppTest

from ui import heavy, turns


# ------------------------------------------------------------------------------------------
# The queue
# ------------------------------------------------------------------------------------------
def _job(queue: heavy.JobQueue, started: threading.Event, leave: threading.Event,
         order: list[str], name: str, seen: list[int] | None = None) -> None:
    def on_wait(ahead: int) -> None:
        if seen is not None:
            seen.append(ahead)

    with queue.slot(on_wait, poll_s=0.02):
        order.append(name)
        started.set()
        leave.wait(10)


def test_queue_runs_one_job_at_a_time_in_arrival_order_and_tells_each_its_place():
    queue = heavy.JobQueue(1)
    order: list[str] = []
    names = ["a", "b", "c"]
    started = {n: threading.Event() for n in names}
    leave = {n: threading.Event() for n in names}
    seen = {n: [] for n in names}
    threads = {}
    for n in names:
        threads[n] = threading.Thread(target=_job, args=(queue, started[n], leave[n], order, n,
                                                         seen[n]))
        threads[n].start()
        if n == "a":
            assert started["a"].wait(5)
        else:  # wait until this job is queued before the next arrives
            for _ in range(500):
                if seen[n]:
                    break
                threading.Event().wait(0.01)
    assert not started["b"].is_set() and not started["c"].is_set()
    assert seen["b"][-1] == 1 and seen["c"][-1] == 2
    assert queue.waiting == 2
    leave["a"].set()
    assert started["b"].wait(5)
    assert not started["c"].wait(0.2)
    for _ in range(500):  # c's place is redrawn: one job ahead now
        if seen["c"][-1] == 1:
            break
        threading.Event().wait(0.01)
    assert seen["c"][-1] == 1
    leave["b"].set()
    assert started["c"].wait(5)
    leave["c"].set()
    for t in threads.values():
        t.join(5)
    assert order == ["a", "b", "c"]
    assert queue.waiting == 0


def test_a_job_that_raises_while_waiting_gives_its_place_back():
    queue = heavy.JobQueue(1)
    leave, started = threading.Event(), threading.Event()
    holder = threading.Thread(target=_job, args=(queue, started, leave, [], "a"))
    holder.start()
    assert started.wait(5)

    def stop(_ahead: int) -> None:
        raise RuntimeError("the student reran the page")

    with pytest.raises(RuntimeError), queue.slot(stop, poll_s=0.02):
        pass
    leave.set()
    holder.join(5)
    with queue.slot(poll_s=0.02):  # nobody holds a place: runs at once
        assert queue.ahead(2) == 0  # tickets 0 and 1 are gone


def test_queue_refuses_zero_slots():
    with pytest.raises(ValueError, match="slots"):
        heavy.JobQueue(0)


def test_heavy_job_gives_back_the_scripts_turn():
    done = threading.Event()

    def script() -> None:
        turns.take_turn()
        with heavy.heavy_job():
            assert not turns.holds_turn()
        done.set()

    t = threading.Thread(target=script)
    t.start()
    t.join(10)
    assert done.is_set()


# ------------------------------------------------------------------------------------------
# One computation per key
# ------------------------------------------------------------------------------------------
def test_two_callers_of_the_same_key_compute_once_and_both_get_the_result():
    once = heavy.ComputeOnce()
    calls: list[int] = []
    entered, release = threading.Event(), threading.Event()
    waited = threading.Event()
    results: dict[str, object] = {}

    def slow() -> str:
        calls.append(1)
        entered.set()
        release.wait(10)
        return "history"

    first = threading.Thread(target=lambda: results.update(first=once("k", slow)))
    first.start()
    assert entered.wait(5)
    second = threading.Thread(target=lambda: results.update(
        second=once("k", slow, on_wait=waited.set)))
    second.start()
    assert waited.wait(5)
    release.set()
    first.join(5)
    second.join(5)
    assert calls == [1]
    assert results == {"first": "history", "second": "history"}
    assert once("k", slow) == "history" and calls == [1]  # kept for late callers (ttl)
    assert once("other", lambda: "x") == "x"


def test_when_the_first_caller_fails_a_waiting_caller_computes_instead():
    once = heavy.ComputeOnce()
    entered, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def failing() -> str:
        entered.set()
        release.wait(10)
        raise RuntimeError("stopped")

    def run_first() -> None:
        try:
            once("k", failing)
        except RuntimeError as error:
            errors.append(error)

    first = threading.Thread(target=run_first)
    first.start()
    assert entered.wait(5)
    got: list[str] = []
    second = threading.Thread(target=lambda: got.append(once("k", lambda: "mine")))
    second.start()
    release.set()
    first.join(5)
    second.join(5)
    assert len(errors) == 1 and got == ["mine"]


def test_finished_results_expire_and_are_bounded():
    once = heavy.ComputeOnce(ttl_s=0.0, max_entries=2)
    calls: list[int] = []
    once("k", lambda: calls.append(1))
    threading.Event().wait(0.01)
    once("k", lambda: calls.append(1))
    assert len(calls) == 2  # expired: computed again
    bounded = heavy.ComputeOnce(max_entries=2)
    for k in range(5):
        bounded(k, lambda k=k: k)
    assert len(bounded._done) == 2


def test_budget_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("TP_HEAVY_BUDGET_S", "0.5")
    assert heavy.budget_s() == 0.5
    for bad in ("-1", "zero", "0"):
        monkeypatch.setenv("TP_HEAVY_BUDGET_S", bad)
        assert heavy.budget_s() == heavy.DEFAULT_BUDGET_S


# ------------------------------------------------------------------------------------------
# The click
# ------------------------------------------------------------------------------------------
def _gate_script() -> None:
    import streamlit as st

    from ui.heavy import heavy_gate

    seconds = float(st.query_params.get("seconds", "0.5"))
    size = int(st.query_params.get("size", "1"))
    if heavy_gate("demo.big", seconds, ("size", size), what="the big demo"):
        st.session_state["ran"] = st.session_state.get("ran", 0) + 1
        st.text(f"ran {size}")
    else:
        st.text("cheap view")


def _gate(params: dict[str, str]) -> AppTest:
    at = AppTest.from_function(_gate_script, default_timeout=30)
    at.query_params.update(params)
    return at.run()


def test_cheap_work_runs_without_a_click():
    at = _gate({"seconds": "0.5"})
    assert not at.exception
    assert at.text[0].value == "ran 1" and not at.button


def test_heavy_work_waits_for_a_click_that_states_the_time_and_runs_after_it():
    at = _gate({"seconds": "12", "size": "7"})
    assert not at.exception
    assert at.text[0].value == "cheap view"
    assert "ran" not in at.session_state
    button = at.button(key="demo.big.run")
    assert button.label == "Run the big demo (about 12 s)"
    assert "about 12 s" in at.warning[0].value
    button.click().run()
    assert at.text[0].value == "ran 7"
    assert not at.button
    at.run()  # the click stays valid for these settings
    assert at.text[0].value == "ran 7"


def test_a_click_for_one_setting_does_not_unlock_another():
    at = _gate({"seconds": "12", "size": "7"})
    at.button(key="demo.big.run").click().run()
    assert at.text[0].value == "ran 7"
    at.query_params["size"] = "8"
    at.run()
    assert at.text[0].value == "cheap view"
    assert at.button(key="demo.big.run")


def test_the_budget_is_read_from_the_environment_at_each_run(monkeypatch):
    monkeypatch.setenv("TP_HEAVY_BUDGET_S", "20")
    assert _gate({"seconds": "12"}).text[0].value == "ran 1"
