"""Plotly figures for the memory page: the live chart, the segment map and fragmentation."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figure_style import MIN_FONT_PX, mark_legible
from core.text import N_, T
from lessons.memory.allocator_sim import GiB, MiB, format_size
from lessons.memory.backends import MemoryState

#: A function that translates a catalog message (a page passes ``ui.i18n.translator()``);
#: the default leaves the English.
Translate = Callable[[str], str]


def _english(message: str) -> str:
    return message


BAND_LABEL = N_("used by the device but not reserved by PyTorch (CUDA context, other processes)")
COLORS = {
    "allocated": "#1f77b4",
    "inactive_split": "#ff7f0e",
    "free_segment": "#2ca02c",
    "reserved": "#9467bd",
    "device": "#7f7f7f",
}
STATE_NAMES = {
    "allocated": N_("allocated (a live tensor)"),
    "inactive_split": N_("inactive split (cached, pins its segment)"),
    "free_segment": N_("free whole segment (empty_cache releases it)"),
}
MIN_VISIBLE_PCT = 0.6  # a live block is drawn at least this wide (% of its segment's row)


@dataclass(frozen=True)
class LivePoint:
    """One sample of one device for the live chart (bytes; ``None`` where unknown)."""

    t: float
    device: str
    allocated: int
    reserved: int
    device_used: int | None
    device_total: int | None


def live_point(t: float, state: MemoryState) -> LivePoint:
    return LivePoint(
        t, state.label, state.allocated, state.reserved, state.device_used, state.device_total
    )


#: Where the band for memory outside PyTorch's cache sits, as a share of each row's plot height;
#: the curves keep below :data:`DATA_TOP`.
BAND_BOTTOM = 0.78
DATA_TOP = 0.7
_UNITS = (("GiB", GiB), ("MiB", MiB), ("KiB", 1024), ("bytes", 1))


def axis_unit(peak: int) -> tuple[str, int]:
    """The unit to draw ``peak`` bytes in: the largest of GiB, MiB, KiB, bytes that is <= it."""
    return next(((name, size) for name, size in _UNITS if peak >= size), ("bytes", 1))


class LiveSeries(NamedTuple):
    """What the live chart draws for one device. A tuple of numbers, so a page can key a shared
    figure on it: hashing it is cheap and two equal series draw the same chart."""

    device: str
    t: tuple[float, ...]  # seconds, 0 = the newest sample of any device
    allocated: tuple[int, ...]
    reserved: tuple[int, ...]
    total: int | None  # the latest known device total
    outside: int | None  # the latest device_used - reserved; None where device_used is unknown


def live_series(points: Sequence[LivePoint], window_s: float) -> tuple[LiveSeries, ...]:
    """The samples of the last ``window_s`` seconds per device, time measured from the newest
    sample (so two sessions with the same history at different clock times get equal series)."""
    now = max((p.t for p in points), default=0.0)
    series = []
    for device in dict.fromkeys(p.device for p in points):
        pts = [p for p in points if p.device == device and p.t >= now - window_s]
        totals = [p.device_total for p in pts if p.device_total]
        outside = [p.device_used - p.reserved for p in pts if p.device_used is not None]
        series.append(
            LiveSeries(
                device,
                tuple(p.t - now for p in pts),
                tuple(p.allocated for p in pts),
                tuple(p.reserved for p in pts),
                totals[-1] if totals else None,
                outside[-1] if outside else None,
            )
        )
    return tuple(series)


def live_chart(
    points: Sequence[LivePoint], window_s: float, translate: Translate = _english
) -> go.Figure:
    """Allocated and reserved per device over the last ``window_s`` seconds:
    :func:`live_chart_of` the :func:`live_series` of ``points``."""
    return live_chart_of(live_series(points, window_s), translate)


def live_chart_spec(one: LiveSeries, translate: Translate = _english) -> dict[str, Any]:
    """The live chart of one device as a plain plotly spec (``{"data": [...], "layout": {...}}``)
    with every text size at :data:`core.figure_style.MIN_FONT_PX` already; its texts go through
    ``translate``."""
    traces, shapes, notes, layout = [], [], [], {}
    _series_spec(1, one, traces, shapes, notes, layout, translate)
    font = {"size": MIN_FONT_PX}
    for trace in traces:
        trace["textfont"] = font
    for note in notes:
        note["font"] = {**note.get("font", {}), **font}
    layout["xaxis"] = {"title": {"text": translate(N_("seconds (0 = now)"))}}
    for axis in ("xaxis", "yaxis"):
        layout[axis]["tickfont"] = font
        layout[axis]["title"]["font"] = font
    layout.update(
        height=420,
        font=font,
        hoverlabel={"font": font},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0, "xanchor": "left",
                "font": font},
        margin={"t": 40, "b": 10, "l": 10, "r": 10},
    )  # fmt: skip
    if shapes:  # plotly drops empty lists: leave them out, as a validated figure would
        layout.update(shapes=shapes, annotations=notes)
    return {"data": traces, "layout": layout}


def live_chart_of(series: Sequence[LiveSeries], translate: Translate = _english) -> go.Figure:
    """Allocated and reserved per device, scaled to what the session reserved; the memory the
    device uses outside PyTorch's cache (CUDA context, other processes: :data:`BAND_LABEL`) is a
    separate grey band on top, labelled with its size, so a 512 MiB context does not flatten a
    2 MiB segment to the axis."""
    rows = list(series) or [LiveSeries(translate(N_("(no samples yet)")), (), (), (), None, None)]
    if len(rows) == 1:
        # A live chart is rebuilt at every tick for each session whose samples changed: built
        # from a spec without plotly's validation (1 ms instead of 7, plus 11 for legible).
        # tests/lessons/memory/test_figures.py builds the same spec with validation and
        # legible() and expects the same figure.
        return mark_legible(go.Figure(live_chart_spec(rows[0], translate), _validate=False))
    traces, shapes, notes, layout = [], [], [], {}
    for row, s in enumerate(rows, start=1):
        _series_spec(row, s, traces, shapes, notes, layout, translate)
    layout[_axis("x", len(rows))] = {"title": {"text": translate(N_("seconds (0 = now)"))}}
    layout.update(
        height=360 * len(rows) + 60,
        legend={"orientation": "h", "y": 1.08, "yanchor": "bottom", "x": 0, "xanchor": "left"},
        margin={"t": 70, "b": 10, "l": 10, "r": 10},
        shapes=shapes,
    )
    fig = make_subplots(
        rows=len(rows),
        cols=1,
        shared_xaxes=True,
        subplot_titles=[s.device for s in rows],
        vertical_spacing=0.12,
    )
    fig.add_traces(traces)
    fig.update_layout(layout, annotations=[*fig.layout.annotations, *notes])
    return fig


def _axis(letter: str, row: int) -> str:
    """The layout key of subplot ``row``'s axis: ``yaxis``, ``yaxis2`` ..."""
    return f"{letter}axis{row if row > 1 else ''}"


