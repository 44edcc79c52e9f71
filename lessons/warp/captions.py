"""The warp page's sentences that carry live numbers: the verdict under the picture, what was
compared, what the matrices and the sampling grid show.

Each function returns :class:`core.text.T` texts (the English, with their template and values);
the page translates them with ``ui.i18n.tr``. ``unit`` is the page's already translated unit of
an error (" grey levels" for uint8 images, "" for float ones).

Nothing here imports Streamlit.
"""

from __future__ import annotations

import math

import numpy as np

from core.text import N_, T
from lessons.warp.affine import TIE_PX, WarpComparison, WarpErrors
from lessons.warp.validation import MAX_OUTPUT_SIDE, MIN_SIDE


def has_interior(errors: WarpErrors) -> bool:
    """Whether the output has pixels left once ``errors.border_px`` are excluded on every side:
    an output of at most ``2 * border_px`` pixels a side has none, and its interior figures are
    NaN."""
    return not math.isnan(errors.mean_interior)


def theta_name(notes: bool) -> str:
    """How the page names the theta in use (a :class:`T` for the notes' one, to translate)."""
    return T("the notes' affine2theta") if notes else "affine_to_theta"


def verdict_sentences(
    result: WarpComparison, correct: WarpComparison, *, align_corners: bool, unit: str
) -> list[T]:
    """The verdict under the picture: with the notes' theta, how its samples are misplaced and
    how much worse it is than the ``correct`` theta (the page puts a heading before them); with
    the correct theta, how closely the two paths agree.

    Interior figures when the output has an interior (:func:`has_interior`), whole-image
    figures otherwise.
    """
    interior = has_interior(result.errors)
    e, ok = result.errors, correct.errors
    err_mean, err_max = (e.mean_interior, e.max_interior) if interior else (e.mean_whole,
                                                                             e.max_whole)
    ok_mean, ok_max = (ok.mean_interior, ok.max_interior) if interior else (ok.mean_whole,
                                                                            ok.max_whole)
    dx, dy = result.notes_shift
    shift = float(np.hypot(dx, dy))
    if not result.notes:
        template = (
            N_(
                "Correct theta: the two paths agree to {err_mean:.4f}{unit} on average and "
                "{err_max:.3g} at most inside the border. (Switch on the notes' theta to "
                "shift every sample by {shift:.3f} px with align_corners=False.)"
            )
            if interior
            else N_(
                "Correct theta: the two paths agree to {err_mean:.4f}{unit} on average and "
                "{err_max:.3g} at most over the whole image. (Switch on the notes' theta to "
                "shift every sample by {shift:.3f} px with align_corners=False.)"
            )
        )
        return [T(template, err_mean=err_mean, unit=unit, err_max=err_max, shift=shift)]
    if align_corners:
        how = T(
            "With align_corners=True its 2/W (instead of 2/(W−1)) slightly rescales the "
            "sampling about the top-left corner, so samples are misplaced by "
            "{offset:.3f} px on average (measured on the sampling grid).",
            offset=result.grid_offset_px,
        )
    else:
        how = T(
            "Every sample is misplaced by the same (dx, dy) = ({dx:+.3f}, {dy:+.3f}) px "
            "(|shift| = {shift:.3f} px; measured on the sampling grid: "
            "{offset:.3f} px).",
            dx=dx,
            dy=dy,
            shift=shift,
            offset=result.grid_offset_px,
        )
    values = {"err_mean": err_mean, "unit": unit, "ok_mean": ok_mean, "err_max": err_max,
              "ok_max": ok_max}  # fmt: skip
    if interior:
        verdict = T(
            "Interior mean error {err_mean:.3f}{unit} vs {ok_mean:.4f} with the correct "
            "theta; max {err_max:.3g} vs {ok_max:.3g}.",
            **values,
        )
    else:
        verdict = T(
            "Whole-image mean error {err_mean:.3f}{unit} vs {ok_mean:.4f} with the correct "
            "theta; max {err_max:.3g} vs {ok_max:.3g}.",
            **values,
        )
    return [how, verdict]


