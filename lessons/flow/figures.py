"""Figures of the Flow page: flow colour images on one shared scale, heat maps and bar charts.

Builders are pure: data in, a ``go.Figure`` out. Their titles and labels are catalog messages,
translated by the ``translate`` a page passes (``ui.i18n.translator()``; the default leaves the
English). Figures are built from go objects and one layout dict: plotly.express and chained
``update_*`` calls cost 30-50 ms a figure in property validation, a visible share of every rerun.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from core.figure_style import png_data_uri
from core.text import N_
from lessons.flow.fill import FlowCase, MethodResult
from lessons.flow.gradual_mean import FillResult, scale_means, window_sizes

#: A function that translates a catalog message (a page passes ``ui.i18n.translator()``).
Translate = Callable[[str], str]

PANEL_MAX_SIDE = 320  # the main figure's panels are drawn ~300 px wide, on a projector too
HEAT_MAX_SIDE = 640  # a full 720x1280 float heat map is ~12 MB of plotly JSON per chart and rerun
#: Mask panel colours: valid flow pale blue, holes near-black, so a mask that is all holes or
#: all valid (a border band, a full hole fraction) still shows against the white page.
MASK_VALID_RGB = (198, 219, 239)
MASK_HOLE_RGB = (17, 17, 17)
FRAME = dict(showline=True, mirror=True, linecolor="#555555", linewidth=1)
MARGIN = dict(l=0, r=0, t=30, b=0)
#: A case's reference, as a panel title (capitalised) and inside a sentence.
REFERENCE_TITLES = {"ground truth": N_("Ground truth"), "pre-mask flow": N_("Pre-mask flow")}


def _english(message: str) -> str:
    return message


def flow_to_rgb(*flows: np.ndarray) -> list[np.ndarray]:
    """Colour-wheel pictures of flows with ONE shared scale (``torchvision.utils.flow_to_image``).

    Args:
        flows: (H, W, 2) float arrays of the same shape; NaN marks a hole.

    Returns:
        One (H, W, 3) uint8 RGB image per flow; holes are drawn black.
    """
    from torchvision.utils import flow_to_image

    if not flows:
        return []
    shape = flows[0].shape
    for f in flows:
        if f.shape != shape or f.ndim != 3 or f.shape[2] != 2:
            raise ValueError(f"flows must all be (H, W, 2) of one shape, got {f.shape}")
    batch = np.stack([np.nan_to_num(np.asarray(f, np.float32), nan=0.0) for f in flows])
    # one call on the whole batch: flow_to_image normalises by the batch's largest vector
    imgs = flow_to_image(torch.from_numpy(batch).permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
    out = imgs.numpy().copy()
    for i, f in enumerate(flows):
        out[i][np.isnan(f).any(axis=2)] = 0
    return list(out)


def panel_step(img: np.ndarray) -> int:
    """Stride that keeps an (H, W, ...) panel at most :data:`PANEL_MAX_SIDE` px a side."""
    return -(-max(img.shape[:2]) // PANEL_MAX_SIDE)


def panel(img: np.ndarray) -> np.ndarray:
    """An (H, W, 3) uint8 panel at most PANEL_MAX_SIDE px a side (it is drawn ~300 px wide)."""
    step = panel_step(img)
    return np.ascontiguousarray(img[::step, ::step])


def heat_step(shape: tuple[int, ...]) -> int:
    """Stride that keeps a heat map at most HEAT_MAX_SIDE pixels a side (1 = full resolution)."""
    return -(-max(shape[:2]) // HEAT_MAX_SIDE)


def mask_rgb(mask: np.ndarray) -> np.ndarray:
    """(H, W) bool hole mask -> (H, W, 3) uint8: holes MASK_HOLE_RGB, valid MASK_VALID_RGB."""
    return np.where(mask[..., None], np.array(MASK_HOLE_RGB, np.uint8),
                    np.array(MASK_VALID_RGB, np.uint8))


def flow_rgbs(case: FlowCase, main: MethodResult) -> list[np.ndarray]:
    """Colour images of the flow with holes, its fill (and the reference), on one shared scale:
    (H, W, 3) uint8 each."""
    pictures = [case.flow, main.filled]
    if case.reference is not None:
        pictures.append(case.reference)
    return flow_to_rgb(*pictures)


def reference_title(kind: str, translate: Translate = _english) -> str:
    """``"Ground truth"`` / ``"Pre-mask flow"`` for a case's ``reference_kind``, translated."""
    if kind in REFERENCE_TITLES:
        return translate(REFERENCE_TITLES[kind])
    return translate(kind).capitalize()