def _series_spec(
    row: int,
    s: LiveSeries,
    traces: list,
    shapes: list,
    notes: list,
    layout: dict,
    translate: Translate = _english,
) -> None:
    """One device's lines, y axis and band in subplot ``row``, appended to the figure's spec."""
    total = s.total
    peak = max((*s.reserved, *s.allocated), default=0)
    near_full = total is not None and peak > total / 2
    unit, scale = axis_unit(total if near_full and total else peak)
    ref = str(row) if row > 1 else ""

    def line(name, values, color, dash=None):
        traces.append(
            {
                "type": "scatter",
                "x": list(s.t),
                "y": [v / scale for v in values],
                "customdata": [format_size(v) for v in values],
                "name": name,
                "legendgroup": name,
                "showlegend": row == 1,
                "line": {"color": color, "width": 3, **({"dash": dash} if dash else {})},
                "mode": "lines+markers" if len(s.t) < 3 else "lines",
                "hovertemplate": "%{customdata}<extra>" + name + "</extra>",
                "xaxis": "x" + ref,
                "yaxis": "y" + ref,
            }
        )

    line(translate(N_("allocated (tensors)")), s.allocated, COLORS["allocated"])
    line(translate(N_("reserved (PyTorch cache)")), s.reserved, COLORS["reserved"])
    if near_full and total:
        line(translate(N_("device total")), [total] * len(s.t), "#d62728", dash="dash")
    top = (total if near_full and total else peak) / scale / DATA_TOP if peak else 1.0
    layout[_axis("y", row)] = {
        "title": {
            "text": translate(N_("{unit} (device {total})")).format(
                unit=unit, total=format_size(total)
            )
            if total
            else unit
        },
        "range": [0, top],
    }
    if s.outside is not None:
        refs = {"xref": f"x{ref} domain", "yref": f"y{ref} domain"}
        shapes.append(_band(refs))
        notes.append(_band_label(refs, s.outside, translate))


def _band(refs: dict[str, str]) -> dict[str, Any]:
    """The grey band for memory outside PyTorch's cache, across the top of a subplot."""
    return {
        "type": "rect",
        "x0": 0,
        "x1": 1,
        "y0": BAND_BOTTOM,
        "y1": 1,
        "fillcolor": "rgba(127,127,127,0.3)",
        "line": {"width": 0},
        **refs,
    }


