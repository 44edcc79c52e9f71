"""Plotly pictures for the indexing page: tensors as grids of cells with their values printed.

A colour per *source* cell: the output cell takes the colour of the cell its value came from,
so a glance shows the wiring. Collisions (several scatter writes into one cell) get a dashed
red frame and an ``×n`` tag; the cells behind a clicked output element get a thick frame.
Every cell carries its full position in ``customdata`` (read back by
:func:`lessons.indexing.explanation.position_from_selection`). Pure: no Streamlit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import plotly.graph_objects as go
import torch
from plotly import colors as pcolors

from core.text import N_
from lessons.indexing.parsing import Pos, format_value
from lessons.indexing.tracing import Trace


def _english(message: str) -> str:
    return message


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
#: Cell values, tick labels and titles: at least the projector minimum of 14 px
#: (:data:`core.figure_style.MIN_FONT_PX`); titles a step larger.
CELL_TEXT_PX = 14
TITLE_PX = 16
#: Room for the title and its subtitle (shape and dtype) above the cells.
TOP_MARGIN_PX = 64
#: Width budget of one row of pictures, in cell widths (see :func:`figure_rows`): 16 keeps a
#: 6x10 tensor (the page's largest 2-D one) readable in one row of the figure column.
ROW_UNITS = 16
#: The narrowest picture, in cell widths, so a 1-column or scalar tensor keeps a readable title
#: (and stays above the 150 px that Streamlit gives a chart at least, which clipped its cells).
MIN_UNITS = 5


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
    gettext: Callable[[str], str] = _english,
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
        gettext: translates the figure's own words (hover hints); English by default.

    The figure is assembled as plain dicts and validated once (``make_subplots`` and per-cell
    ``add_shape`` calls made the page's rerun several times slower).
    """
    shape = tuple(int(s) for s in t.shape)
    colors = colors or {}
    n_slices, rows, cols = _grid(shape)
    values = t.detach().cpu()
    n_ids = max([0, *colors.values()])
    gap = 0.04 if n_slices > 1 else 0.0
    width = (1.0 - gap * (n_slices - 1)) / n_slices
    data: list[dict] = []
    frames: list[dict] = []
    annotations: list[dict] = []
    layout: dict = {}
    for s in range(n_slices):
        axis = "" if s == 0 else str(s + 1)
        x0 = s * (width + gap)
        cells = _slice_cells(values, shape, s, colors, marks or {}, set(highlight))
        frames += cells.frames
        data.append(_heatmap(axis, cells, _colorscale(n_ids), n_ids, title))
        if clickable:
            data += _click_targets(axis, cells, title, gettext)
        layout.update(
            _slice_axes(axis, x0, width, rows, cols, show_rows=len(shape) >= 2 and s == 0)
        )
        if len(shape) == 3:
            annotations.append(_slice_label(s, x0 + width / 2))
    layout.update(_figure_layout(title, shape, t.dtype, rows, frames, annotations))
    return go.Figure(data=data, layout=layout)


@dataclass
class _SliceCells:
    """One 2-D slice of a tensor as a heatmap's rows (``z``: colour ids, ``text``: the printed
    values, ``custom``: positions as text) and as flat per-cell lists for the click layers
    (``xs``, ``ys``, ``positions``, ``hover``), plus the frames drawn around cells."""

    z: list[list[int]]
    text: list[list[str]]
    custom: list[list[str]]
    xs: list[int]
    ys: list[int]
    positions: list[list[int]]
    hover: list[str]
    frames: list[dict]


def _slice_cells(
    values: torch.Tensor,
    shape: tuple[int, ...],
    s: int,
    colors: Mapping[Pos, int],
    marks: Mapping[Pos, str],
    highlight: set[Pos],
) -> _SliceCells:
    """The cells of slice ``s`` of ``values`` (shape ``shape``), framed where marked (dashed
    red) or highlighted (black)."""
    _, rows, cols = _grid(shape)
    axis = "" if s == 0 else str(s + 1)
    cells = _SliceCells([], [], [], [], [], [], [], [])
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
            cells.xs.append(c)
            cells.ys.append(r)
            cells.positions.append(list(pos))
            cells.hover.append(format_value(v))
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
                cells.frames.append(
                    {**box, "line": {"color": COLLISION, "width": 2, "dash": "dash"}}
                )
            if pos in highlight:
                cells.frames.append({**box, "line": {"color": HIGHLIGHT, "width": 4}})
        cells.z.append(zr)
        cells.text.append(tr)
        cells.custom.append(cr)
    return cells


