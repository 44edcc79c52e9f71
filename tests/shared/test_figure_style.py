"""core.figure_style.legible: every text on a chart reaches the projector minimum."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest
from hypothesis import given
from hypothesis import strategies as st
from plotly.subplots import make_subplots

from core.figure_style import MIN_FONT_PX, TITLE_FONT_PX, legible


def _busy_figure(size: int | None) -> go.Figure:
    fig = make_subplots(rows=1, cols=2, subplot_titles=("left", "right"))
    fig.add_trace(go.Heatmap(z=[[1, 2], [3, 4]], text=[["a", "b"], ["c", "d"]],
                             texttemplate="%{text}", textfont={"size": size}), row=1, col=1)
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], name="line"), row=1, col=2)
    fig.update_layout(title="t", font={"size": size}, legend={"orientation": "h", "y": -0.3})
    fig.update_xaxes(title="x", tickfont={"size": size}, title_font={"size": size})
    return fig


def _sizes(fig: go.Figure) -> list[float]:
    layout = fig.layout
    sizes = [layout.font.size, layout.legend.font.size, layout.hoverlabel.font.size]
    sizes += [a.font.size for a in layout.annotations]
    for name in [n for n in layout if n.startswith(("xaxis", "yaxis"))]:
        sizes += [layout[name].tickfont.size, layout[name].title.font.size]
    sizes += [t.textfont.size for t in fig.data if "textfont" in t]
    return sizes


@given(st.one_of(st.none(), st.integers(1, 40)))
def test_every_text_reaches_the_minimum(size):
    fig = legible(_busy_figure(size))
    assert all(s >= MIN_FONT_PX for s in _sizes(fig)), _sizes(fig)
    assert fig.layout.title.font.size >= TITLE_FONT_PX
    if size is not None and size > MIN_FONT_PX:  # larger sizes are kept
        assert fig.layout.font.size == size


def test_legend_below_the_plot_moves_above_it():
    fig = legible(_busy_figure(10))
    assert fig.layout.legend.y > 1 and fig.layout.legend.yanchor == "bottom"


def test_per_point_text_sizes():
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1], mode="text", text=["a", "b"],
                               textfont={"size": [8, 20]}))
    assert list(legible(fig).data[0].textfont.size) == [MIN_FONT_PX, 20]


def test_exception():
    with pytest.raises(ValueError, match="min_px"):
        legible(go.Figure(), min_px=0)


@given(
    st.integers(1, 40),
    st.integers(1, 40),
    st.sampled_from([(), (1,), (3,)]),
    st.integers(0, 2**32 - 1),
)
def test_png_data_uri_is_lossless(h, w, channels, seed):
    import numpy as np

    from core.figure_style import decode_data_uri, png_data_uri

    pixels = np.random.default_rng(seed).integers(0, 256, (h, w, *channels), dtype=np.uint8)
    uri = png_data_uri(pixels)
    assert uri.startswith("data:image/png;base64,")
    back = decode_data_uri(uri)
    expected = pixels[..., 0] if channels == (1,) else pixels
    assert back.shape == expected.shape and (back == expected).all()


def test_png_data_uri_names_the_bad_array():
    import numpy as np

    from core.figure_style import decode_data_uri, png_data_uri

    with pytest.raises(ValueError, match="float32"):
        png_data_uri(np.zeros((4, 4, 3), np.float32))
    with pytest.raises(ValueError, match=r"\(4, 4, 2\)"):
        png_data_uri(np.zeros((4, 4, 2), np.uint8))
    with pytest.raises(ValueError, match="not a PNG data URI"):
        decode_data_uri("data:text/html,hi")
