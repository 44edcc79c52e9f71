"""A link cannot start heavy work: a view above ui.heavy's budget opens with a button that
states its expected time, runs only after the click, and is computed once for everyone."""

from __future__ import annotations

import threading

import pytest

import lessons.batchnorm.layer as core_bn
import lessons.warp.affine as core_warp
from lessons.warp.cost import estimate_warp_seconds, preview_dsize
from lessons.warp.validation import MAX_OUTPUT_SIDE
from tests.app.conftest import open_cold
from ui import heavy

WARP_LINK = {"warp.size_mode": "Custom", "warp.out_w": "4096", "warp.out_h": "4096",
             "warp.notes": "true", "warp.mode": "bicubic"}


@pytest.fixture
def warp_sizes(monkeypatch) -> list[tuple[int, int]]:
    """Every output size lessons.warp.affine.compare_warps is asked for, in order."""
    sizes: list[tuple[int, int]] = []
    real = core_warp.compare_warps

    def counting(img, M, dsize, **kwargs):
        sizes.append(tuple(int(v) for v in dsize))
        return real(img, M, dsize, **kwargs)

    monkeypatch.setattr(core_warp, "compare_warps", counting)
    return sizes


def _texts(elements) -> str:
    return " ".join(e.value for e in elements)


def test_the_4096_warp_link_is_refused_by_the_cap_without_warping(warp_sizes):
    at = open_cold("warp", WARP_LINK)
    assert not at.exception, at.exception
    assert warp_sizes == []
    assert f"cap of {MAX_OUTPUT_SIDE}" in _texts(at.error)
    assert MAX_OUTPUT_SIDE <= 2048


def test_a_warp_link_above_the_budget_waits_for_a_click_that_states_its_time(warp_sizes):
    side = MAX_OUTPUT_SIDE
    at = open_cold("warp", {**WARP_LINK, "warp.out_w": str(side), "warp.out_h": str(side)})
    assert not at.exception, at.exception
    # only its top-left corner, within the budget, is warped meanwhile
    corner = preview_dsize((side, side), "bicubic", notes=True,
                                     seconds=heavy.budget_s())
    assert corner[0] < side and set(warp_sizes) == {corner}
    assert f"top-left {corner[0]}×{corner[1]} of the {side}×{side} output" in _texts(at.caption)
    seconds = estimate_warp_seconds(side, side, "bicubic", notes=True)
    assert seconds > heavy.budget_s()
    button = at.button(key="warp.large.run")
    assert button.label == f"Run the {side}×{side} warp (about {seconds:.0f} s)"
    assert f"about {seconds:.0f} s" in _texts(at.warning)


def test_the_click_runs_the_warp_it_names(monkeypatch, warp_sizes):
    monkeypatch.setenv("TP_HEAVY_BUDGET_S", "0.5")  # a small output is over this budget
    size = (600, 400)
    assert estimate_warp_seconds(*size, "bicubic", notes=True) > 0.5
    at = open_cold("warp", {**WARP_LINK, "warp.out_w": str(size[0]),
                            "warp.out_h": str(size[1])})
    assert not at.exception, at.exception
    assert size not in warp_sizes  # its corner only
    warp_sizes.clear()
    at.button(key="warp.large.run").click().run()
    assert not at.exception, at.exception
    assert warp_sizes and set(warp_sizes) == {size}  # the notes' warp and the correct one
    assert "warp.large.run" not in [b.key for b in at.button]
    # another size is another click
    warp_sizes.clear()
    at.number_input(key="warp.out_w").set_value(601).run()
    assert (601, 400) not in warp_sizes
    assert at.button(key="warp.large.run")


# ------------------------------------------------------------------------------------------
# BatchNorm: two sessions asking for the same long run compute it once
# ------------------------------------------------------------------------------------------
LONG_RUN = {"batchnorm.batch_size": "64", "batchnorm.spatial": "16", "batchnorm.steps": "100"}
LONG_STEPS = 100