def _heatmap(
    axis: str, cells: _SliceCells, scale: list[list[float | str]], n_ids: int, title: str
) -> dict:
    """The coloured cells of one slice, each with its value printed."""
    return {
        "type": "heatmap",
        "xaxis": f"x{axis}",
        "yaxis": f"y{axis}",
        "z": cells.z,
        "text": cells.text,
        "customdata": cells.custom,
        "texttemplate": "%{text}",
        "textfont": {"size": CELL_TEXT_PX, "color": "#111"},
        "colorscale": scale,
        "zmin": -0.5,
        "zmax": n_ids + 0.5,
        "showscale": False,
        "xgap": 2,
        "ygap": 2,
        "hovertemplate": f"{title}%{{customdata}} = %{{text}}<extra></extra>",
    }


def _click_targets(
    axis: str, cells: _SliceCells, title: str, gettext: Callable[[str], str]
) -> list[dict]:
    """Invisible bars and markers over the cells of one slice, so that a click selects a cell
    (a heatmap reports no selection); each carries its position as customdata."""
    invisible = {"opacity": 0.01}
    # one invisible bar per cell covers the whole cell, so a click anywhere in it selects
    # the cell (the markers below only cover a CELL_PX - 8 square at its centre)
    bars = {
        "type": "bar",
        "xaxis": f"x{axis}",
        "yaxis": f"y{axis}",
        "x": cells.xs,
        "y": [1] * len(cells.ys),
        "base": [y - 0.5 for y in cells.ys],
        "width": 1.0,
        "customdata": cells.positions,
        "hovertext": cells.hover,
        "marker": {"color": "#000", "line": {"width": 0}, **invisible},
        "selected": {"marker": invisible},
        "unselected": {"marker": invisible},
        "hovertemplate": gettext(N_("{cell} = {value}: click to explain")).format(
            cell=f"{title}%{{customdata}}", value="%{hovertext}"
        )
        + "<extra></extra>",
        "showlegend": False,
    }
    markers = {
        "type": "scatter",
        "xaxis": f"x{axis}",
        "yaxis": f"y{axis}",
        "x": cells.xs,
        "y": cells.ys,
        "customdata": cells.positions,
        "mode": "markers",
        "marker": {"symbol": "square", "size": CELL_PX - 8, "color": "#000", **invisible},
        "selected": {"marker": invisible},
        "unselected": {"marker": invisible},
        "hovertemplate": gettext(N_("click: explain {cell}")).format(cell="out%{customdata}")
        + "<extra></extra>",
        "showlegend": False,
    }
    return [bars, markers]


def _slice_axes(
    axis: str, x0: float, width: float, rows: int, cols: int, *, show_rows: bool
) -> dict[str, dict]:
    """The x and y axes of one slice: one tick per column and row, row 0 on top."""
    return {
        f"xaxis{axis}": {
            "domain": [x0, x0 + width],
            "anchor": f"y{axis}",
            "tickmode": "array",
            "tickvals": list(range(cols)),
            # below the cells: above them the column ticks collided with the shape subtitle
            "side": "bottom",
            "showgrid": False,
            "zeroline": False,
            "range": [-0.5, cols - 0.5],
            "fixedrange": True,
        },
        f"yaxis{axis}": {
            "anchor": f"x{axis}",
            "tickmode": "array",
            "tickvals": list(range(rows)),
            # row 0 on top; a fixed range (the click bars made autorange pad the out picture)
            "range": [rows - 0.5, -0.5],
            "showgrid": False,
            "zeroline": False,
            "fixedrange": True,
            "showticklabels": show_rows,
        },
    }


def _slice_label(s: int, x: float) -> dict:
    """The ``[s]`` above slice ``s`` of a 3-D tensor, centred at paper position ``x``."""
    return {
        "text": f"[{s}]",
        "xref": "paper",
        "yref": "paper",
        "x": x,
        "y": 1.0,
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": CELL_TEXT_PX},
    }


def _figure_layout(
    title: str,
    shape: tuple[int, ...],
    dtype: torch.dtype,
    rows: int,
    frames: list[dict],
    annotations: list[dict],
) -> dict:
    """The figure's title (shape and dtype as its subtitle), size and interaction settings."""
    extra = 16 if len(shape) == 3 else 0  # room for the slice labels
    return {
        "shapes": frames,
        "annotations": annotations,
        "title": {
            "text": title,
            "font": {"size": TITLE_PX},
            "subtitle": {
                "text": f"{shape} {str(dtype).replace('torch.', '')}",
                "font": {"size": CELL_TEXT_PX, "color": "#333333"},
            },
            # at the top of the figure, so the subtitle stays clear of the column ticks
            "y": 1.0,
            "yref": "container",
            "yanchor": "top",
            "pad": {"t": 4},
        },
        "font": {"size": CELL_TEXT_PX},
        "height": TOP_MARGIN_PX + 30 + CELL_PX * rows + extra,
        "margin": {"l": 30, "r": 10, "t": TOP_MARGIN_PX + extra, "b": 30},
        "dragmode": False,
        "barmode": "overlay",
        "clickmode": "event+select",
        "plot_bgcolor": "white",
        "showlegend": False,
    }


