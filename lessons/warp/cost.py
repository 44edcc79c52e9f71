"""What one view of the warp page costs, and the part of a costly view shown at once.

The page gates a view above the server's budget behind a click (``ui.heavy``); meanwhile it
shows the view's own top-left corner, which :func:`preview_dsize` picks to fit the budget.

Nothing here imports Streamlit.
"""

from __future__ import annotations

from lessons.warp.validation import INTERPOLATIONS, MIN_SIDE

#: The page's cost of one view, CPU-seconds per output megapixel and interpolation mode: both
#: warps, their difference, the tie test and the page's images and figures (measured through
#: the page on a 2-core machine shared with other work: 1024 x 1024 took 0.5-0.8 s, 2048 x 2048
#: 4.7-5.6 s, 4096 x 4096 10-16 s). A view with the notes' theta warps twice (its own and the
#: correct one, for the comparison), which adds about a fifth.
WARP_SECONDS_PER_MPX: dict[str, float] = {"nearest": 0.9, "bilinear": 1.1, "bicubic": 1.2}
WARP_BASE_SECONDS = 0.3
WARP_NOTES_FACTOR = 1.2


def estimate_warp_seconds(out_w: int, out_h: int, mode: str = "bilinear", *,
                          notes: bool = False) -> float:
    """About how many seconds the warp page takes to show a ``out_w`` x ``out_h`` output with
    interpolation ``mode`` (and the notes' theta, which warps a second time), on a CPU like
    the 2-core one it was measured on (see :data:`WARP_SECONDS_PER_MPX`).

    >>> round(estimate_warp_seconds(451, 300), 2)
    0.45
    >>> estimate_warp_seconds(2048, 2048, "bicubic", notes=True) > 2
    True

    Raises:
        ValueError: a side below 1 pixel or an unknown ``mode``.
    """
    if mode not in WARP_SECONDS_PER_MPX:
        raise ValueError(f"interpolation must be one of {', '.join(INTERPOLATIONS)}, got {mode!r}")
    if out_w < 1 or out_h < 1:
        raise ValueError(f"the output size must be positive, got {out_w}x{out_h}")
    mpx = out_w * out_h / 1e6
    return WARP_BASE_SECONDS + WARP_SECONDS_PER_MPX[mode] * mpx * (
        WARP_NOTES_FACTOR if notes else 1.0)


def preview_dsize(dsize: tuple[int, int], mode: str = "bilinear", *, notes: bool = False,
                  seconds: float = 2.0) -> tuple[int, int]:
    """The largest top-left crop ``(w, h)`` of a ``dsize`` output that
    :func:`estimate_warp_seconds` puts within ``seconds``, halving the longer side from
    ``dsize`` down (never below :data:`MIN_SIDE`).

    A smaller dsize crops the same output (OpenCV's M maps pixels to pixels; dsize only says
    how much of the destination to compute), so the crop is the heavy view's own top-left
    corner, shown while the whole waits for a click.

    >>> preview_dsize((2048, 2048), "bicubic", notes=True)
    (1024, 1024)
    >>> preview_dsize((300, 200))
    (300, 200)

    Raises:
        ValueError: a side below 1 pixel, an unknown ``mode`` or ``seconds`` not positive.
    """
    if seconds <= 0:
        raise ValueError(f"seconds must be positive, got {seconds!r}")
    out_w, out_h = dsize
    side = max(out_w, out_h)
    while side > MIN_SIDE and estimate_warp_seconds(
        min(out_w, side), min(out_h, side), mode, notes=notes
    ) > seconds:
        side = max(MIN_SIDE, side // 2)
    return min(out_w, side), min(out_h, side)
