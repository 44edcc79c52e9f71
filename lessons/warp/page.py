"""Affine warp playground: an OpenCV matrix through affine_grid + grid_sample vs cv2.warpAffine.

Read the controls, compare the two warps once per case (shared by every session), draw what
comes back, ask the questions; the computing and the live sentences are in the pure modules.
"""

from __future__ import annotations

import contextlib
import dataclasses

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.text import N_
from lessons.warp import affine, canvas, captions, cost, figures, questions, theta, validation
from lessons.warp import matrix_inputs as inputs
from lessons.warp.affine import WarpCase, WarpComparison
from lessons.warp.snippet import image_code_for, snippet_for
from lessons.warp.timing import time_warps
from ui.caching import SHARED_TTL_S, bounded_cache
from ui.charts import shared_figure, show_chart
from ui.code import show_code
from ui.heavy import budget_s, heavy_gate, heavy_job
from ui.i18n import _, cite, current_language, tr, translator
from ui.image_input import UPLOAD, image_input
from ui.lesson import lazy_expander, lesson_layout
from ui.links import BOUND, reject_unusable_link_value
from ui.notes_callout import callouts_of, notes_callout
from ui.pictures import digest, show_image
from ui.predict import predict_panel
from ui.settings import current_settings


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S)
def _compare(case: WarpCase, _img: np.ndarray) -> WarpComparison:
    """compare_warps, once per case for every session (a toggle flipped back and forth, a class
    on the same defaults). ``_img`` is not hashed: the case's digest names it, cheaper to hash."""
    return affine.compare_warps(
        _img, case.affine, case.dsize, **case.sampling, device=case.device, notes=case.notes
    )


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S)
def _canvas_check(case: WarpCase, _img: np.ndarray, _warped: np.ndarray | None
                  ) -> canvas.CanvasCheck:  # fmt: skip
    """canvas_check of the case's correct theta, once per case (``_warped``: its CPU warp)."""
    return canvas.canvas_check(_img, case.affine, case.dsize, **case.sampling, warped=_warped)


# Each figure is built once per process, WarpCase and language, for every session, so nothing may
# change it once built. ``_img`` is not hashed (the digest stands for it). 16 cases, as _compare.
@shared_figure(max_entries=16)
def diff_figure(case: WarpCase, _img: np.ndarray) -> go.Figure:
    """The |grid_sample − cv2| heat map, max-pooled so no error hides in the preview."""
    return figures.diff_figure(_compare(case, _img), translator())


@shared_figure(max_entries=16)
def profile_figure(case: WarpCase, _img: np.ndarray) -> go.Figure:
    """The middle output row of both warps, mean over channels."""
    return figures.profile_figure(_compare(case, _img), case.profile_row, translator())


@shared_figure(max_entries=16)
def grid_figure(case: WarpCase, _img: np.ndarray) -> go.Figure:
    """The input with a dot where every few output pixels read it, and the output frame."""
    return figures.grid_figure(_compare(case, _img), _img, translator())


@shared_figure(max_entries=16)
def zoom_figure(case: WarpCase, _img: np.ndarray) -> go.Figure:
    """Close-up of neighbouring output pixels: where grid_sample reads and where OpenCV does."""
    return figures.zoom_figure(_compare(case, _img), _img, translator())


def stop_with(error: ValueError, hint: str) -> None:
    """Show ``error`` (translated) and what to change in the figure's place; stop the run."""
    with layout.figure:
        st.error(tr(error) + "\n\n" + hint, icon=":material/error:")
    st.stop()


def pick_image() -> np.ndarray:
    """Section 1's image, first: the controls beside the figure need its size."""
    with layout.details:
        st.header(_("1. Image, transform and output size"), anchor=False)
        img = image_input("warp.image")
    if img is None:
        with layout.figure:
            st.info(_(captions.NO_IMAGE), icon=":material/image:")
        st.stop()
    try:
        validation.validate_image(img)
    except ValueError as error:
        stop_with(error, _("Hint: choose a bundled sample or upload a larger image (section 1)."))
    if validation.is_grayscale(img):
        with layout.details:
            st.info(_(captions.GRAYSCALE), icon=":material/filter_b_and_w:")
    return img