def trace_figure(
    trace: Trace,
    name: str,
    highlight: Iterable[Pos] = (),
    gettext: Callable[[str], str] = _english,
) -> go.Figure:
    """One picture of a trace: operand ``name``, or ``"out"`` (clickable, collisions tagged).

    ``highlight`` lists the cells of that picture to frame in black. One picture per call, so
    a page can build (and cache) each picture on its own. ``gettext`` translates its words.

    Raises:
        ValueError: ``name`` is neither an operand of ``trace`` nor ``"out"``.
    """
    if name != "out" and name not in trace.operands:
        raise ValueError(f"no picture {name!r}; choose one of {[*trace.operands, 'out']}")
    coloring = source_coloring(trace)
    if name == "out":
        return tensor_figure(
            trace.result,
            "out",
            colors=coloring.by_operand["out"],
            marks=coloring.marks,
            highlight=highlight,
            clickable=True,
            gettext=gettext,
        )
    scalar = name == "src" and trace.scalar_src
    title = N_("src (scalar)") if scalar else {"dest": N_("dest (before)")}.get(name, name)
    return tensor_figure(
        trace.operands[name],
        gettext(title) if title != name else title,
        colors=coloring.by_operand.get(name),
        highlight=highlight,
        gettext=gettext,
    )


def trace_figures(
    trace: Trace, highlight: Mapping[str, Iterable[Pos]] | None = None
) -> dict[str, go.Figure]:
    """All pictures of one trace, keyed by operand name plus ``"out"`` (clickable)."""
    highlight = highlight or {}
    return {
        name: trace_figure(trace, name, highlight.get(name, ()))
        for name in (*trace.operands, "out")
    }


def figure_units(shape: tuple[int, ...]) -> int:
    """Width of a tensor's picture in cell widths: its columns (all slices) plus one for margins.

    Never below :data:`MIN_UNITS`, so a one-column tensor or a scalar keeps a readable title.
    """
    n_slices, _, cols = _grid(tuple(shape))
    return max(MIN_UNITS, n_slices * cols + n_slices)


def figure_rows(
    shapes: Mapping[str, tuple[int, ...]], *, budget: int = ROW_UNITS
) -> list[list[tuple[str, int]]]:
    """Group a trace's pictures into rows of at most ``budget`` cell widths, in order.

    ``shapes`` maps picture names to tensor shapes (inputs first, ``"out"`` last). Returns rows of
    ``(name, units)``; a page lays each row out as columns weighted by ``units``. With several
    rows it pads each to ``budget`` with an empty column, so every cell has the same width on
    screen; a single row spreads over the whole width. Everything in one
    row when it fits (the default gather: input, index and out side by side); otherwise the
    pictures fill rows in order, the wiring read left to right and top to bottom.

    >>> figure_rows({"input": (2, 3), "index": (2, 2), "out": (2, 2)})
    [[('input', 5), ('index', 5), ('out', 5)]]
    """
    items = [(name, min(budget, figure_units(shape))) for name, shape in shapes.items()]
    rows: list[list[tuple[str, int]]] = []
    for item in items:
        if rows and sum(units for _, units in rows[-1]) + item[1] <= budget:
            rows[-1].append(item)
        else:
            rows.append([item])
    return rows


def row_weights(row: list[tuple[str, int]], n_rows: int, *, budget: int = ROW_UNITS) -> list[int]:
    """The column weights of one row of :func:`figure_rows`: each picture's units, plus an empty
    column that pads the row to ``budget`` when there are several rows (equal cells on screen)."""
    used = sum(units for _, units in row)
    pad = budget - used if n_rows > 1 and used < budget else 0
    return [units for _name, units in row] + ([pad] if pad else [])


def picture_shapes(trace: Trace) -> dict[str, tuple[int, ...]]:
    """The pictures of ``trace`` in drawing order, by name, with their tensors' shapes: the
    operands (a scalar ``src`` is no picture: the page names its value) and then ``"out"``."""
    shapes = {
        name: tuple(t.shape)
        for name, t in trace.operands.items()
        if not (name == "src" and trace.scalar_src)
    }
    shapes["out"] = tuple(trace.result.shape)
    return shapes


#: Phones and tablets. Plotly (as Streamlit 1.67 ships it) selects a tapped point from the
#: *previous* touch's hover data: measured with Playwright touch taps on the indexing page, a
#: first tap only showed a hover label and each later tap explained the cell tapped before.
_TOUCH_UA = re.compile(r"Mobi|Android|iPhone|iPad|iPod|Silk|Kindle|Opera Mini", re.IGNORECASE)


def is_touch_user_agent(user_agent: str | None) -> bool:
    """True for a phone or tablet browser's ``User-Agent`` header (pick cells in a box there).

    >>> is_touch_user_agent("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)")
    True
    """
    return bool(user_agent) and _TOUCH_UA.search(user_agent or "") is not None
