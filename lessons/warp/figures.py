"""The warp page's figures: the difference map, a row profile, the sampling grid, a close-up.

Builders take the :class:`~lessons.warp.affine.WarpComparison` the page computed (and the input
image where they draw it) and return a Plotly figure; the page caches them (``shared_figure``).
Titles and legends are catalog messages, translated by ``translate`` (the page passes
``ui.i18n.translator()``; the default leaves the English). The image previews the figures draw
are here too: a max-pooled difference map (no error hides in it), a shrunk input, a crop.

Nothing here imports Streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import cv2
import numpy as np
import plotly.colors
import plotly.graph_objects as go

from core.figure_style import png_data_uri
from core.text import N_
from lessons.warp.affine import WarpComparison
from lessons.warp.validation import validate_image

#: A function that translates a catalog message; the default leaves the English.
Translate = Callable[[str], str]

# The difference map is about 300 px wide beside the two warps: a finer preview (max-pooled, so
# no error hides) would only cost transfer time on every control change.
HEAT_MAX_SIDE = 320
HEAT_PLOT_PX = 270  # about the heat map's plot width (its column less the colour bar)
# Streamlit's browser side rewrites "#000001" ... "#000010" in every plotly spec (its theme
# placeholders), even with theme=None: Inferno's first colour "#000004" would turn lavender, so
# zero error would look like a big one. Same colour, written so nothing rewrites it.
DIFF_COLORSCALE = [
    [i / (len(plotly.colors.sequential.Inferno) - 1), "rgb(0, 0, 4)" if c == "#000004" else c]
    for i, c in enumerate(plotly.colors.sequential.Inferno)
]


def _english(message: str) -> str:
    return message


def heat_height(dsize: tuple[int, int]) -> int:
    """Chart height (px) at which the difference map fills its axes for a ``(w, h)`` output.

    >>> heat_height((451, 300))
    230
    """
    w, h = dsize
    return int(min(460, max(120, round(HEAT_PLOT_PX * h / w) + 50)))


def max_pool_preview(diff: np.ndarray, max_side: int = 400) -> tuple[np.ndarray, int]:
    """Shrink a (H, W) error map by an integer factor, keeping each block's MAX (no hiding).

    Returns:
        ``(preview, factor)``: preview is (ceil(H/f), ceil(W/f)) float32 and pixel (i, j) of it
        covers rows ``i*f .. i*f+f-1`` and columns ``j*f .. j*f+f-1`` of ``diff``.
    """
    if diff.ndim != 2:
        raise ValueError(f"expected a (H, W) map, got shape {diff.shape}")
    if max_side < 1:
        raise ValueError(f"max_side must be positive, got {max_side}")
    h, w = diff.shape
    f = max(1, math.ceil(max(h, w) / max_side))
    if f == 1:
        return diff.astype(np.float32), 1
    ph, pw = math.ceil(h / f) * f, math.ceil(w / f) * f
    padded = np.full((ph, pw), -np.inf, dtype=np.float64)
    padded[:h, :w] = diff
    pooled = padded.reshape(ph // f, f, pw // f, f).max(axis=(1, 3))
    return pooled.astype(np.float32), f


def image_preview(img: np.ndarray, max_side: int = 640) -> tuple[np.ndarray, float, float]:
    """Shrink an image (area averaging) so its longest side is at most ``max_side``, for plots.

    Returns:
        ``(preview, sx, sy)``: preview is (h, w, C) of the input dtype; one preview pixel spans
        ``sx`` x ``sy`` source pixels, so preview pixel (i, j) is centred on source coordinate
        ``(j*sx + (sx-1)/2, i*sy + (sy-1)/2)``.
    """
    img3 = validate_image(img)
    h, w = img3.shape[:2]
    if max(h, w) <= max_side:
        return img3, 1.0, 1.0
    scale = max_side / max(h, w)
    pw, ph = max(1, round(w * scale)), max(1, round(h * scale))
    small = cv2.resize(img3, (pw, ph), interpolation=cv2.INTER_AREA)
    return small.reshape(ph, pw, img3.shape[2]), w / pw, h / ph


def crop_around(
    img: np.ndarray, xs: np.ndarray, ys: np.ndarray, margin: int = 1
) -> tuple[np.ndarray, int, int] | None:
    """The part of ``img`` (H, W, C) covering points ``(xs, ys)`` plus ``margin`` pixels.

    Returns:
        ``(crop, x0, y0)`` with crop = img[y0:y1, x0:x1], or None when no pixel is covered.
    """
    h, w = img.shape[:2]
    x0 = max(0, math.floor(float(np.min(xs))) - margin)
    x1 = min(w, math.ceil(float(np.max(xs))) + margin + 1)
    y0 = max(0, math.floor(float(np.min(ys))) - margin)
    y1 = min(h, math.ceil(float(np.max(ys))) + margin + 1)
    if x0 >= x1 or y0 >= y1:
        return None
    return img[y0:y1, x0:x1], x0, y0


def diff_figure(result: WarpComparison, translate: Translate = _english) -> go.Figure:
    """The |grid_sample − cv2| heat map of ``result.difference`` ((H_out, W_out)), max-pooled
    to :data:`HEAT_MAX_SIDE` so no error hides in the preview."""
    diff_preview, pool = max_pool_preview(result.difference, max_side=HEAT_MAX_SIDE)
    heat = go.Figure(
        go.Heatmap(
            z=diff_preview,
            x0=(pool - 1) / 2,
            dx=pool,
            y0=(pool - 1) / 2,
            dy=pool,
            colorscale=DIFF_COLORSCALE,
            zmin=0,
            zmax=max(1.0, float(diff_preview.max())),
            colorbar={"title": {"text": "|Δ|"}, "thickness": 12},
            hovertemplate="x=%{x}, y=%{y}<br>|Δ| = %{z:.3g}<extra></extra>",
            zsmooth="fast",  # one bitmap instead of a fillRect per cell: same look
        )
    )
    # constrain="domain": the axes shrink to the picture instead of framing it in white.
    heat.update_yaxes(
        autorange="reversed", scaleanchor="x", constrain="domain", showticklabels=False
    )
    heat.update_xaxes(constrain="domain", showticklabels=False)
    h, w = result.difference.shape
    heat.update_layout(
        title=translate(N_("|grid_sample − cv2| (max of {pool}×{pool})")).format(pool=pool)
        if pool > 1
        else "|grid_sample − cv2|",
        margin={"l": 0, "r": 0, "t": 40, "b": 0},
        height=heat_height((w, h)),
    )
    return heat


def profile_figure(result: WarpComparison, row: int, translate: Translate = _english) -> go.Figure:
    """Output row ``row`` of both warps, mean over channels: a sideways offset is a shift."""
    profile = go.Figure()
    for name, image, style in (
        ("cv2.warpAffine", result.reference, {"color": "#1f77b4", "width": 3}),
        ("F.grid_sample", result.warped, {"color": "#ff7f0e", "width": 1.5, "dash": "dot"}),
    ):
        values = image[row].astype(np.float64).mean(axis=1)
        profile.add_trace(go.Scatter(y=values, mode="lines", name=name, line=style))
    profile.update_layout(
        title=translate(
            N_("Output row {row}, mean over channels: a sideways offset is a shift")
        ).format(row=row),
        xaxis_title=translate(N_("output x (px)")),
        yaxis_title=translate(N_("value")),
        height=280,
        margin={"l": 0, "r": 0, "t": 40, "b": 0},
    )
    return profile


def grid_figure(
    result: WarpComparison, img: np.ndarray, translate: Translate = _english
) -> go.Figure:
    """The input ``img`` ((H, W, C)) with a dot where every few output pixels read it, and the
    output frame seen from the input (dashed)."""
    grid = result.grid
    preview, sx, sy = image_preview(img)
    fig = go.Figure(
        go.Image(
            source=png_data_uri(preview),
            x0=(sx - 1) / 2,
            dx=sx,
            y0=(sy - 1) / 2,
            dy=sy,
            hoverinfo="skip",
        )
    )
    hover_template = translate(N_("output ({ox:.0f}, {oy:.0f}) ← input ({ix:.2f}, {iy:.2f})"))
    hover = [
        hover_template.format(ox=ox, oy=oy, ix=ix, iy=iy)
        for ox, oy, ix, iy in zip(grid.out_x, grid.out_y, grid.in_x, grid.in_y, strict=True)
    ]
    fig.add_trace(
        go.Scatter(
            x=grid.in_x,
            y=grid.in_y,
            mode="markers",
            marker={"size": 5, "color": grid.out_x, "colorscale": "Viridis", "line": {"width": 0}},
            name=translate(N_("grid_sample samples")),
            text=hover,
            hovertemplate="%{text}<extra></extra>",
        )
    )
    h, w = result.reference.shape[:2]
    corners = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1], [0, 0]], dtype=np.float64)
    m_inv = result.matrices.m_inv
    frame = corners @ m_inv[:2, :2].T + m_inv[:2, 2]
    fig.add_trace(
        go.Scatter(
            x=frame[:, 0],
            y=frame[:, 1],
            mode="lines",
            name=translate(N_("output frame")),
            line={"color": "white", "dash": "dash"},
            hoverinfo="skip",
        )
    )
    fig.update_layout(
        height=520,
        margin={"l": 0, "r": 0, "t": 30, "b": 0},
        legend={"orientation": "h"},
        title=translate(N_("Every {step}th output pixel, drawn where it reads the input")).format(
            step=grid.step
        ),
    )
    return fig


def zoom_figure(
    result: WarpComparison, img: np.ndarray, translate: Translate = _english
) -> go.Figure:
    """Close-up of neighbouring output pixels over ``img`` ((H, W, C)): where grid_sample reads
    (red dots with the notes' theta, green with the correct one) and where OpenCV does (rings)."""
    zoom = result.zoom
    close = go.Figure()
    crop = crop_around(img, np.r_[zoom.in_x, zoom.ref_x], np.r_[zoom.in_y, zoom.ref_y], margin=1)
    if crop is not None:
        pixels, x0, y0 = crop
        close.add_trace(go.Image(z=pixels, x0=x0, y0=y0, hoverinfo="skip", opacity=0.8))
    zoom_template = translate(
        N_(
            "output ({ox:.0f}, {oy:.0f}) ← input ({ix:.3f}, {iy:.3f}); OpenCV reads ({rx:.3f}, "
            "{ry:.3f})"
        )
    )
    zoom_hover = [
        zoom_template.format(ox=ox, oy=oy, ix=ix, iy=iy, rx=rx, ry=ry)
        for ox, oy, ix, iy, rx, ry in zip(
            zoom.out_x, zoom.out_y, zoom.in_x, zoom.in_y, zoom.ref_x, zoom.ref_y, strict=True
        )
    ]
    close.add_trace(
        go.Scatter(
            x=zoom.ref_x,
            y=zoom.ref_y,
            mode="markers",
            marker={"size": 14, "symbol": "circle-open", "color": "white", "line": {"width": 2}},
            name=translate(N_("cv2.warpAffine reads")),
            hoverinfo="skip",
        )
    )
    close.add_trace(
        go.Scatter(
            x=zoom.in_x,
            y=zoom.in_y,
            mode="markers",
            marker={"size": 7, "color": "red" if result.notes else "lime"},
            name=translate(N_("grid_sample reads")),
            text=zoom_hover,
            hovertemplate="%{text}<extra></extra>",
        )
    )
    close.update_yaxes(autorange="reversed", scaleanchor="x", dtick=1, showgrid=False)
    close.update_xaxes(dtick=1, showgrid=False)
    close.update_layout(
        height=520,
        margin={"l": 0, "r": 0, "t": 30, "b": 0},
        legend={"orientation": "h"},
        title=translate(N_("Close-up: {n} neighbouring output pixels")).format(n=zoom.out_x.size),
    )
    return close