def test_two_sessions_clicking_the_same_long_batchnorm_run_compute_it_once(monkeypatch):
    heavy._once.clear()
    calls: list[int] = []
    second_arrived = threading.Event()
    real = core_bn.simulate

    def counting(stream, steps, *args, **kwargs):
        if steps == LONG_STEPS:
            calls.append(steps)
            if len(calls) == 1:  # hold the first run until the second session asks too
                for _ in range(400):
                    if len(calls) > 1 or heavy._once.waiting(_key()) or second_arrived.wait(0):
                        break
                    threading.Event().wait(0.05)
        return real(stream, steps, *args, **kwargs)

    def _key():
        return next(iter(heavy._once._running), None)

    monkeypatch.setattr(core_bn, "simulate", counting)
    sessions = [open_cold("batchnorm", LONG_RUN) for _ in range(2)]
    for at in sessions:
        assert not at.exception, at.exception
        assert at.button(key="batchnorm.long_run.run")  # each session is gated on its own
    assert calls == []
    errors: list[BaseException] = []

    def click(at) -> None:
        try:
            at.button(key="batchnorm.long_run.run").click().run(timeout=120)
        except BaseException as error:  # reported by the test below
            errors.append(error)

    first = threading.Thread(target=click, args=(sessions[0],))
    first.start()
    for _ in range(400):  # the first session is computing
        if calls:
            break
        threading.Event().wait(0.05)
    assert calls, "the first session never started the long run"
    second = threading.Thread(target=click, args=(sessions[1],))
    second.start()
    second.join(180)
    second_arrived.set()
    first.join(180)
    assert not errors, errors
    assert calls == [LONG_STEPS], "the same long run was computed once per session"
    for at in sessions:
        assert not at.exception, at.exception
        assert "batchnorm.long_run.run" not in [b.key for b in at.button]


def test_a_long_batchnorm_run_gone_from_the_cache_is_replayed_as_a_heavy_job(monkeypatch):
    """Whether a long run is cached is asked of the cache: once it is gone (16 newer runs, an
    hour), the next visitor replays it as one of the heavy jobs, with its progress bar."""
    import contextlib

    import streamlit as st

    steps = 7
    monkeypatch.setenv("TP_HEAVY_BUDGET_S", "2")
    real_estimate, real_simulate, real_job = (
        core_bn.estimate_simulate_seconds, core_bn.simulate, heavy.heavy_job)

    def estimate(config, n, *args, **kwargs):  # a long run (progress bar), within the budget
        return 1.5 if n == steps else real_estimate(config, n, *args, **kwargs)

    runs: list[int] = []
    jobs: list[str] = []

    def simulate(stream, n, *args, **kwargs):
        if n == steps:
            runs.append(n)
        return real_simulate(stream, n, *args, **kwargs)

    @contextlib.contextmanager
    def heavy_job(label: str = ""):
        jobs.append(label)
        with real_job(label):
            yield

    monkeypatch.setattr(core_bn, "estimate_simulate_seconds", estimate)
    monkeypatch.setattr(core_bn, "simulate", simulate)
    monkeypatch.setattr(heavy, "heavy_job", heavy_job)
    st.cache_data.clear()
    heavy._once.clear()
    link = {"batchnorm.steps": str(steps)}
    first = open_cold("batchnorm", link)
    assert not first.exception, first.exception
    assert runs == [steps] and len(jobs) == 1

    second = open_cold("batchnorm", link)  # in the cache: neither replayed nor queued
    assert not second.exception, second.exception
    assert runs == [steps] and len(jobs) == 1

    st.cache_data.clear()  # the run leaves the cache
    heavy._once.clear()  # and compute_once's short memory of it
    third = open_cold("batchnorm", link)
    assert not third.exception, third.exception
    assert runs == [steps, steps]
    assert len(jobs) == 2, "the replay ran outside the heavy-job queue"