def _band_label(
    refs: dict[str, str], outside: int, translate: Translate = _english
) -> dict[str, Any]:
    """The band's label: the size of the memory outside PyTorch's cache."""
    return {
        "x": 0.5,
        "y": (BAND_BOTTOM + 1) / 2,
        "text": translate(
            N_(
                "<b>outside PyTorch's cache: {size}</b>"
                "<br>CUDA context, other processes (not to scale)"
            )
        ).format(size=format_size(max(outside, 0))),
        "showarrow": False,
        "yanchor": "middle",
        "font": {"color": "#111111"},
        **refs,
    }


class Block(NamedTuple):
    """One allocator block as the segment map draws it (bytes)."""

    size: int
    state: str  # 'active_allocated', 'inactive', ... as torch.cuda.memory_snapshot() says
    requested_size: int


class Segment(NamedTuple):
    """One segment as the segment map draws it: a tuple, so a page can key a shared figure on
    it (torch's snapshot dicts also carry addresses and stack frames the map does not show)."""

    segment_type: str
    total_size: int
    blocks: tuple[Block, ...]


def snapshot_segments(snapshot: Sequence[dict[str, Any] | Segment]) -> tuple[Segment, ...]:
    """What :func:`segment_map` draws of ``snapshot`` (``torch.cuda.memory_snapshot()`` dicts);
    segments already in this form pass through."""
    return tuple(
        seg
        if isinstance(seg, Segment)
        else Segment(
            seg["segment_type"],
            seg["total_size"],
            tuple(Block(b["size"], b["state"], b.get("requested_size", 0)) for b in seg["blocks"]),
        )
        for seg in snapshot
    )


def _block_kind(block: Block, n_blocks: int) -> str:
    if block.state != "inactive":
        return "allocated"
    return "inactive_split" if n_blocks > 1 else "free_segment"


def segment_map(
    snapshot: Sequence[dict[str, Any] | Segment], translate: Translate = _english
) -> go.Figure:
    """One row per segment; each block a bar piece as a share of its segment, coloured by
    allocated / inactive split / free whole segment, hover showing the sizes. A live block is
    drawn at least ``MIN_VISIBLE_PCT`` wide so a tiny tensor pinning a segment stays visible.
    ``snapshot`` is ``torch.cuda.memory_snapshot()``'s dicts or :func:`snapshot_segments`."""
    segments = snapshot_segments(snapshot)
    rows: dict[str, dict[str, list]] = {
        k: {"x": [], "base": [], "y": [], "text": []} for k in STATE_NAMES
    }
    labels = []
    hover = translate(
        N_(
            "{state}<br>block {size} (requested {requested})"
            "<br>offset {offset} in a {total} segment"
        )
    )
    for i, seg in enumerate(segments):
        label = f"#{i} {translate(seg.segment_type)} {format_size(seg.total_size)}"
        labels.append(label)
        offset = 0
        for block in seg.blocks:
            kind = _block_kind(block, len(seg.blocks))
            share = 100.0 * block.size / seg.total_size
            base = 100.0 * offset / seg.total_size
            if kind == "allocated" and share < MIN_VISIBLE_PCT:
                # a 512 B tensor in a 2 MiB segment is 0.02 % wide: widen it so it shows
                share = MIN_VISIBLE_PCT
                base = min(base, 100.0 - share)
            entry = rows[kind]
            entry["x"].append(share)
            entry["base"].append(base)
            entry["y"].append(label)
            entry["text"].append(
                hover.format(
                    state=translate(STATE_NAMES[kind]),
                    size=format_size(block.size),
                    requested=format_size(block.requested_size),
                    offset=format_size(offset),
                    total=format_size(seg.total_size),
                )
            )
            offset += block.size
    fig = go.Figure()
    # overlay draws later traces on top: live blocks last, so cached neighbours never hide them
    for kind in ("inactive_split", "free_segment", "allocated"):
        entry = rows[kind]
        fig.add_trace(
            go.Bar(
                x=entry["x"] or [0],
                base=entry["base"] or [0],
                y=entry["y"] or [labels[0] if labels else translate(N_("no segments"))],
                orientation="h",
                name=translate(STATE_NAMES[kind]),
                marker={"color": COLORS[kind], "line": {"color": "white", "width": 1}},
                hovertext=entry["text"] or [""],
                hoverinfo="text",
                legendrank=list(STATE_NAMES).index(kind) + 1,
            )
        )
    fig.update_layout(
        barmode="overlay",
        height=150 + 36 * max(len(labels), 1),
        xaxis={"title": translate(N_("share of the segment (%)")), "range": [0, 100]},
        yaxis={"autorange": "reversed", "categoryorder": "array", "categoryarray": labels},
        legend={"orientation": "h", "y": 1.0, "yanchor": "bottom"},
        margin={"t": 60},
    )
    if not segments:
        fig.add_annotation(
            text=translate(N_("no segments: nothing reserved")), showarrow=False, x=50, y=0
        )
    return fig