def main_inputs_of_m(definition: str, src_w: int, src_h: int) -> tuple[np.ndarray | None, ...]:
    """Beside the figure: rotation and scale (sliders), or the typed matrix; ``(matrix or None,
    angle, scale)``. Raises the matrix's ValueError."""
    if definition == "Sliders":
        angle = st.slider(_("Rotation (degrees)"), -180.0, 180.0, 30.0, 1.0, key="warp.angle",
                          **BOUND)  # fmt: skip
        scale = st.slider(_("Scale"), 0.1, 4.0, 1.0, 0.05, key="warp.scale", **BOUND)
        return None, angle, scale
    if definition == "Matrix entries":
        default = inputs.matrix_from_params(15, 0.9, center=((src_w - 1) / 2, (src_h - 1) / 2))
        reject_unusable_link_value("warp.matrix_text", inputs.matrix_text_is_usable)
        text = st.text_area(
            _("M (two rows of three)"),
            value="\n".join("  ".join(f"{v:.6g}" for v in row) for row in default),
            height=90, max_chars=inputs.MATRIX_MAX_CHARS, key="warp.matrix_text", **BOUND,
            help=_(captions.MATRIX_TEXT_HELP),
        )  # fmt: skip
        return inputs.parse_matrix_text(text), 0.0, 0.0
    st.caption(_("Edit the three point pairs below the picture (section 1)."))
    return None, 0.0, 0.0


def more_of_m(angle: float, scale: float, src_w: int, src_h: int) -> np.ndarray:
    """Section 1's rarely used sliders of M: shear, translation and the centre of rotation."""
    st.markdown(_("**More of M** (shear, translation and the centre of rotation)"))
    c2, c3, c4 = st.columns(3)
    shear_x = c2.slider(_("Shear x"), -1.0, 1.0, 0.0, 0.05, key="warp.shear_x", **BOUND)
    shear_y = c2.slider(_("Shear y"), -1.0, 1.0, 0.0, 0.05, key="warp.shear_y", **BOUND)
    tx = c3.slider(_("Translate x (percent of W)"), -100, 100, 0, 1, key="warp.tx", **BOUND)
    ty = c3.slider(_("Translate y (percent of H)"), -100, 100, 0, 1, key="warp.ty", **BOUND)
    cx = c4.slider(_("Centre x (percent of W)"), 0, 100, 50, 1, key="warp.cx", **BOUND)
    cy = c4.slider(_("Centre y (percent of H)"), 0, 100, 50, 1, key="warp.cy", **BOUND)
    centre = (cx / 100 * (src_w - 1), cy / 100 * (src_h - 1))
    shift = (tx / 100 * src_w, ty / 100 * src_h)
    st.caption(inputs.params_formula(angle, scale, shift, centre))
    return inputs.matrix_from_params(angle, scale, shear_x, shear_y, *shift, centre)


def point_pairs(src_w: int, src_h: int) -> np.ndarray:
    """Section 1's three point pairs; cv2.getAffineTransform solves for M."""
    src_default, dst_default = inputs.default_points(src_w, src_h)
    st.markdown(_("**Point pairs:** three source points and where they must land; "
                  "cv2.getAffineTransform solves for M."))  # fmt: skip
    src_pts, dst_pts = [], []
    for i in range(3):
        fields = [
            (_("source {n} x").format(n=i + 1), f"p{i}_sx", src_default[i, 0]),
            (_("source {n} y").format(n=i + 1), f"p{i}_sy", src_default[i, 1]),
            (_("target {n} x").format(n=i + 1), f"p{i}_dx", dst_default[i, 0]),
            (_("target {n} y").format(n=i + 1), f"p{i}_dy", dst_default[i, 1]),
        ]
        values = [
            col.number_input(label, value=float(default), step=1.0, key=f"warp.{name}", **BOUND)
            for col, (label, name, default) in zip(st.columns(4), fields, strict=True)
        ]
        src_pts.append(values[:2])
        dst_pts.append(values[2:])
    return inputs.matrix_from_points(src_pts, dst_pts)


