"""lessons.saliency.shared_runs: announced times fall back by kind until one is measured, and a
map's estimate and its placeholder's use them."""

from __future__ import annotations

import torch

from lessons.saliency import maps
from lessons.saliency import shared_runs as SR
from lessons.saliency.maps import MapChoice, SaliencyResult


def test_announced_times_fall_back_by_kind_until_measured():
    runs = SR.SharedRuns()
    assert SR.announced_per_image_ms(runs, "m", "vanilla") == SR.FALLBACK_PER_IMAGE_MS
    assert SR.announced_per_image_ms(runs, "m", "smoothgrad") == SR.FALLBACK_BATCHED_PER_IMAGE_MS
    assert SR.one_pass_ms(runs, "m", otherwise=12.0) == 12.0
    SR.record_per_image_ms(runs, "m", "smoothgrad", 33.0)
    assert SR.announced_per_image_ms(runs, "m", "integrated_gradients") == 33.0  # batched too
    assert SR.announced_per_image_ms(runs, "m", "vanilla") == SR.FALLBACK_PER_IMAGE_MS
    SR.record_per_image_ms(runs, "m", "vanilla", 150.0)
    assert SR.one_pass_ms(runs, "m", otherwise=12.0) == 150.0
    assert SR.announced_per_image_ms(runs, "other model", "vanilla") == SR.FALLBACK_PER_IMAGE_MS


def _result(method: str, images: int) -> SaliencyResult:
    return SaliencyResult(method, "logit", "sum", 1, torch.zeros(2, 2), torch.zeros(3),
                          forward_ms=30.0, backward_ms=90.0, images=images)  # fmt: skip


def test_a_run_records_its_time_per_image_for_its_kind():
    runs = SR.SharedRuns()
    SR.record_run(runs, "m", _result("smoothgrad", 4))
    assert SR.announced_per_image_ms(runs, "m", "integrated_gradients") == 30.0  # (30 + 90) / 4
    SR.record_run(runs, "m", _result("vanilla", 0))  # no image: says nothing
    assert SR.one_pass_ms(runs, "m", otherwise=7.0) == 7.0


def test_estimates_of_a_map_and_of_its_placeholder():
    runs = SR.SharedRuns()
    choice = MapChoice(285, "app", "smoothgrad", "logit", "sum", 12, 0.15, 32, "black", 99.0,
                       0.5, "jet", 0)  # fmt: skip
    per_image_ms, estimate, vanilla = SR.estimates(runs, "m", choice)
    assert per_image_ms == SR.FALLBACK_BATCHED_PER_IMAGE_MS
    assert estimate == maps.estimate_run("smoothgrad", n=12, steps=32, per_image_ms=per_image_ms)
    assert vanilla == maps.estimate_run("vanilla", per_image_ms=per_image_ms)  # none measured
    SR.record_per_image_ms(runs, "m", "vanilla", 150.0)
    assert SR.estimates(runs, "m", choice)[2] == maps.estimate_run("vanilla", per_image_ms=150.0)
