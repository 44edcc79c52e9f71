"""One legibility style for every Plotly figure the app shows (a projector at the back of a room).

:func:`legible` raises every text size in a figure to at least :data:`MIN_FONT_PX` (layout font,
titles, axis ticks and titles, legend, annotations such as subplot titles, and text drawn in
traces like heatmap cell values) and moves a legend that sits below the plot, where it collides
with the x-axis title, to a row above the plot area. :func:`png_data_uri` sends a picture to a
figure as one PNG instead of a JSON array of pixels. Pure: plotly and OpenCV, no Streamlit.

>>> import plotly.graph_objects as go
>>> fig = legible(go.Figure(go.Scatter(x=[0, 1], y=[1, 2])))
>>> fig.layout.font.size
14
"""

from __future__ import annotations

import base64

import cv2
import numpy as np
import plotly.graph_objects as go

#: Smallest text size, in CSS px, on any chart (the issue's projector rule).
MIN_FONT_PX = 14
#: Chart titles a step larger than the body text.
TITLE_FONT_PX = 16


_LEGIBLE_MARK = "_tp_legible"


def mark_legible(fig: go.Figure) -> go.Figure:
    """Mark ``fig`` as built with every text size at :data:`MIN_FONT_PX` or more already, so
    :func:`legible` returns it untouched. For hot paths (a live chart rebuilt every second):
    :func:`legible` sets each size through plotly's validating property API, which cost as much
    as building the figure. A builder that marks its figure must have a test comparing it with
    ``legible`` of the same spec built normally."""
    setattr(fig, _LEGIBLE_MARK, True)
    return fig


def _at_least(current, minimum: int):
    """``current`` raised to ``minimum`` (``None`` means unset); per-point sizes element-wise."""
    if isinstance(current, (list, tuple)):
        return [_at_least(size, minimum) for size in current]
    return minimum if current is None or current < minimum else current


def legible(fig: go.Figure, *, min_px: int = MIN_FONT_PX) -> go.Figure:
    """Raise every text size in ``fig`` to ``min_px`` or more, in place; return ``fig``.

    Sizes already larger are kept. A horizontal legend placed below the plot (``y < 0``) moves
    above the plot area, so it cannot overlap the x-axis title.
    """
    if min_px < 1:
        raise ValueError(f"min_px must be a positive font size, got {min_px}")
    if min_px <= MIN_FONT_PX and getattr(fig, _LEGIBLE_MARK, False):
        return fig
    layout = fig.layout
    layout.font.size = _at_least(layout.font.size, min_px)
    if layout.title.text:
        layout.title.font.size = _at_least(layout.title.font.size, max(min_px, TITLE_FONT_PX))
    for axis_name in [name for name in layout if name.startswith(("xaxis", "yaxis"))]:
        axis = layout[axis_name]
        axis.tickfont.size = _at_least(axis.tickfont.size, min_px)
        axis.title.font.size = _at_least(axis.title.font.size, min_px)
    layout.legend.font.size = _at_least(layout.legend.font.size, min_px)
    if layout.legend.orientation == "h" and layout.legend.y is not None and layout.legend.y < 0:
        layout.legend.update(y=1.02, yanchor="bottom", x=0, xanchor="left")
    for annotation in layout.annotations or ():
        annotation.font.size = _at_least(annotation.font.size, min_px)
    for trace in fig.data:
        if "textfont" in trace:
            trace.textfont.size = _at_least(trace.textfont.size, min_px)
        if "colorbar" in trace:
            trace.colorbar.tickfont.size = _at_least(trace.colorbar.tickfont.size, min_px)
    layout.hoverlabel.font.size = _at_least(layout.hoverlabel.font.size, min_px)
    return fig


def png_bytes(rgb: np.ndarray, *, fast: bool = True) -> bytes:
    """An (H, W, 3), (H, W, 1) or (H, W) uint8 picture as PNG file bytes (lossless). ``fast``:
    the fastest compression, for pictures that go to the browser once; ``False``: OpenCV's
    default, smaller, for files people download.

    For ``st.image(..., output_format="PNG")``: given an array, Streamlit encodes it again on
    every run of every session (as a JPEG unless it has alpha).

    Raises:
        ValueError: for another dtype or shape.
    """
    pixels = np.asarray(rgb)
    if pixels.ndim == 3 and pixels.shape[2] == 1:
        pixels = pixels[..., 0]
    if pixels.dtype != np.uint8 or pixels.ndim not in (2, 3) or (
        pixels.ndim == 3 and pixels.shape[2] != 3
    ):
        raise ValueError(
            f"a PNG needs an (H, W) or (H, W, 3) uint8 array, got {pixels.dtype} {pixels.shape}"
        )
    bgr = pixels if pixels.ndim == 2 else cv2.cvtColor(np.ascontiguousarray(pixels),
                                                       cv2.COLOR_RGB2BGR)
    ok, encoded = cv2.imencode(".png", bgr, [cv2.IMWRITE_PNG_COMPRESSION, 1] if fast else [])
    if not ok:  # pragma: no cover - OpenCV encodes any uint8 array of these shapes
        raise ValueError(f"OpenCV could not encode a {pixels.shape} picture as PNG")
    return encoded.tobytes()


def png_data_uri(rgb: np.ndarray) -> str:
    """An (H, W, 3), (H, W, 1) or (H, W) uint8 picture as a ``data:image/png;base64,...`` URI.

    For ``go.Image(source=...)``: Plotly sends ``go.Image(z=...)`` pixels as JSON and the
    browser paints them one by one (2.3 MB and most of a rerun's browser time for the flow
    page's four panels); a PNG is a fraction of that and the browser decodes it natively.
    Lossless, so a test can decode it back to the exact pixels.

    Raises:
        ValueError: as :func:`png_bytes`.
    """
    return "data:image/png;base64," + base64.b64encode(png_bytes(rgb)).decode("ascii")


def decode_data_uri(uri: str) -> np.ndarray:
    """Inverse of :func:`png_data_uri`: the (H, W, 3) RGB (or (H, W)) uint8 pixels."""
    prefix = "data:image/png;base64,"
    if not uri.startswith(prefix):
        raise ValueError(f"not a PNG data URI: {uri[:40]!r}")
    buf = np.frombuffer(base64.b64decode(uri[len(prefix):]), np.uint8)
    img = cv2.imdecode(buf, cv2.IMREAD_UNCHANGED)
    return img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