def comparison_caption(
    result: WarpComparison, *, mode: str, padding_mode: str, align_corners: bool
) -> T:
    """What was compared: OpenCV's flags beside grid_sample's arguments and the theta used."""
    return T(
        "Compared: cv2.warpAffine with {interpolation} and {border}, and "
        "F.grid_sample with mode={mode!r}, padding_mode={padding_mode!r}, "
        "align_corners={align_corners} and {theta_name}.",
        interpolation=result.cv2_interpolation,
        border=result.cv2_border,
        mode=mode,
        padding_mode=padding_mode,
        align_corners=align_corners,
        theta_name=theta_name(result.notes),
    )


def nearest_caption(result: WarpComparison) -> T:
    """Nearest neighbour: how many output pixels differ, and how many of them are not rounding
    ties (0 with the correct theta)."""
    return T(
        "Nearest neighbour: {differing} output pixels differ, "
        "{off_ties} of them away from a rounding tie (a sample point within "
        "{tie:g} px of k + 0.5, where OpenCV and grid_sample may round to different "
        "neighbours).",
        differing=result.differing_pixels,
        off_ties=result.differing_off_ties,
        tie=TIE_PX,
    )


def no_interior_note(dsize: tuple[int, int], border_px: int) -> T:
    """Why a ``dsize = (w, h)`` output gets whole-image figures only."""
    return T(
        "The output ({w}×{h}) has no interior once the {border} px border "
        "is excluded, so the verdict is for the whole image. Pick a larger output size "
        "for interior figures.",
        w=dsize[0],
        h=dsize[1],
        border=border_px,
    )


def normalization_caption(
    align_corners: bool, src_size: tuple[int, int], dsize: tuple[int, int]
) -> T:
    """Where −1 and 1 lie for ``align_corners``, and the sizes (``(w, h)`` each) N_src and N_dst
    use."""
    template = (
        N_(
            "align_corners=True: −1 and 1 are the centres of the corner pixels. N_src "
            "uses the input size {src_w}×{src_h}, N_dst the output size {w}×{h}."
        )
        if align_corners
        else N_(
            "align_corners=False: −1 and 1 are the outer edges of the image, half a "
            "pixel beyond the corner pixel centres. N_src uses the input size "
            "{src_w}×{src_h}, N_dst the output size {w}×{h}."
        )
    )
    return T(template, src_w=src_size[0], src_h=src_size[1], w=dsize[0], h=dsize[1])


def applied_m_caption(result: WarpComparison) -> T:
    """What ``M_θ`` (the notes' theta read back as an OpenCV matrix, ``matrices.applied_m``)
    says: with ``align_corners=False`` the same 2x2 part as M and a translation moved by
    ``(dx, dy)`` destination pixels; with ``align_corners=True`` a rescaled M."""
    mats = result.matrices
    if mats.align_corners:
        return T(
            "M_θ = (N_src⁻¹·θ·N_dst)⁻¹ is the notes' theta read back as an OpenCV matrix: the "
            "warp it really applies. With align_corners=True its 2/W rescales M about the "
            "top-left pixel instead of shifting it."
        )
    dx, dy = mats.applied_m[:, 2] - mats.m[:, 2]
    return T(
        "M_θ = (N_src⁻¹·θ·N_dst)⁻¹ is the notes' theta read back as an OpenCV matrix: the "
        "warp it really applies. Its 2×2 part A is M's; its translation is off by "
        "({dx:+.3f}, {dy:+.3f}) px = A·(½, ½) − (½, ½).",
        dx=float(dx),
        dy=float(dy),
    )


