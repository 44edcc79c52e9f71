"""Plotly pictures for the indexing page: tensors as grids of cells with their values printed.

A colour per *source* cell: the output cell takes the colour of the cell its value came from,
so a glance shows the wiring. Collisions (several scatter writes into one cell) get a dashed
red frame and an ``×n`` tag; the cells behind a clicked output element get a thick frame.
Every cell carries its full position in ``customdata`` (read back by
:func:`core.indexing.position_from_selection`). Pure: no Streamlit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import plotly.graph_objects as go
import torch
from plotly import colors as pcolors

from core.indexing import Pos, Trace, format_value

#: Light qualitative colours (dark text stays readable on all of them).
PALETTE: tuple[str, ...] = tuple(
    pcolors.qualitative.Pastel
    + pcolors.qualitative.Set3
    + pcolors.qualitative.Pastel1
    + pcolors.qualitative.Pastel2
)
NO_SOURCE = "#eef0f3"
HIGHLIGHT = "#111111"
COLLISION = "#d62728"
CELL_PX = 46


@dataclass(frozen=True)
class Coloring:
    """Colour ids per operand (``1..`` index into :data:`PALETTE` cyclically; absent = grey).

    ``marks`` maps output positions to a short tag (``"×2"`` for a collision).
    """

    by_operand: dict[str, dict[Pos, int]]
    marks: dict[Pos, str]


def source_coloring(trace: Trace) -> Coloring:
    """Assign one colour per source cell and propagate it to index and output cells."""
    by: dict[str, dict[Pos, int]] = {name: {} for name in (*trace.operands, "out")}
    marks: dict[Pos, str] = {}
    if trace.op in ("gather", "index"):
        src_name = "input" if trace.op == "gather" else "x"
        ids: dict[Pos, int] = {}
        for out_pos, in_pos in trace.links:
            cid = ids.setdefault(in_pos, len(ids) + 1)
            by[src_name][in_pos] = cid
            by["out"][out_pos] = cid
            if trace.op == "gather":
                by["index"][out_pos] = cid
        return Coloring(by, marks)
    for k, (src_pos, dest_pos) in enumerate(trace.links):
        cid = 1 if trace.scalar_src else k + 1
        by["index"][src_pos] = cid
        if not trace.scalar_src:
            by["src"][src_pos] = cid
        if dest_pos not in by["out"]:
            by["out"][dest_pos] = cid
    for dest_pos, writers in trace.collisions.items():
        marks[dest_pos] = f"×{len(writers)}"
        winner = trace.winners.get(dest_pos)
        if winner is not None:
            by["out"][dest_pos] = by["index"][winner]
        elif trace.reduce is None:
            by["out"][dest_pos] = by["index"][writers[-1]]
    if trace.scalar_src:
        by["src"][()] = 1
    return Coloring(by, marks)


def _colorscale(n: int) -> list[list[float | str]]:
    """Discrete scale: z = 0 -> grey, z = k -> PALETTE[(k - 1) % len]; zmin=-0.5, zmax=n+0.5."""
    cols = [NO_SOURCE] + [PALETTE[(k - 1) % len(PALETTE)] for k in range(1, n + 1)]
    scale: list[list[float | str]] = []
    total = len(cols)
    for k, c in enumerate(cols):
        scale.append([k / total, c])
        scale.append([(k + 1) / total, c])
    return scale


def _grid(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(slices, rows, cols) of the cell layout for a 0- to 3-D tensor."""
    if len(shape) == 0:
        return 1, 1, 1
    if len(shape) == 1:
        return 1, 1, shape[0]
    if len(shape) == 2:
        return 1, shape[0], shape[1]
    return shape[0], shape[1], shape[2]


def _pos(shape: tuple[int, ...], s: int, r: int, c: int) -> Pos:
    if len(shape) == 0:
        return ()
    if len(shape) == 1:
        return (c,)
    if len(shape) == 2:
        return (r, c)
    return (s, r, c)


