"""The live chart's fast path: built without plotly's validation and marked legible, it must be
the figure that validation and core.figure_style.legible would make from the same spec."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.figure_style import MIN_FONT_PX, legible
from lessons.memory.allocator_sim import GiB, MiB
from lessons.memory.figures import LiveSeries, live_chart_of, live_chart_spec

sizes = st.integers(min_value=0, max_value=80 * GiB)


@st.composite
def one_series(draw) -> LiveSeries:
    n = draw(st.integers(min_value=0, max_value=40))
    times = tuple(sorted(draw(st.lists(st.floats(-600, 0), min_size=n, max_size=n))))
    allocated = tuple(draw(st.lists(sizes, min_size=n, max_size=n)))
    reserved = tuple(draw(st.lists(sizes, min_size=n, max_size=n)))
    total = draw(st.none() | st.integers(min_value=MiB, max_value=80 * GiB))
    outside = draw(st.none() | st.integers(min_value=-MiB, max_value=4 * GiB))
    return LiveSeries("cuda:0 (simulated)", times, allocated, reserved, total, outside)


def _json(fig: go.Figure) -> dict:
    """The figure as the browser gets it (key order aside)."""
    return json.loads(pio.to_json(fig, validate=False, engine="json"))


@settings(max_examples=40, deadline=None)
@given(one_series())
def test_the_fast_live_chart_is_the_validated_legible_one(series):
    fast = live_chart_of([series])
    checked = legible(go.Figure(live_chart_spec(series)))  # raises on an invalid property
    assert _json(fast) == _json(checked)


def test_the_fast_live_chart_has_legible_text_and_legible_leaves_it_alone():
    series = LiveSeries("cuda:0", (-2.0, -1.0, 0.0), (MiB, 2 * MiB, MiB), (2 * MiB,) * 3,
                        8 * GiB, 300 * MiB)  # fmt: skip
    fig = live_chart_of([series])
    before = _json(fig)
    assert legible(fig) is fig and _json(fig) == before
    layout = fig.layout
    assert layout.font.size >= MIN_FONT_PX and layout.legend.font.size >= MIN_FONT_PX
    assert layout.xaxis.tickfont.size >= MIN_FONT_PX
    assert all(a.font.size >= MIN_FONT_PX for a in layout.annotations)


@pytest.mark.parametrize("devices", [0, 2])
def test_no_device_or_several_still_draw(devices):
    rows = [LiveSeries(f"cuda:{i}", (0.0,), (MiB,), (MiB,), GiB, None) for i in range(devices)]
    fig = legible(live_chart_of(rows))
    assert len(fig.data) >= 2


def test_figures_in_words_carry_their_numbers():
    from lessons.memory.backends import SimulatedGpu
    from lessons.memory.figures import (
        FragmentationBars,
        fragmentation_alt,
        live_chart_alt,
        segment_map_alt,
        segment_map_caption,
    )

    bars = FragmentationBars(4 * MiB, 20 * MiB, 16 * MiB, 4 * MiB)
    assert fragmentation_alt(bars) == (
        "Bars: allocated 4.00 MiB, reserved but unallocated 20.00 MiB, inactive split "
        "16.00 MiB, largest free block 4.00 MiB."
    )
    assert segment_map_alt(3).startswith("Segment map: 3 segment(s)")
    assert "simulator's snapshot()" in segment_map_caption(2, simulated=True)
    assert "torch.cuda.memory_snapshot()" in segment_map_caption(2, simulated=False)
    alt = live_chart_alt(SimulatedGpu(8).state(), 120)
    assert alt.startswith("Live memory of simulated GPU (8 GB): allocated 0 bytes")
    assert alt.args["device"].template == "simulated GPU ({total_gb} GB)"  # translated as a T