def output_size(src_w: int, src_h: int) -> tuple[str, tuple[int, int]]:
    """Section 1's output size (dsize): the size mode and ``(out_w, out_h)``, unchecked."""
    size_mode = st.radio(_("Output size (dsize)"), canvas.SIZE_MODES, horizontal=True,
                         key="warp.size_mode", format_func=translator(), **BOUND)  # fmt: skip
    if size_mode != "Custom":
        return size_mode, canvas.preset_size(size_mode, src_w, src_h)
    s1, s2 = st.columns(2)
    out_w = s1.number_input(_("Output width"), min_value=0, value=src_w, step=1,
                            key="warp.out_w", **BOUND)  # fmt: skip
    out_h = s2.number_input(_("Output height"), min_value=0, value=src_h, step=1,
                            key="warp.out_h", **BOUND)  # fmt: skip
    return size_mode, (out_w, out_h)


def gated_case(case: WarpCase) -> tuple[WarpCase, float]:
    """A large output (from a link or from the size boxes alike) waits for a click stating its
    time, for exactly this case; meanwhile the case of its own top-left corner is shown (a
    smaller dsize crops the same output). Returns the case to show and its expected seconds."""
    expected = cost.estimate_warp_seconds(*case.dsize, case.mode, notes=case.notes)
    with layout.figure:
        if heavy_gate("warp.large", expected, dataclasses.astuple(case),
                      what=_("the {w}×{h} warp").format(w=case.dsize[0], h=case.dsize[1]),
                      message=tr(captions.heavy_message(case.dsize, case.mode, expected))):
            return case, expected
        corner = cost.preview_dsize(case.dsize, case.mode, notes=case.notes, seconds=budget_s())
        st.caption(tr(captions.meanwhile(corner, case.dsize)))
    case = dataclasses.replace(case, dsize=corner)
    return case, cost.estimate_warp_seconds(*corner, case.mode, notes=case.notes)


def pictures(case: WarpCase, img: np.ndarray, result: WarpComparison, unit: str) -> None:
    """The main figure: both warps beside the map of their difference."""
    reference_alt, warped_alt, diff_alt = (tr(alt) for alt in captions.picture_alts(result, unit))
    images_col, heat_col = st.columns([0.36, 0.64], gap="small")
    with images_col:
        show_image(result.reference, (case, "reference"), caption="cv2.warpAffine",
                   alt=reference_alt, width="stretch")  # fmt: skip
        show_image(result.warped, (case, "warped"), alt=warped_alt, width="stretch",
                   caption=_("F.grid_sample (notes' theta)") if case.notes else "F.grid_sample")
    with heat_col:
        # Max-pooled for the browser (about 300 px wide), so no error can hide in the preview.
        show_chart(diff_figure(case, img), alt=diff_alt, width="stretch", theme=None,
                   key="warp.diff_chart")  # fmt: skip


def size_note(where, case: WarpCase, img: np.ndarray, correct: WarpComparison) -> None:
    """What the output size does, measured on this warp (the correct theta, on the CPU)."""
    with where:
        try:
            check = _canvas_check(dataclasses.replace(case, notes=False), img,
                                  correct.warped if case.device == "cpu" else None)  # fmt: skip
        except ValueError as error:  # e.g. reflection too far outside at the input's own size
            st.caption(_("The output-size check could not run for this transform: {error}")
                       .format(error=tr(error)))  # fmt: skip
        else:
            channels = 1 if img.ndim == 2 else img.shape[2]
            parts = canvas.output_size_caption_parts(check, channels)
            st.caption(SEP.join(tr(part) for part in parts))
        # Drawn only when opened (a callout is ~15 elements, 10% of the page's cost for a class).
        size_notes = lazy_expander(N_("The notes on affine_grid's size ({ref})"),
                                   key="warp.size_notes_box", ref=cite("000:18"))
        if size_notes is not None:
            with size_notes:
                notes_callout(callouts_of("lessons.warp.affine")["affine_grid_size_vs_dsize"])


def verdict(result: WarpComparison, correct: WarpComparison, align_corners: bool,
            unit: str) -> None:
    """Under the picture: the notes' theta and what it costs, or how closely the paths agree."""
    box = st.container(key=questions.VERDICT_PART)  # states the notes' shift
    sentences = [tr(text) for text in captions.verdict_sentences(
        result, correct, align_corners=align_corners, unit=unit)]  # fmt: skip
    if result.notes:
        head = _("**The notes' affine2theta ({ref}) is in use.**").format(ref=cite("000:18"))
        box.warning(SEP.join((head, *sentences)), icon=":material/warning:")
    else:
        box.success(sentences[0], icon=":material/check_circle:")