def why_inverse(theta: np.ndarray) -> T:
    """Why theta needs M's inverse and two normalizations, with ``theta[0, 2]`` ((2, 3) theta)
    read out."""
    return T(
        "cv2.warpAffine reads the destination pixel d from the source at M⁻¹·d, so "
        "the matrix it needs internally is the inverse of the one you give it. "
        "affine_grid does the same lookup but wants it in normalized coordinates: for "
        "each output position in [−1, 1] it returns an input position in [−1, 1]. So "
        "we convert output pixels to normalized coordinates backwards (N_dst⁻¹), "
        "apply M⁻¹, and normalize the result with the input size (N_src). Here "
        "theta[0, 2] = {theta02:.4f}: the normalized input x read by the output's "
        "centre column when the image is not rotated.",
        theta02=float(theta[0, 2]),
    )


def grid_caption(result: WarpComparison, padding_mode: str) -> T:
    """How to read the sampling grid and the close-up, with the mean offset of the samples."""
    template = (
        N_(
            "Overview: {n} output pixels, coloured by output x. "
            "Hover a dot: output pixel ← input coordinate. Dots outside the picture read "
            "the padding ({padding_mode}). The dashed outline is the output frame seen "
            "from the input. In the close-up, a dot centred in its white ring means "
            "grid_sample reads exactly where OpenCV does; with the notes' theta every dot "
            "sits {offset:.3f} px off its ring."
        )
        if result.notes
        else N_(
            "Overview: {n} output pixels, coloured by output x. "
            "Hover a dot: output pixel ← input coordinate. Dots outside the picture read "
            "the padding ({padding_mode}). The dashed outline is the output frame seen "
            "from the input. In the close-up, a dot centred in its white ring means "
            "grid_sample reads exactly where OpenCV does (mean offset now {offset:.1e} px)."
        )
    )
    return T(
        template, n=result.grid.in_x.size, padding_mode=padding_mode, offset=result.grid_offset_px
    )


# --------------------------------------------------------------------------------------------
# Help, hints and alt texts (the page fills in references it cites, like the notes' line)
# --------------------------------------------------------------------------------------------

#: What to look at first (the page's header).
LOOK_AT = N_(
    "the **|grid_sample − cv2|** map beside the two warps of one matrix M: black means "
    "F.affine_grid + F.grid_sample agrees with cv2.warpAffine. Switch on **Notes' theta** "
    "and it lights up at every edge: a half-pixel shift."
)
NO_IMAGE = N_("Pick a sample or upload an image below (section 1) to start warping.")
GRAYSCALE = N_(
    "This image is grayscale: its three channels are equal, so both warps and every "
    "error are the same as for a single channel."
)
NOTES_HELP = N_(
    "Use the notes' affine2theta ({ref}) instead of the correct "
    "conversion. It normalizes with x_n = 2x/W - 1, which is half a pixel off with "
    "align_corners=False. Switch it on to see the error appear."
)
ALIGN_CORNERS_HELP = N_(
    "Passed to F.affine_grid and F.grid_sample: are −1 and 1 the centres of the corner "
    "pixels (True) or the outer edges of the image (False)?"
)
MATRIX_TEXT_HELP = N_(
    "Two rows a b c / d e f: x' = a·x + b·y + c and y' = d·x + e·y + f, in "
    "pixels. Brackets and commas are fine: paste a NumPy array straight from "
    "Python."
)
TIMING_NOTE = N_(
    "Both paths on the current image and output size; torch on `{device}`. On a GPU, "
    "torch.cuda.synchronize() runs before starting and before stopping the clock, because "
    "CUDA calls return before the kernel has finished."
)
END_TO_END = N_(
    "End to end = numpy → tensor on the device → affine_grid + grid_sample → "
    "numpy. The grid_sample path also builds a float grid of 2·H·W coordinates "
    "first."
)


def size_hint(size_mode: str, out_size: tuple[int, int], src_size: tuple[int, int]) -> T:
    """What to change when the output size ``out_size`` (``(w, h)``) cannot be used: the range
    of a custom size, or why a preset gives too little of a ``src_size`` image."""
    if size_mode == "Custom":
        return T(
            "Hint: pick an output width and height between {low} and {high} pixels.",
            low=MIN_SIDE,
            high=MAX_OUTPUT_SIDE,
        )
    return T(
        "Hint: '{option}' gives {out_w}×{out_h} for this {src_w}×{src_h} image; choose "
        "another output size option, or Custom.",
        option=T(size_mode),
        out_w=out_size[0],
        out_h=out_size[1],
        src_w=src_size[0],
        src_h=src_size[1],
    )