def tensor_figure(
    t: torch.Tensor,
    title: str,
    *,
    colors: Mapping[Pos, int] | None = None,
    marks: Mapping[Pos, str] | None = None,
    highlight: Iterable[Pos] = (),
    clickable: bool = False,
) -> go.Figure:
    """A heatmap-like grid of ``t`` (0-3 dims; 3-D as side-by-side slices ``[k]``).

    Args:
        t: tensor to draw (any dtype; values are printed in the cells).
        title: figure title.
        colors: position -> colour id (see :class:`Coloring`); missing positions are grey.
        marks: position -> tag printed under the value; tagged cells get a dashed red frame.
        highlight: positions framed in black (the sources of a clicked element).
        clickable: overlay invisible markers so that ``on_select`` reports clicks (plotly
            heatmaps themselves report no selection); each carries its position as customdata.

    The figure is assembled as plain dicts and validated once (``make_subplots`` and per-cell
    ``add_shape`` calls made the page's rerun several times slower).
    """
    shape = tuple(int(s) for s in t.shape)
    colors = colors or {}
    marks = marks or {}
    highlight = set(highlight)
    n_slices, rows, cols = _grid(shape)
    values = t.detach().cpu()
    n_ids = max([0, *colors.values()])
    scale = _colorscale(n_ids)
    gap = 0.04 if n_slices > 1 else 0.0
    width = (1.0 - gap * (n_slices - 1)) / n_slices
    data: list[dict] = []
    shapes: list[dict] = []
    annotations: list[dict] = []
    layout: dict = {}
    for s in range(n_slices):
        axis = "" if s == 0 else str(s + 1)
        x0 = s * (width + gap)
        z, text, custom = [], [], []
        xs, ys, cd, hover = [], [], [], []
        for r in range(rows):
            zr, tr, cr = [], [], []
            for c in range(cols):
                pos = _pos(shape, s, r, c)
                v = values[pos].item() if pos else values.item()
                label = format_value(v)
                if pos in marks:
                    label += f"<br><b>{marks[pos]}</b>"
                zr.append(colors.get(pos, 0))
                tr.append(label)
                cr.append(str(list(pos)))
                xs.append(c)
                ys.append(r)
                cd.append(list(pos))
                hover.append(format_value(v))
                box = {
                    "type": "rect",
                    "xref": f"x{axis}",
                    "yref": f"y{axis}",
                    "x0": c - 0.5,
                    "x1": c + 0.5,
                    "y0": r - 0.5,
                    "y1": r + 0.5,
                }
                if pos in marks:
                    shapes.append({**box, "line": {"color": COLLISION, "width": 2, "dash": "dash"}})
                if pos in highlight:
                    shapes.append({**box, "line": {"color": HIGHLIGHT, "width": 4}})
            z.append(zr)
            text.append(tr)
            custom.append(cr)
        data.append(
            {
                "type": "heatmap",
                "xaxis": f"x{axis}",
                "yaxis": f"y{axis}",
                "z": z,
                "text": text,
                "customdata": custom,
                "texttemplate": "%{text}",
                "textfont": {"size": 13, "color": "#111"},
                "colorscale": scale,
                "zmin": -0.5,
                "zmax": n_ids + 0.5,
                "showscale": False,
                "xgap": 2,
                "ygap": 2,
                "hovertemplate": f"{title}%{{customdata}} = %{{text}}<extra></extra>",
            }
        )
        if clickable:
            invisible = {"opacity": 0.01}
            # one invisible bar per cell covers the whole cell, so a click anywhere in it selects
            # the cell (the markers below only cover a CELL_PX - 8 square at its centre)
            data.append(
                {
                    "type": "bar",
                    "xaxis": f"x{axis}",
                    "yaxis": f"y{axis}",
                    "x": xs,
                    "y": [1] * len(ys),
                    "base": [y - 0.5 for y in ys],
                    "width": 1.0,
                    "customdata": cd,
                    "hovertext": hover,
                    "marker": {"color": "#000", "line": {"width": 0}, **invisible},
                    "selected": {"marker": invisible},
                    "unselected": {"marker": invisible},
                    "hovertemplate": f"{title}%{{customdata}} = %{{hovertext}}: click to explain"
                    "<extra></extra>",
                    "showlegend": False,
                }
            )
            data.append(
                {
                    "type": "scatter",
                    "xaxis": f"x{axis}",
                    "yaxis": f"y{axis}",
                    "x": xs,
                    "y": ys,
                    "customdata": cd,
                    "mode": "markers",
                    "marker": {
                        "symbol": "square",
                        "size": CELL_PX - 8,
                        "color": "#000",
                        **invisible,
                    },
                    "selected": {"marker": invisible},
                    "unselected": {"marker": invisible},
                    "hovertemplate": "click: explain out%{customdata}<extra></extra>",
                    "showlegend": False,
                }
            )
        layout[f"xaxis{axis}"] = {
            "domain": [x0, x0 + width],
            "anchor": f"y{axis}",
            "tickmode": "array",
            "tickvals": list(range(cols)),
            "side": "bottom" if len(shape) == 3 else "top",
            "showgrid": False,
            "zeroline": False,
            "range": [-0.5, cols - 0.5],
            "fixedrange": True,
        }
        layout[f"yaxis{axis}"] = {
            "anchor": f"x{axis}",
            "tickmode": "array",
            "tickvals": list(range(rows)),
            "autorange": "reversed",
            "showgrid": False,
            "zeroline": False,
            "fixedrange": True,
            "showticklabels": len(shape) >= 2 and s == 0,
        }
        if len(shape) == 3:
            annotations.append(
                {
                    "text": f"[{s}]",
                    "xref": "paper",
                    "yref": "paper",
                    "x": x0 + width / 2,
                    "y": 1.0,
                    "yanchor": "bottom",
                    "showarrow": False,
                    "font": {"size": 14},
                }
            )
    dtype = str(t.dtype).replace("torch.", "")
    layout.update(
        shapes=shapes,
        annotations=annotations,
        title={"text": f"{title}  <sup>shape {shape}, {dtype}</sup>", "font": {"size": 15}},
        height=90 + CELL_PX * rows + (30 if len(shape) == 3 else 0),
        margin={
            "l": 30,
            "r": 10,
            "t": 70 if len(shape) == 3 else 60,
            "b": 30 if len(shape) == 3 else 10,
        },
        dragmode=False,
        barmode="overlay",
        clickmode="event+select",
        plot_bgcolor="white",
        showlegend=False,
    )
    return go.Figure(data=data, layout=layout)


def trace_figures(
    trace: Trace, highlight: Mapping[str, Iterable[Pos]] | None = None
) -> dict[str, go.Figure]:
    """All pictures of one trace, keyed by operand name plus ``"out"`` (clickable)."""
    coloring = source_coloring(trace)
    highlight = highlight or {}
    figs: dict[str, go.Figure] = {}
    titles = {"dest": "dest (before)", "x": "x"}
    for name, tensor in trace.operands.items():
        scalar = name == "src" and trace.scalar_src
        title = "src (scalar)" if scalar else titles.get(name, name)
        figs[name] = tensor_figure(
            tensor,
            title,
            colors=coloring.by_operand.get(name),
            highlight=highlight.get(name, ()),
        )
    figs["out"] = tensor_figure(
        trace.result,
        "out",
        colors=coloring.by_operand["out"],
        marks=coloring.marks,
        highlight=highlight.get("out", ()),
        clickable=True,
    )
    return figs