def numbers(case: WarpCase, result: WarpComparison) -> None:
    """Section 2: the four |Δ| figures and what exactly was compared."""
    details = layout.details
    details.header(_("2. The difference in numbers"), anchor=False)
    for column, (label, value, help_text) in zip(
        details.columns(4), captions.difference_metrics(result.errors), strict=True
    ):
        column.metric(_(label), tr(value), help=tr(help_text) if help_text else None)
    details.caption(tr(captions.comparison_caption(result, **case.sampling)))
    if case.mode == "nearest":
        details.caption(tr(captions.nearest_caption(result)))
    if not captions.has_interior(result.errors):
        details.info(tr(captions.no_interior_note(case.dsize, result.errors.border_px)),
                     icon=":material/info:")  # fmt: skip


def matrices_tab(case: WarpCase, result: WarpComparison, src_size: tuple[int, int]) -> None:
    """Section 3's matrices: theta = N_src M⁻¹ N_dst⁻¹ with the live numbers."""
    mats = result.matrices
    st.latex(r"\theta = N_{src}\, M^{-1}\, N_{dst}^{-1}\quad\text{("
             + _("top two rows of the 3×3") + ")}")  # fmt: skip
    st.latex(mats.formula)
    st.caption(tr(captions.normalization_caption(case.align_corners, src_size, case.dsize)))
    # Inline maths, one matrix a line: a display formula (st.latex) is a scroll region, which
    # the 3x3 matrices overflow by a few pixels, and axe-core flags a scroll region a keyboard
    # cannot reach (scrollable-region-focusable).
    shown = [(r"N_{src}", mats.n_src), (r"M^{-1}", mats.m_inv), (r"N_{dst}", mats.n_dst),
             (r"\theta", mats.theta), (r"M", mats.m)]  # fmt: skip
    if case.notes:
        shown += [(r"\theta_{correct}", mats.correct_theta), (r"M_{\theta}", mats.applied_m)]
    for name, value in shown:
        st.markdown(theta.matrix_markdown(name, value))
    if case.notes:
        st.caption(tr(captions.applied_m_caption(result)))
    with st.expander(_("Why the inverse, and why normalize?")):
        st.markdown(tr(captions.why_inverse(mats.theta)))


def grid_tab(case: WarpCase, img: np.ndarray, result: WarpComparison) -> None:
    """Section 3's sampling grid: where output pixels read the input, overview and close-up."""
    grid_alt, zoom_alt = (tr(alt) for alt in captions.grid_alts(result))
    g1, g2 = st.columns([3, 2])
    with g1:
        show_chart(grid_figure(case, img), alt=grid_alt, width="stretch", key="warp.grid_chart")
    with g2:
        show_chart(zoom_figure(case, img), alt=zoom_alt, width="stretch", key="warp.zoom_chart")
    st.caption(tr(captions.grid_caption(result, case.padding_mode)))


def show_timing(case: WarpCase, img: np.ndarray) -> None:
    """Section 4: both paths timed on a click (median of 5)."""
    st.header(_("4. Timing"), anchor=False)
    st.caption(_(captions.TIMING_NOTE).format(device=case.device))
    if not st.button(_("Time both paths (median of 5)"), key="warp.time", icon=":material/timer:"):
        return
    try:
        # a heavy job: timings taken beside another heavy job would measure the contention
        with (st.spinner(_("Timing cv2.warpAffine and affine_grid + grid_sample...")),
              heavy_job()):  # fmt: skip
            times = time_warps(img, case.affine, case.dsize, **case.sampling, device=case.device)
    except ValueError as error:
        st.error(tr(error) + "\n\n" + _("Hint: choose another device in the sidebar."),
                 icon=":material/error:")  # fmt: skip
        return
    t1, t2, t3, t4 = st.columns(4)
    t1.metric("cv2.warpAffine (CPU)", f"{times.cv2_ms:.2f} ms")
    t2.metric(_("torch end to end ({device})").format(device=times.device),
              f"{times.torch_ms:.2f} ms")  # fmt: skip
    t3.metric(_("affine_grid + grid_sample only"), f"{times.torch_kernel_ms:.2f} ms")
    t4.metric("torch / cv2", f"{times.ratio:.1f}×")
    st.caption(_(captions.END_TO_END))