def heavy_message(dsize: tuple[int, int], mode: str, seconds: float) -> T:
    """Why a ``dsize`` output waits for a click: about ``seconds`` on a shared server."""
    return T(
        "A {w}×{h} output with {mode} interpolation takes about {seconds:.0f} s on "
        "this server, which everyone here shares, so it waits until you ask for it. "
        "A smaller output size (section 1) shows the same lesson at once.",
        w=dsize[0],
        h=dsize[1],
        mode=mode,
        seconds=max(1.0, seconds),
    )


def meanwhile(corner: tuple[int, int], whole: tuple[int, int]) -> T:
    """What is shown while a large output waits: its top-left ``corner`` (``(w, h)``)."""
    return T(
        "Meanwhile: the top-left {w}×{h} of the {whole_w}×{whole_h} output (a "
        "smaller dsize crops the same output).",
        w=corner[0],
        h=corner[1],
        whole_w=whole[0],
        whole_h=whole[1],
    )


def picture_alts(result: WarpComparison, unit: str) -> tuple[T, T, T]:
    """Alt texts of the main figure: OpenCV's warp, grid_sample's warp, the difference map."""
    h, w = result.reference.shape[:2]
    e = result.errors
    return (
        T("The {w}×{h} output of cv2.warpAffine with the current M.", w=w, h=h),
        T(
            "The {w}×{h} output of F.affine_grid + F.grid_sample with "
            "{theta_name}; it looks the same as OpenCV's.",
            w=w,
            h=h,
            theta_name=theta_name(result.notes),
        ),
        T(
            "Heat map of |grid_sample − cv2.warpAffine| per output pixel: largest "
            "{largest:.3g}, mean {mean:.3g}{unit}.",
            largest=e.max_whole,
            mean=e.mean_whole,
            unit=unit,
        ),
    )


def profile_alt(row: int) -> T:
    """Alt text of the profile chart of output row ``row``."""
    return T(
        "Output row {row} of both warps, mean over channels: the two curves overlap "
        "unless one path samples shifted.",
        row=row,
    )


def grid_alts(result: WarpComparison) -> tuple[T, T]:
    """Alt texts of the sampling grid and of its close-up."""
    return (
        T(
            "The input image with {n} dots: where every {step}th "
            "output pixel reads the input, and the output frame as a dashed outline.",
            n=result.grid.in_x.size,
            step=result.grid.step,
        ),
        T(
            "Close-up of {n} neighbouring output pixels: filled dots "
            "where grid_sample reads, rings where cv2.warpAffine reads.",
            n=result.zoom.out_x.size,
        ),
    )


def difference_metrics(errors: WarpErrors) -> list[tuple[str, str, T | None]]:
    """Section 2's four figures as ``(label, value, help)``: interior max and mean (``n/a``
    without an interior, see :func:`has_interior`), whole-image max and mean."""
    interior = has_interior(errors)
    border = errors.border_px
    na = T("n/a")
    return [
        (
            N_("Interior max |Δ|"),
            f"{errors.max_interior:.3g}" if interior else na,
            T(
                "Largest |grid_sample − cv2.warpAffine| with a {border} px border excluded on "
                "every side (the border is where the two libraries' padding rules meet).",
                border=border,
            ),
        ),
        (
            N_("Interior mean |Δ|"),
            f"{errors.mean_interior:.4f}" if interior else na,
            T("Mean |Δ| with a {border} px border excluded on every side.", border=border),
        ),
        (N_("Whole-image max |Δ|"), f"{errors.max_whole:.3g}", None),
        (N_("Whole-image mean |Δ|"), f"{errors.mean_whole:.4f}", None),
    ]