class FragmentationBars(NamedTuple):
    """The numbers the fragmentation chart draws (bytes), named as on :class:`MemoryState`."""

    allocated: int
    cached: int
    inactive_split_bytes: int
    largest_free_block: int


def fragmentation_bars(state: MemoryState) -> FragmentationBars:
    """What :func:`fragmentation_figure` draws of ``state``: a small tuple, a cache key."""
    return FragmentationBars(
        state.allocated, state.cached, state.inactive_split_bytes, state.largest_free_block
    )


def fragmentation_figure(
    state: MemoryState | FragmentationBars, translate: Translate = _english
) -> go.Figure:
    """Reserved but unallocated memory, the part pinned in split segments, and the largest free
    block: when the largest block is much smaller than the free total, memory is fragmented."""
    names = [
        translate(N_("allocated")),
        translate(N_("reserved but unallocated")),
        translate(N_("of which inactive split")),
        translate(N_("largest free block")),
    ]
    values = [
        state.allocated,
        state.cached,
        state.inactive_split_bytes,
        state.largest_free_block,
    ]
    colors = [COLORS["allocated"], COLORS["reserved"], COLORS["inactive_split"], "#17becf"]
    fig = go.Figure(
        go.Bar(
            x=names,
            y=[v / MiB for v in values],
            marker_color=colors,
            text=[format_size(v) for v in values],
            textposition="auto",
            hovertemplate="%{x}: %{text}<extra></extra>",
        )
    )
    fig.update_layout(height=300, yaxis_title="MiB", margin={"t": 20})
    return fig


def fragmentation_ratio(state: MemoryState | FragmentationBars) -> float:
    """1 - largest free block / reserved-but-unallocated (0 = one piece, ~1 = many crumbs)."""
    if state.cached <= 0:
        return 0.0
    return 1.0 - min(state.largest_free_block, state.cached) / state.cached


# ------------------------------------------------------------- the figures in words (alt, captions)
def live_chart_alt(current: MemoryState, window_s: float) -> T:
    """The live chart's alt text: ``current``'s numbers over the last ``window_s`` seconds."""
    return T(
        "Live memory of {device}: allocated {allocated} and reserved {reserved} over the "
        "last {window} seconds, with a band for the memory the device uses outside "
        "PyTorch's cache.",
        device=current.label,
        allocated=format_size(current.allocated),
        reserved=format_size(current.reserved),
        window=window_s,
    )


def segment_map_alt(n_segments: int) -> T:
    """The segment map's alt text."""
    return T(
        "Segment map: {n} segment(s), each a row of its blocks, coloured allocated, "
        "inactive split or free whole segment.",
        n=n_segments,
    )


def segment_map_caption(n_segments: int, *, simulated: bool) -> T:
    """What the segment map's colours mean, naming where its segments come from."""
    template = (
        N_(
            "{n} segment(s) from the simulator's snapshot(). Orange pieces are cached but "
            "cannot be returned: their segment still holds a tensor. Green segments are "
            "entirely free; empty_cache() gives them back."
        )
        if simulated
        else N_(
            "{n} segment(s) from torch.cuda.memory_snapshot(). Orange pieces are cached but "
            "cannot be returned: their segment still holds a tensor. Green segments are "
            "entirely free; empty_cache() gives them back."
        )
    )
    return T(template, n=n_segments)


def fragmentation_alt(bars: FragmentationBars) -> T:
    """The fragmentation chart's alt text: the four numbers it draws."""
    return T(
        "Bars: allocated {allocated}, reserved but unallocated {cached}, inactive split "
        "{inactive}, largest free block {largest}.",
        allocated=format_size(bars.allocated),
        cached=format_size(bars.cached),
        inactive=format_size(bars.inactive_split_bytes),
        largest=format_size(bars.largest_free_block),
    )


def fragmentation_caption(bars: MemoryState | FragmentationBars) -> T:
    """Why a request larger than the largest free block needs a new segment, with the numbers.

    >>> caption = fragmentation_caption(FragmentationBars(0, 20 * MiB, 20 * MiB, 4 * MiB))
    >>> caption.endswith("although 20.00 MiB is free in the cache (fragmentation 80%).")
    True
    """
    return T(
        "Reserved but unallocated: **{cached}**; the largest free block is **{largest}**, "
        "so a request larger than that needs a new segment although {cached} is free in "
        "the cache (fragmentation {ratio:.0%}).",
        cached=format_size(bars.cached),
        largest=format_size(bars.largest_free_block),
        ratio=fragmentation_ratio(bars),
    )
