"""Plotly figures for the memory page: the live chart, the segment map and fragmentation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.allocator_sim import GiB, MiB, format_size
from core.memory_backends import MemoryState

BAND_LABEL = "used by the device but not reserved by PyTorch (CUDA context, other processes)"
COLORS = {
    "allocated": "#1f77b4",
    "inactive_split": "#ff7f0e",
    "free_segment": "#2ca02c",
    "reserved": "#9467bd",
    "device": "#7f7f7f",
}
STATE_NAMES = {
    "allocated": "allocated (a live tensor)",
    "inactive_split": "inactive split (cached, pins its segment)",
    "free_segment": "free whole segment (empty_cache releases it)",
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


def live_chart(points: list[LivePoint], window_s: float) -> go.Figure:
    """Allocated and reserved per device over the last ``window_s`` seconds, scaled to what the
    session reserved; the memory the device uses outside PyTorch's cache (CUDA context, other
    processes: :data:`BAND_LABEL`) is a separate grey band on top, labelled with its size, so a
    512 MiB context does not flatten a 2 MiB segment to the axis."""
    devices = list(dict.fromkeys(p.device for p in points)) or ["(no samples yet)"]
    several = len(devices) > 1
    fig = make_subplots(
        rows=len(devices),
        cols=1,
        shared_xaxes=True,
        subplot_titles=devices if several else None,
        vertical_spacing=0.12 if several else 0.02,
    )
    now = max((p.t for p in points), default=0.0)
    for row, device in enumerate(devices, start=1):
        pts = [p for p in points if p.device == device and p.t >= now - window_s]
        x = [p.t - now for p in pts]
        totals = [p.device_total for p in pts if p.device_total]
        total = totals[-1] if totals else None
        peak = max([max(p.reserved, p.allocated) for p in pts] or [0])
        near_full = total is not None and peak > total / 2
        unit, scale = axis_unit(total if near_full and total else peak)

        def line(name, values, color, row=row, x=x, scale=scale, first=row == 1, **kw):
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=[v / scale for v in values],
                    customdata=[format_size(v) for v in values],
                    name=name,
                    legendgroup=name,
                    showlegend=first,
                    line={"color": color, "width": 3},
                    mode="lines+markers" if len(x) < 3 else "lines",
                    hovertemplate="%{customdata}<extra>" + name + "</extra>",
                    **kw,
                ),
                row=row,
                col=1,
            )

        line("allocated (tensors)", [p.allocated for p in pts], COLORS["allocated"])
        line("reserved (PyTorch cache)", [p.reserved for p in pts], COLORS["reserved"])
        if near_full and total:
            line("device total", [total] * len(x), "#d62728", line_dash="dash")
        top = (total if near_full and total else peak) / scale / DATA_TOP if peak else 1.0
        fig.update_yaxes(
            title_text=unit + (f" (device {format_size(total)})" if total else ""),
            range=[0, top],
            row=row,
            col=1,
        )
        outside = [p.device_used - p.reserved for p in pts if p.device_used is not None]
        if outside:
            refs = {"xref": "x domain", "yref": "y domain", "row": row, "col": 1}
            fig.add_shape(
                type="rect",
                x0=0,
                x1=1,
                y0=BAND_BOTTOM,
                y1=1,
                fillcolor="rgba(127,127,127,0.3)",
                line={"width": 0},
                **refs,
            )
            fig.add_annotation(
                x=0.5,
                y=(BAND_BOTTOM + 1) / 2,
                text=f"<b>outside PyTorch's cache: {format_size(max(outside[-1], 0))}</b>"
                "<br>CUDA context, other processes (not to scale)",
                showarrow=False,
                yanchor="middle",
                font={"color": "#111111"},
                **refs,
            )
    fig.update_xaxes(title_text="seconds (0 = now)", row=len(devices), col=1)
    fig.update_layout(
        height=360 * len(devices) + 60,
        legend={
            "orientation": "h",
            "y": 1.0 + (0.08 if several else 0.02),
            "yanchor": "bottom",
            "x": 0,
            "xanchor": "left",
        },
        margin={"t": 70 if several else 40, "b": 10, "l": 10, "r": 10},
    )
    return fig


def _block_kind(block: dict[str, Any], n_blocks: int) -> str:
    if block["state"] != "inactive":
        return "allocated"
    return "inactive_split" if n_blocks > 1 else "free_segment"


def segment_map(snapshot: list[dict[str, Any]]) -> go.Figure:
    """One row per segment; each block a bar piece as a share of its segment, coloured by
    allocated / inactive split / free whole segment, hover showing the sizes. A live block is
    drawn at least ``MIN_VISIBLE_PCT`` wide so a tiny tensor pinning a segment stays visible."""
    rows: dict[str, dict[str, list]] = {
        k: {"x": [], "base": [], "y": [], "text": []} for k in STATE_NAMES
    }
    labels = []
    for i, seg in enumerate(snapshot):
        label = f"#{i} {seg['segment_type']} {format_size(seg['total_size'])}"
        labels.append(label)
        offset = 0
        for block in seg["blocks"]:
            kind = _block_kind(block, len(seg["blocks"]))
            share = 100.0 * block["size"] / seg["total_size"]
            base = 100.0 * offset / seg["total_size"]
            if kind == "allocated" and share < MIN_VISIBLE_PCT:
                # a 512 B tensor in a 2 MiB segment is 0.02 % wide: widen it so it shows
                share = MIN_VISIBLE_PCT
                base = min(base, 100.0 - share)
            entry = rows[kind]
            entry["x"].append(share)
            entry["base"].append(base)
            entry["y"].append(label)
            entry["text"].append(
                f"{STATE_NAMES[kind]}<br>block {format_size(block['size'])}"
                f" (requested {format_size(block.get('requested_size', 0))})"
                f"<br>offset {format_size(offset)} in a {format_size(seg['total_size'])} segment"
            )
            offset += block["size"]
    fig = go.Figure()
    # overlay draws later traces on top: live blocks last, so cached neighbours never hide them
    for kind in ("inactive_split", "free_segment", "allocated"):
        entry = rows[kind]
        fig.add_trace(
            go.Bar(
                x=entry["x"] or [0],
                base=entry["base"] or [0],
                y=entry["y"] or [labels[0] if labels else "no segments"],
                orientation="h",
                name=STATE_NAMES[kind],
                marker={"color": COLORS[kind], "line": {"color": "white", "width": 1}},
                hovertext=entry["text"] or [""],
                hoverinfo="text",
                legendrank=list(STATE_NAMES).index(kind) + 1,
            )
        )
    fig.update_layout(
        barmode="overlay",
        height=150 + 36 * max(len(labels), 1),
        xaxis={"title": "share of the segment (%)", "range": [0, 100]},
        yaxis={"autorange": "reversed", "categoryorder": "array", "categoryarray": labels},
        legend={"orientation": "h", "y": 1.0, "yanchor": "bottom"},
        margin={"t": 60},
    )
    if not snapshot:
        fig.add_annotation(text="no segments: nothing reserved", showarrow=False, x=50, y=0)
    return fig


def fragmentation_figure(state: MemoryState) -> go.Figure:
    """Reserved but unallocated memory, the part pinned in split segments, and the largest free
    block: when the largest block is much smaller than the free total, memory is fragmented."""
    names = [
        "allocated",
        "reserved but unallocated",
        "of which inactive split",
        "largest free block",
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


def fragmentation_ratio(state: MemoryState) -> float:
    """1 - largest free block / reserved-but-unallocated (0 = one piece, ~1 = many crumbs)."""
    if state.cached <= 0:
        return 0.0
    return 1.0 - min(state.largest_free_block, state.cached) / state.cached
