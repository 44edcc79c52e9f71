"""lessons.saliency.shared_runs: a probe never waits for or starts a computation; announced times
fall back by kind until one is measured."""

from __future__ import annotations

import pytest

from lessons.saliency import shared_runs as SR


def test_held_asks_the_cache_and_never_computes():
    runs = SR.SharedRuns()
    assert SR.held(runs, ("map",), lambda: "the cached map") == "the cached map"

    def miss() -> str:
        raise SR.NotInSharedCache

    assert SR.held(runs, ("map",), miss) is None


def test_held_skips_a_key_being_computed():
    runs, asked = SR.SharedRuns(), []
    with SR.computing(runs, ("map",)), SR.computing(runs, ("map",)):
        assert SR.held(runs, ("map",), lambda: asked.append(1)) is None
        assert runs.computing == {("map",): 2}
    assert asked == [] and runs.computing == {}
    assert SR.held(runs, ("other",), lambda: "asked") == "asked"


def test_computing_is_cleared_when_the_computation_fails():
    runs = SR.SharedRuns()
    with pytest.raises(ValueError), SR.computing(runs, ("map",)):
        raise ValueError("the model failed")
    assert runs.computing == {}


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
