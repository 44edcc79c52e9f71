"""The error doctor's pictures: why an entry was chosen, and what the catalogue holds.

- :func:`match_figure`: the matcher's scores for the best candidates, as bars against the
  threshold an entry needs (:data:`~lessons.errors.matching.MIN_SCORE`): a clear winner, or a
  near tie worth reading twice.
- :func:`catalogue_figure`: the catalogue's entries per kind, split by how each is reproduced
  (live, in a subprocess, on a GPU, documented).

Pure: plotly, no Streamlit. ``translate`` turns the English labels (``N_``) into the visitor's
language; entry titles come translated from the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import plotly.graph_objects as go

from core.text import N_
from lessons.errors.catalogue import entries_of_kind
from lessons.errors.entry import KIND_TITLES, KINDS, RUN_TITLES, RUNS
from lessons.errors.matching import MIN_SCORE, Match

Translate = Callable[[str], str]
#: The best match and the others (the app's blue, and a grey that still reads on a projector).
BEST_COLOUR, OTHER_COLOUR = "#1f77b4", "#5f6b7a"  # white text reads on both
#: One colour per way an entry is reproduced, in :data:`~lessons.errors.entry.RUNS` order.
RUN_COLOURS = ("#2ca02c", "#1f77b4", "#ff7f0e", "#9aa5b1")
#: Characters of an entry's title kept on the chart's axis (the full title is on hover).
AXIS_TITLE_CHARS = 38
_HOVER = "%{customdata}: %{x:.1f}<extra></extra>"


def _english(text: str) -> str:
    return text


def _short(title: str) -> str:
    return title if len(title) <= AXIS_TITLE_CHARS else title[: AXIS_TITLE_CHARS - 1] + "…"


def match_figure(matches: Sequence[Match], titles: Mapping[str, str],
                 translate: Translate = _english) -> go.Figure:  # fmt: skip
    """Horizontal bars of ``matches``' scores (0-100), the best on top, with the threshold.

    ``titles`` maps an entry key to its (translated) title. Raises ValueError for no matches or
    a key ``titles`` lacks."""
    if not matches:
        raise ValueError("match_figure needs at least one match, got none")
    missing = [match.key for match in matches if match.key not in titles]
    if missing:
        raise ValueError(f"no title for the entries {missing}")
    shown = list(reversed(matches))  # plotly draws the first bar at the bottom
    # Titles are written inside the bars, not on the axis: axis labels would take half of a
    # phone's width from the bars.
    fig = go.Figure(go.Bar(
        x=[match.score for match in shown], y=[match.key for match in shown], orientation="h",
        text=[f"{_short(titles[m.key])} · {m.score:.0f}" for m in shown], textposition="inside",
        insidetextanchor="start", textfont={"color": "white"},
        marker_color=[BEST_COLOUR if m is matches[0] else OTHER_COLOUR for m in shown],
        customdata=[titles[m.key] for m in shown], hovertemplate=_HOVER,
    ))  # fmt: skip
    fig.update_yaxes(showticklabels=False)
    fig.add_vline(x=MIN_SCORE, line_dash="dot", line_color="#555",
                  annotation_text=translate(N_("needed")), annotation_position="top")  # fmt: skip
    fig.update_layout(
        height=max(150, 70 + 34 * len(matches)), margin={"t": 30, "b": 10, "l": 10, "r": 10},
        xaxis={"range": [0, 100], "title": translate(N_("match score (of 100)"))},
        showlegend=False,
    )  # fmt: skip
    return fig


def catalogue_counts() -> dict[str, dict[str, int]]:
    """``{kind: {run: number of entries}}`` for every kind and run mode (zeros included)."""
    counts = {kind: dict.fromkeys(RUNS, 0) for kind in KINDS}
    for kind in KINDS:
        for entry in entries_of_kind(kind):
            counts[kind][entry.run] += 1
    return counts


def catalogue_figure(counts: Mapping[str, Mapping[str, int]],
                     translate: Translate = _english) -> go.Figure:  # fmt: skip
    """Stacked horizontal bars: entries per kind (``counts``: :func:`catalogue_counts`), one
    colour per way they are reproduced. Raises ValueError for a kind or run it does not know."""
    unknown = [kind for kind in counts if kind not in KINDS]
    unknown += [run for row in counts.values() for run in row if run not in RUNS]
    if unknown:
        raise ValueError(f"unknown kinds or run modes: {unknown}")
    kinds = [kind for kind in reversed(KINDS) if kind in counts]  # the first kind on top
    fig = go.Figure([
        go.Bar(y=[translate(KIND_TITLES[kind]) for kind in kinds],
               x=[counts[kind].get(run, 0) for kind in kinds], name=translate(RUN_TITLES[run]),
               orientation="h", marker_color=colour)
        for run, colour in zip(RUNS, RUN_COLOURS, strict=True)
    ])  # fmt: skip
    fig.update_layout(
        barmode="stack", height=320, margin={"t": 40, "b": 10, "l": 10, "r": 10},
        xaxis_title=translate(N_("entries")), legend={"orientation": "h", "y": 1.12},
    )  # fmt: skip
    return fig
