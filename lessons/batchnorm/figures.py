"""Plotly figures and the table of the BatchNorm page: the running statistics over the steps,
train() vs eval() on one batch, and which cells the four normalizations pool.

Pure plotly/numpy (no Streamlit). Every builder takes ``translate``, a function that turns a
catalog message into the session's language (a page passes ``ui.i18n.translator()``); the
default leaves the English.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.text import N_, T
from lessons.batchnorm.layer import History
from lessons.batchnorm.modes import ModeComparison
from lessons.batchnorm.norms import NORM_NAMES, NormResult, norm_group_ids
from lessons.batchnorm.real_modules import Anatomy

#: A function that translates a catalog message (a page passes ``ui.i18n.translator()``).
Translate = Callable[[str], str]

GREY, GREEN, RED, BLUE, ORANGE = "#6b6b6b", "#2ca02c", "#d62728", "#1f77b4", "#ff7f0e"
NORM_COLORS = "Turbo"
HISTOGRAM_BINS = 40  # bins of the train()/eval() histogram, shared by both


def _english(message: str) -> str:
    return message


def _translated(text: str, translate: Translate) -> str:
    """A core text in ``translate``'s language: a :class:`core.text.T` as its template, then
    filled with its values; a plain marked string as it is."""
    if isinstance(text, T) and text.args:
        return translate(text.template).format(**text.args)
    return translate(str(text)) if text else ""


def running_chart(history: History, channel: int,
                  translate: Translate = _english) -> go.Figure:
    """Batch, true and running mean (left) and variance (right) of ``channel`` over the steps
    of ``history``: grey dots are each batch's statistic, the green dashes the stream's true
    value and the red line the buffers (absent when statistics are not tracked)."""
    steps = history.steps
    if not 0 <= channel < history.true_mean.shape[1]:
        raise ValueError(f"channel must be in [0, {history.true_mean.shape[1] - 1}], got "
                         f"{channel}")
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12)
    step_axis = list(range(1, steps + 1))  # plain lists: the browser sees the numbers as such
    for col, (batch_vals, running, true_vals, name) in enumerate((
        (history.batch_mean, history.running_mean, history.true_mean,
         N_("mean, channel {channel}")),
        (history.batch_var_unbiased, history.running_var, history.true_var,
         N_("variance, channel {channel}")),
    ), start=1):
        first = col == 1
        fig.add_trace(go.Scatter(x=step_axis, y=batch_vals[:, channel].tolist(),
                                 mode="markers", marker={"size": 5, "color": GREY},
                                 name=translate(N_("batch statistic")),
                                 legendgroup="batch", showlegend=first), row=1, col=col)
        fig.add_trace(go.Scatter(x=step_axis, y=true_vals[:, channel].tolist(), mode="lines",
                                 line={"dash": "dash", "color": GREEN, "width": 2},
                                 name=translate(N_("true value")), legendgroup="true",
                                 showlegend=first), row=1, col=col)
        if running is not None:
            fig.add_trace(go.Scatter(x=list(range(steps + 1)), y=running[:, channel].tolist(),
                                     mode="lines+markers" if steps == 0 else "lines",
                                     line={"width": 3, "color": RED},
                                     name="running_mean/var", legendgroup="running",
                                     showlegend=first), row=1, col=col)
        if history.shift_step is not None and history.shift_step < steps:
            fig.add_vline(x=history.shift_step + 0.5, line_dash="dot", line_color=ORANGE,
                          annotation_text=translate(N_("shift")),
                          annotation_position="bottom right", row=1, col=col)
        fig.update_yaxes(title_text=translate(name).format(channel=channel), row=1, col=col)
    fig.update_xaxes(title_text=translate(N_("training step")),
                     range=[0, steps + 1] if steps < 10 else None)
    fig.update_layout(height=400, margin={"t": 40, "b": 10, "l": 10, "r": 10},
                      font={"color": "#111111"},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0})
    return fig


def histogram_bins(values: Sequence[np.ndarray], count: int = HISTOGRAM_BINS) -> dict[str, float]:
    """Plotly ``xbins`` that cover the finite numbers of every array in ``values`` in ``count``
    bins (``[-1, 1]`` when none is finite), so overlaid histograms share their bins."""
    finite = np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in values])
    finite = finite[np.isfinite(finite)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (-1.0, 1.0)
    return {"start": lo, "end": hi + 1e-9, "size": max((hi - lo) / count, 1e-6)}


def modes_histogram(comparison: ModeComparison, channel: int,
                    translate: Translate = _english) -> go.Figure:
    """Overlaid histograms of ``channel``'s train() (blue) and eval() (red) output, on shared
    bins, with each mean as a dashed line."""
    y_tr = comparison.y_train[:, channel].flatten().numpy()
    y_ev = comparison.y_eval[:, channel].flatten().numpy()
    tm, ts = comparison.train_mean[channel], comparison.train_std[channel]
    em, es = comparison.eval_mean[channel], comparison.eval_std[channel]
    bins = histogram_bins((y_tr, y_ev))
    hist = go.Figure()
    hist.add_trace(go.Histogram(
        x=y_tr, name=translate(N_("train(): mean {mean:.3f}, std {std:.3f}")).format(
            mean=tm, std=ts),
        opacity=0.6, xbins=bins, marker_color=BLUE))
    hist.add_trace(go.Histogram(
        x=y_ev, name=translate(N_("eval(): mean {mean:.3f}, std {std:.3f}")).format(
            mean=em, std=es),
        opacity=0.6, xbins=bins, marker_color=RED))
    for value, color in ((tm, BLUE), (em, RED)):
        if np.isfinite(value):
            hist.add_vline(x=float(value), line_color=color, line_dash="dash")
    hist.update_layout(barmode="overlay", height=340, margin={"t": 40, "b": 10},
                       xaxis_title=translate(N_("output value")),
                       yaxis_title=translate(N_("count")),
                       legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0})
    return hist


def norms_diagram(samples: int, channels: int, groups: int,
                  translate: Translate = _english) -> go.Figure:
    """Four (channel × sample) grids, one per normalization; cells with one number share one
    mean and variance."""
    diagram = make_subplots(rows=1, cols=4, subplot_titles=NORM_NAMES, horizontal_spacing=0.04)
    hover = translate(N_("sample n=%{x}, channel c=%{y}<br>statistic #%{z}<extra></extra>"))
    for i, name in enumerate(NORM_NAMES, start=1):
        ids = norm_group_ids(name, samples, channels, groups)
        diagram.add_trace(go.Heatmap(z=ids, text=ids, texttemplate="%{text}", showscale=False,
                                     colorscale=NORM_COLORS, xgap=2, ygap=2,
                                     hovertemplate=hover),
                          row=1, col=i)
    diagram.update_xaxes(title_text=translate(N_("sample n")), dtick=1)
    diagram.update_yaxes(title_text=translate(N_("channel c")), dtick=1, autorange="reversed",
                         row=1, col=1)
    diagram.update_yaxes(dtick=1, autorange="reversed")
    diagram.update_layout(height=260, margin={"t": 40, "b": 10})
    return diagram


def norms_table(results: Sequence[NormResult],
                translate: Translate = _english) -> dict[str, list]:
    """The four normalizations by hand and by the real modules as table columns (header ->
    one cell per normalization), headers and axis words in ``translate``'s language."""
    return {
        translate(N_("normalization")): [r.name for r in results],
        translate(N_("real module")): [r.module for r in results],
        translate(N_("pools over")): [_translated(r.axes, translate) for r in results],
        translate(N_("statistics (shape)")): [str(r.stats_shape) for r in results],
        translate(N_("values per statistic")): [r.values_per_stat for r in results],
        translate(N_("max |by hand − module|")): [f"{r.max_abs_diff:.1e}" for r in results],
    }


def anatomy_tables(anatomy: Anatomy,
                   translate: Translate = _english) -> tuple[dict[str, list], ...]:
    """``named_parameters()``, ``named_buffers()`` and ``state_dict().keys()`` of a module as
    three tables (header -> column); an empty one says so in its first cell."""
    name, shape = translate(N_("name")), translate(N_("shape"))
    params, buffers = anatomy.parameters, anatomy.buffers
    return (
        {name: [p[0] for p in params] or [translate(N_("(none)"))],
         shape: [str(p[1]) for p in params] or [""],
         "requires_grad": [str(p[2]) for p in params] or [""]},
        {name: [b[0] for b in buffers] or [translate(N_("(none)"))],
         shape: [str(b[1]) for b in buffers] or [""],
         "dtype": [b[2] for b in buffers] or [""]},
        {translate(N_("key")): list(anatomy.state_dict_keys) or [translate(N_("(empty)"))]},
    )
