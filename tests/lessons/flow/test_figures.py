"""Tests for lessons.flow.figures: the page's pictures are built from the results, on one colour
scale, thinned for the browser, and their titles go through the translation they are given."""

from __future__ import annotations

import numpy as np
import pytest

from core.figure_style import decode_data_uri
from lessons.flow import figures
from lessons.flow.fill import METHOD_CV2, OTHER_METHODS, FlowSpec, build_flow, run_method
from lessons.flow.gradual_mean import scale_means, window_sizes


@pytest.fixture(scope="module")
def case_and_main():
    case = build_flow(FlowSpec(height=40, width=56, field="shear", mask="blobs", hole_size=5))
    return case, run_method(case, METHOD_CV2, max_window=9)


def _shouting(message: str) -> str:
    return message.upper()


def test_smoke_every_builder(case_and_main):
    case, main = case_and_main
    hist = figures.scales_histogram(case, main.fill, 3)
    built = [
        figures.case_figure(case, main), figures.reference_figure(case, main),
        figures.scales_map_figure(case, main.fill, 9), figures.scales_hist_figure(hist),
        figures.epe_figure(case, main), figures.timing_figure(((METHOD_CV2, 1.5),)),
        figures.scale_figure(figures.per_scale_rgbs(case, main.filled, 9)[0], 3),
    ]
    assert [len(fig.data) for fig in built] == [4, 1, 1, 1, 1, 1, 1]


def test_case_figure_panels_are_the_flow_the_mask_the_fill_and_the_reference(case_and_main):
    case, main = case_and_main
    fig = figures.case_figure(case, main, _shouting)
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["FLOW WITH HOLES (BLACK)", "HOLES (DARK)", "FILLED: GRADUAL MEAN",
                      "GROUND TRUTH"]
    mask = decode_data_uri(fig.data[1].source)
    assert mask.shape == (40, 56, 3)
    assert (mask[case.mask] == figures.MASK_HOLE_RGB).all()
    assert (mask[~case.mask] == figures.MASK_VALID_RGB).all()
    # holes are black in the flow with holes, and filled in the fill
    assert (decode_data_uri(fig.data[0].source)[case.mask] == 0).all()
    assert (decode_data_uri(fig.data[2].source)[case.mask].sum(axis=1) > 0).all()


def test_reference_titles():
    assert figures.reference_title("ground truth") == "Ground truth"
    assert figures.reference_title("pre-mask flow", _shouting) == "PRE-MASK FLOW"
    assert figures.reference_title("none") == "None"


def test_panels_and_heat_maps_are_thinned_for_the_browser():
    big = np.zeros((720, 1280, 3), np.uint8)
    assert figures.panel_step(big) == 4 and figures.panel(big).shape == (180, 320, 3)
    assert figures.panel_step(np.zeros((240, 320, 3), np.uint8)) == 1
    assert figures.heat_step((720, 1280)) == 2 and figures.heat_step((480, 640)) == 1
    fig = figures.heat_figure(np.ones((720, 1280)), "t", "px")
    assert fig.data[0].z.shape == (360, 640) and fig.data[0].dx == 2
    # the axes still span the full-size pixels
    assert tuple(fig.layout.xaxis.range) == (-0.5, 1279.5)


def test_scales_histogram_counts_every_hole_once(case_and_main):
    case, main = case_and_main
    hist = figures.scales_histogram(case, main.fill, len(window_sizes(9)))
    assert len(hist) == 4 and sum(hist) == int(case.mask.sum())


def test_per_scale_rgbs_show_each_scale_at_the_holes_only(case_and_main):
    case, main = case_and_main
    rgbs = figures.per_scale_rgbs(case, main.filled, 9)
    assert len(rgbs) == 3 and all(rgb.shape == (40, 56, 3) for rgb in rgbs)
    means = scale_means(case.flow, 9)
    for k, rgb in zip(window_sizes(9), rgbs, strict=True):
        assert (rgb[~case.mask] == 0).all()  # valid flow is not shown
        no_sample = case.mask & np.isnan(means[k]).any(axis=2)
        assert (rgb[no_sample] == 0).all()  # black where the window saw nothing valid


def test_timing_figure_names_the_methods_translated():
    times = ((METHOD_CV2, 12.0), (OTHER_METHODS[0], 900.0))
    fig = figures.timing_figure(times, _shouting)
    assert list(fig.data[0].y) == [METHOD_CV2.upper(), OTHER_METHODS[0].upper()]
    assert fig.layout.xaxis.type == "log"


def test_exception_flow_to_rgb():
    assert figures.flow_to_rgb() == []
    with pytest.raises(ValueError, match=r"\(H, W, 2\).*\(4, 4, 3\)"):
        figures.flow_to_rgb(np.zeros((4, 4, 2)), np.zeros((4, 4, 3)))