def panels_figure(panels: list[tuple[np.ndarray, str]]) -> go.Figure:
    """(H, W, 3) uint8 pictures with their titles side by side (two rows of two for four)."""
    cols = 2 if len(panels) == 4 else len(panels)
    rows = -(-len(panels) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[t for _img, t in panels],
                        horizontal_spacing=0.03, vertical_spacing=0.09)
    for i, (img, _title) in enumerate(panels):
        fig.add_trace(go.Image(source=png_data_uri(panel(img)), hoverinfo="skip"),
                      row=i // cols + 1, col=i % cols + 1)
    # no axis frames here: Plotly draws them around each subplot's domain, not the image, so
    # they read as a grid; the mask's pale-blue valid pixels keep it visible on white instead
    axes = dict(showticklabels=False, ticks="", showgrid=False, zeroline=False)
    fig.update_xaxes(**axes)
    fig.update_yaxes(**axes)
    fig.update_layout(margin=MARGIN, height=205 * rows + 40, font=dict(color="#111111"))
    return fig


def case_figure(case: FlowCase, main: MethodResult, translate: Translate = _english) -> go.Figure:
    """The lesson's picture: the flow with holes, the mask, the fill ``main`` (and the
    reference), on one colour scale."""
    rgb = flow_rgbs(case, main)
    panels = [(rgb[0], translate(N_("Flow with holes (black)"))),
              (mask_rgb(case.mask), translate(N_("Holes (dark)"))),
              (rgb[1], translate(N_("Filled: gradual mean")))]
    if case.reference is not None:
        panels.append((rgb[2], reference_title(case.reference_kind, translate)))
    return panels_figure(panels)


def picture_axes(height: int, width: int) -> dict[str, object]:
    """Layout for one (height, width)-pixel picture: the frame hugs the pixels (no padding, no
    grid or ticks over them), square pixels, row 0 on top."""
    bare = dict(showticklabels=False, ticks="", showgrid=False, zeroline=False,
                constrain="domain", **FRAME)
    return dict(xaxis=dict(range=[-0.5, width - 0.5], **bare),
                yaxis=dict(range=[height - 0.5, -0.5], scaleanchor="x", **bare))


def image_figure(img: np.ndarray, title: str) -> go.Figure:
    """One (H, W, 3) uint8 picture, thinned to :func:`panel_step`, on axes in full-size pixels."""
    step = panel_step(img)
    return go.Figure(
        go.Image(source=png_data_uri(panel(img)), dx=step, dy=step, x0=(step - 1) / 2,
                 y0=(step - 1) / 2, hoverinfo="skip"),
        layout=dict(title=title, margin=MARGIN, height=300, **picture_axes(*img.shape[:2])),
    )


def heat_figure(z: np.ndarray, title: str, colorbar: str, *, zmin: float | None = None,
                zmax: float | None = None) -> go.Figure:
    """An (H, W) float map, thinned to :func:`heat_step`, on axes in full-size pixels."""
    step = heat_step(z.shape)
    z = np.ascontiguousarray(z[::step, ::step], dtype=np.float32)
    heat = go.Heatmap(
        z=z, x0=(step - 1) / 2, dx=step, y0=(step - 1) / 2, dy=step, zmin=zmin, zmax=zmax,
        colorscale="viridis", colorbar=dict(title=dict(text=colorbar)),
        zsmooth="fast",  # one bitmap instead of a fillRect per cell: same look, far less work
        hovertemplate="x=%{x}, y=%{y}<br>%{z:.3g}<extra></extra>",
    )
    full_h, full_w = z.shape[0] * step, z.shape[1] * step
    return go.Figure(heat, layout=dict(title=title, margin=MARGIN, height=300,
                                       **picture_axes(full_h, full_w)))


def reference_figure(case: FlowCase, main: MethodResult,
                     translate: Translate = _english) -> go.Figure:
    """The reference flow alone, coloured on the main picture's scale (which the fill sets)."""
    return image_figure(flow_rgbs(case, main)[2], translate(case.reference_kind))


def scales_map_figure(case: FlowCase, fill: FillResult, max_window: int,
                      translate: Translate = _english) -> go.Figure:
    """How many window sizes had a valid sample, at each hole of ``case``."""
    used = fill.scales_used[..., 0].astype(float)
    used[~case.mask] = np.nan
    return heat_figure(used, translate(N_("Scales that contributed (holes)")),
                       translate(N_("scales")), zmin=0, zmax=len(window_sizes(max_window)))


def scales_histogram(case: FlowCase, fill: FillResult, scales: int) -> tuple[int, ...]:
    """Hole pixels by how many of the ``scales`` window sizes contributed (0 to ``scales``)."""
    return tuple(int(n) for n in np.bincount(fill.scales_used[..., 0][case.mask],
                                             minlength=scales + 1))


def scales_hist_figure(hist: tuple[int, ...], translate: Translate = _english) -> go.Figure:
    """Bar chart of :func:`scales_histogram`."""
    return go.Figure(
        go.Bar(x=[str(i) for i in range(len(hist))], y=list(hist),
               hovertemplate=translate(N_("%{x} scales: %{y:,} hole pixels<extra></extra>"))),
        layout=dict(title=translate(N_("Hole pixels by contributing scales")), height=300,
                    margin=MARGIN, xaxis_title=translate(N_("scales with a valid sample")),
                    yaxis_title=translate(N_("hole pixels"))),
    )


def per_scale_rgbs(case: FlowCase, filled: np.ndarray, max_window: int) -> list[np.ndarray]:
    """Each window size's masked mean of ``case.flow`` (:func:`scale_means`) at the holes as an
    (H, W, 3) uint8 colour image, black where that window saw no valid sample, on one colour
    scale with the (H, W, 2) fill ``filled``; in window order."""
    means = scale_means(case.flow, max_window)
    maps = []
    for k in window_sizes(max_window):
        holes_only = means[k].copy()
        holes_only[~case.mask] = np.nan
        maps.append(holes_only)
    return flow_to_rgb(*maps, filled)[:-1]


def scale_figure(rgb: np.ndarray, k: int, translate: Translate = _english) -> go.Figure:
    """The ``k`` x ``k`` window's masked mean at the holes, from :func:`per_scale_rgbs`."""
    return image_figure(rgb, translate(N_("window {k}x{k}")).format(k=k))


def epe_figure(case: FlowCase, row: MethodResult, translate: Translate = _english) -> go.Figure:
    """Endpoint error of the method of ``row`` on the holes of ``case``, in pixels."""
    epe = np.where(case.mask, row.epe, np.nan)
    return heat_figure(epe, translate(N_("Endpoint error vs {reference}")).format(
        reference=translate(case.reference_kind)), "px")


def timing_figure(times: tuple[tuple[str, float], ...],
                  translate: Translate = _english) -> go.Figure:
    """Each method's time in ms (``times``: (method name, ms) pairs), on a log scale."""
    return go.Figure(
        go.Bar(x=[ms for _name, ms in times], y=[translate(name) for name, _ms in times],
               orientation="h",
               hovertemplate="%{y}: %{x:.3g} ms<extra></extra>"),
        # dtick=1: label the powers of ten only (no small 2 and 5 labels)
        layout=dict(title=translate(N_("Time per method")), height=300, margin=MARGIN,
                    xaxis=dict(type="log", dtick=1, title=translate(N_("ms (log scale)")))),
    )
