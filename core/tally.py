"""The class's answers as a picture: one bar per choice, for the projector.

Before the reveal every bar has one colour (the picture must not say which answer is right);
after it the right choice is green and the others grey.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

ASKED_COLOUR = "#4c78a8"
RIGHT_COLOUR = "#2e7d32"
OTHER_COLOUR = "#9e9e9e"


def tally_figure(labels: Sequence[str], counts: Sequence[int], right: int | None = None,
                 *, height: int = 260) -> go.Figure:  # fmt: skip
    """A horizontal bar chart: ``labels[i]`` (a choice, top to bottom) with ``counts[i]``
    answers, each bar labelled with its count; ``right`` (a choice index) is coloured as the
    answer, None colours every bar alike. Raises ``ValueError`` when the lengths differ or a
    count is negative."""
    if len(labels) != len(counts) or not labels:
        raise ValueError(f"one label per count, got {len(labels)} labels, {len(counts)} counts")
    if any(count < 0 for count in counts):
        raise ValueError(f"answer counts are never negative, got {list(counts)}")
    if right is not None and not 0 <= right < len(labels):
        raise ValueError(f"right is a choice index 0-{len(labels) - 1}, got {right}")
    colours = [ASKED_COLOUR if right is None else RIGHT_COLOUR if i == right else OTHER_COLOUR
               for i in range(len(labels))]  # fmt: skip
    fig = go.Figure(go.Bar(
        x=list(counts), y=list(labels), orientation="h", marker_color=colours,
        text=[str(count) for count in counts], textposition="outside", cliponaxis=False,
        hoverinfo="skip",
    ))  # fmt: skip
    top = max(max(counts), 1)
    fig.update_layout(
        height=height, margin={"l": 10, "r": 40, "t": 10, "b": 30}, showlegend=False,
        xaxis={"range": [0, top * 1.2], "dtick": max(1, round(top / 5)), "fixedrange": True},
        yaxis={"autorange": "reversed", "fixedrange": True, "automargin": True},
    )  # fmt: skip
    return fig
