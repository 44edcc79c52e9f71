"""What the output size does: it is OpenCV's ``dsize``, a canvas over the destination plane.

Because theta is recomputed from the output size, output pixel ``(x, y)`` reads the input at
``M^-1 (x, y)`` whatever the size: shrinking keeps the top-left window, enlarging adds room on
the right and at the bottom. :func:`canvas_check` measures it on the current warp and
:func:`output_size_caption_parts` says it with the live numbers. The page's preset sizes are
here too (:data:`SIZE_MODES`, :func:`preset_size`).

Nothing here imports Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.text import N_, T
from lessons.warp.affine import warp_affine
from lessons.warp.validation import validate_affine, validate_dsize, validate_image

#: The output-size choices, as the ``warp.size_mode`` control offers them (its URL values).
SIZE_MODES = (N_("Same as input"), N_("Half (shrink)"), N_("Double (enlarge)"), N_("Custom"))
#: How each preset scales the input's size.
SIZE_FACTORS: dict[str, float] = {"Same as input": 1.0, "Half (shrink)": 0.5,
                                  "Double (enlarge)": 2.0}  # fmt: skip


def preset_size(size_mode: str, src_w: int, src_h: int) -> tuple[int, int]:
    """The output ``(width, height)`` a preset size gives for a ``src_w`` x ``src_h`` input,
    rounded, at least 1 pixel a side (:func:`validate_dsize` then says if that is too small).

    >>> preset_size("Half (shrink)", 451, 300)
    (226, 150)

    Raises:
        ValueError: ``size_mode`` is not one of :data:`SIZE_FACTORS` (e.g. ``"Custom"``).
    """
    if size_mode not in SIZE_FACTORS:
        raise ValueError(
            f"size mode must be one of {', '.join(SIZE_FACTORS)}, got {size_mode!r}"
        )
    factor = SIZE_FACTORS[size_mode]
    return max(1, round(src_w * factor)), max(1, round(src_h * factor))


@dataclass(frozen=True)
class CanvasCheck:
    """Whether the output size acts as OpenCV's ``dsize`` canvas, measured on one warp.

    Attributes:
        dsize: the output ``(width, height)``; src_size: the input's ``(width, height)``.
        window: ``(width, height)`` of the top-left window the two sizes share.
        max_abs_vs_src_size: max ``|warp(dsize) - warp(src_size)|`` over that window (0 when
            changing the size only crops or extends the canvas).
        identity: ``M`` is the identity.
        max_abs_vs_input_crop: for the identity, max ``|warp(dsize) - img|`` over the window
            (0 when the output is the input's top-left crop); ``None`` otherwise.
    """

    dsize: tuple[int, int]
    src_size: tuple[int, int]
    window: tuple[int, int]
    max_abs_vs_src_size: float
    identity: bool
    max_abs_vs_input_crop: float | None


def canvas_check(
    img: np.ndarray,
    M: np.ndarray | Sequence[Sequence[float]],
    dsize: Sequence[int],
    *,
    align_corners: bool = False,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    warped: np.ndarray | None = None,
) -> CanvasCheck:
    """Compare the warp at ``dsize`` with the warp at the input's own size, on the top-left
    window they share.

    Because theta is recomputed from the output size (``N_dst``), output pixel ``(x, y)`` reads
    the input at ``M^-1 (x, y)`` whatever the size, exactly like ``cv2.warpAffine``: the size
    only crops or extends the canvas. This measures it (CPU, one extra warp).

    Args:
        img: (H, W, C) or (H, W) uint8/float. M: (2, 3). dsize: ``(width, height)``.
        align_corners, mode, padding_mode: as in :func:`warp_affine`.
        warped: the warp at ``dsize`` if already computed (saves one grid_sample).

    Raises:
        ValueError: as :func:`warp_affine`, or ``warped`` of the wrong size.
    """
    img3 = validate_image(img)
    m = validate_affine(M)
    w, h = validate_dsize(dsize)
    sh, sw = img3.shape[:2]
    options = {"align_corners": align_corners, "mode": mode, "padding_mode": padding_mode}
    out = warp_affine(img3, m, (w, h), **options) if warped is None else warped
    if out.shape[:2] != (h, w):
        raise ValueError(f"warped must be the {w}x{h} output, got shape {out.shape}")
    same = warp_affine(img3, m, (sw, sh), **options) if (w, h) != (sw, sh) else out
    ww, wh = min(w, sw), min(h, sh)

    def max_abs(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.abs(a[:wh, :ww].astype(np.float64) - b[:wh, :ww].astype(np.float64)).max())

    identity = bool(np.array_equal(m, np.eye(2, 3)))
    return CanvasCheck(
        dsize=(w, h),
        src_size=(sw, sh),
        window=(ww, wh),
        max_abs_vs_src_size=max_abs(out, same),
        identity=identity,
        max_abs_vs_input_crop=max_abs(out, img3) if identity else None,
    )


def output_size_caption_parts(check: CanvasCheck, channels: int = 3) -> list[T]:
    """The sentences of :func:`output_size_caption`, each one catalog message (the page
    translates each and joins them)."""
    w, h = check.dsize
    sw, sh = check.src_size
    ww, wh = check.window
    parts = [
        T(
            "`F.affine_grid(theta, size=(1, {channels}, {h}, {w}))`: **size is the output "
            "grid's resolution**, {h}×{w} sample points. Because theta is recomputed from this "
            "size (N_dst in θ = N_src·M⁻¹·N_dst⁻¹), output pixel (x, y) still reads the input at "
            "M⁻¹·(x, y), exactly where cv2.warpAffine reads it: the output size works as "
            "OpenCV's `dsize = (width, height)`, a canvas over the destination plane. Shrinking "
            "keeps its top-left window, enlarging adds room on the right and at the bottom; how "
            "densely the input is sampled is set by M alone.",
            channels=channels,
            h=h,
            w=w,
        )
    ]
    if check.dsize != check.src_size:
        shrunk = (w, h) == (ww, wh)
        exact = check.max_abs_vs_src_size == 0
        values = {"w": w, "h": h, "ww": ww, "wh": wh, "sw": sw, "sh": sh}
        if shrunk and exact:
            parts.append(
                T(
                    "Checked now: this {w}×{h} output is exactly the top-left {w}×{h} window "
                    "of the warp at the input's size {sw}×{sh}.",
                    **values,
                )
            )
        elif shrunk:
            parts.append(
                T(
                    "Checked now: this {w}×{h} output is within {diff:.3g} (float32 rounding "
                    "of the sample positions) of the top-left {w}×{h} window of the warp at "
                    "the input's size {sw}×{sh}.",
                    diff=check.max_abs_vs_src_size,
                    **values,
                )
            )
        elif exact:
            parts.append(
                T(
                    "Checked now: the top-left {ww}×{wh} window of this {w}×{h} output is "
                    "exactly the same window of the warp at the input's size {sw}×{sh}.",
                    **values,
                )
            )
        else:
            parts.append(
                T(
                    "Checked now: the top-left {ww}×{wh} window of this {w}×{h} output is "
                    "within {diff:.3g} (float32 rounding of the sample positions) of the same "
                    "window of the warp at the input's size {sw}×{sh}.",
                    diff=check.max_abs_vs_src_size,
                    **values,
                )
            )
        crop = check.max_abs_vs_input_crop
        if crop is not None:
            if crop == 0 and shrunk:
                template = N_(
                    "With the identity M, that window is exactly the input's top-left crop "
                    "`img[:{wh}, :{ww}]`, not a resampled copy of the whole image."
                )
            elif crop == 0:
                template = N_(
                    "With the identity M, that window is exactly the input's top-left crop "
                    "`img[:{wh}, :{ww}]`."
                )
            elif shrunk:
                template = N_(
                    "With the identity M, that window is within {crop:.3g} of the input's "
                    "top-left crop `img[:{wh}, :{ww}]`, not a resampled copy of the whole image."
                )
            else:
                template = N_(
                    "With the identity M, that window is within {crop:.3g} of the input's "
                    "top-left crop `img[:{wh}, :{ww}]`."
                )
            parts.append(T(template, crop=crop, wh=wh, ww=ww))
    return parts


def output_size_caption(check: CanvasCheck, channels: int = 3) -> str:
    """The warp page's caption on the output size, with the live numbers of ``check``."""
    return " ".join(output_size_caption_parts(check, channels))