def show_snippet(case: WarpCase) -> None:
    """The code that reproduces this warp, reading this session's image."""
    image_code = image_code_for(st.session_state.get("warp.image.source") == UPLOAD,
                                st.session_state.get("warp.image.sample", "chelsea.png"))
    show_code(snippet_for(case.affine, case.dsize, **case.sampling, device=case.device,
                          notes=case.notes, image_code=image_code))  # fmt: skip


layout = lesson_layout(N_("Affine warp playground"), captions.LOOK_AT)
# Sentences joined into one paragraph: a space between English ones, none between Chinese ones.
SEP = "" if current_language() == "zh" else " "
settings = current_settings()

img = pick_image()
src_h, src_w = img.shape[:2]

# Controls beside the figure: the lesson's switch, the main transform, the sampling modes.
matrix: np.ndarray | None = None
definition_error: ValueError | None = None
with layout.controls:
    notes = st.toggle(_("Notes' theta"), value=False, key="warp.notes", **BOUND,
                      help=_(captions.NOTES_HELP).format(ref=cite("000:18")))  # fmt: skip
    align_corners = st.toggle("align_corners", value=False, key="warp.align_corners", **BOUND,
                              help=_(captions.ALIGN_CORNERS_HELP))  # fmt: skip
    definition = st.radio(_("Define M with"), inputs.DEFINITIONS, key="warp.definition",
                          format_func=translator(), **BOUND,
                          help=_("M is OpenCV's 2x3 matrix: source pixel -> destination pixel."))
    try:
        matrix, angle, scale = main_inputs_of_m(definition, src_w, src_h)
    except ValueError as error:
        definition_error = error
    mode = st.selectbox(_("Interpolation"), validation.INTERPOLATIONS, key="warp.mode", **BOUND)
    padding_mode = st.selectbox(_("Padding"), validation.PADDING_MODES, key="warp.padding", **BOUND)

# Section 1 (continued): the rarely used inputs of M, and the output size.
with layout.details:
    try:
        if definition == "Sliders":
            matrix = more_of_m(angle, scale, src_w, src_h)
        elif definition == "Point pairs":
            matrix = point_pairs(src_w, src_h)
    except ValueError as error:
        definition_error = error
    size_mode, out_size = output_size(src_w, src_h)
    size_note_box = st.container(key=questions.SIZE_PART)

if definition_error is not None:
    stop_with(definition_error, _(inputs.DEFINITION_HINTS[definition]))
try:
    dsize = validation.validate_dsize(out_size)
except ValueError as error:
    stop_with(error, tr(captions.size_hint(size_mode, out_size, (src_w, src_h))))

case, expected = gated_case(
    WarpCase.of(digest(img), matrix, dsize, align_corners=align_corners, mode=mode,
                padding_mode=padding_mode, device=settings.device, notes=notes)
)
try:
    with (layout.figure, st.spinner(_("Warping with cv2.warpAffine and F.grid_sample...")),
          heavy_job() if expected > budget_s() else contextlib.nullcontext()):
        result = _compare(case, img)
        correct = _compare(dataclasses.replace(case, notes=False), img) if notes else result
except ValueError as error:
    stop_with(error, _("Hint: a different image, transform or output size will work."))

unit = " " + _("grey levels") if img.dtype == np.uint8 else ""
with layout.figure:
    pictures(case, img, result, unit)
    verdict(result, correct, align_corners, unit)
size_note(size_note_box, case, img, correct)
numbers(case, result)

with layout.details:
    show_chart(profile_figure(case, img), alt=tr(captions.profile_alt(case.profile_row)),
               width="stretch", key="warp.profile_chart")  # fmt: skip
    with st.container(key=questions.MAPPING_PART):  # M⁻¹ and where each output pixel reads
        st.header(_("3. From M to theta, and where each output pixel samples"), anchor=False)
        tab_mats, tab_grid = st.tabs([_("Matrices"), _("Sampling grid")])
        with tab_mats:
            matrices_tab(case, result, (src_w, src_h))
        with tab_grid:
            grid_tab(case, img, result)
    show_timing(case, img)
    show_snippet(case)
predict_panel(layout.predict, "warp", lambda: questions.questions(case, (src_w, src_h), result))
