"""Affine warp playground: an OpenCV matrix through affine_grid + grid_sample vs cv2.warpAffine."""

from __future__ import annotations

import contextlib
import dataclasses
import math

import numpy as np
import plotly.colors
import plotly.graph_objects as go
import streamlit as st

from core.figure_style import png_data_uri
from core.text import N_
from lessons.warp import affine as warp
from ui.caching import SHARED_TTL_S, bounded_cache
from ui.charts import shared_figure, show_chart
from ui.code import show_code
from ui.heavy import budget_s, heavy_gate, heavy_job
from ui.i18n import _, cite, current_language, tr, translator
from ui.image_input import UPLOAD, image_input
from ui.images import digest, show_image
from ui.lesson import lazy_expander, lesson_layout
from ui.links import BOUND, reject_unusable_link_value
from ui.notes_callout import callouts_of, notes_callout
from ui.settings import current_settings

DEFINITIONS = (N_("Sliders"), N_("Matrix entries"), N_("Point pairs"))
SIZE_MODES = (N_("Same as input"), N_("Half (shrink)"), N_("Double (enlarge)"), N_("Custom"))
#: The error hint under a matrix that cannot be used, for each way of defining M.
DEFINITION_HINTS = {
    "Sliders": N_("Hint: change the sliders of M; the picture updates as soon as M is valid."),
    "Matrix entries": N_(
        "Hint: change the matrix entries of M; the picture updates as soon as M is valid."
    ),
    "Point pairs": N_(
        "Hint: change the point pairs of M; the picture updates as soon as M is valid."
    ),
}
# The difference map is about 300 px wide beside the two warps: a finer preview (max-pooled, so
# no error hides) would only cost transfer time on every control change.
HEAT_MAX_SIDE = 320
HEAT_PLOT_PX = 270  # about the heat map's plot width (its column less the colour bar)
# Streamlit's browser side rewrites "#000001" ... "#000010" in every plotly spec (its theme
# placeholders), even with theme=None: Inferno's first colour "#000004" became lavender, so
# zero error looked like a big one. Same colour, written so nothing rewrites it.
DIFF_COLORSCALE = [
    [i / (len(plotly.colors.sequential.Inferno) - 1), "rgb(0, 0, 4)" if c == "#000004" else c]
    for i, c in enumerate(plotly.colors.sequential.Inferno)
]
# A matrix is a few dozen characters, a pasted NumPy array a few hundred: longer text (a link
# can carry any) is not a matrix.
MATRIX_MAX_CHARS = 400


def matrix_text_is_usable(text: str) -> bool:
    """Whether a link's ``warp.matrix_text`` is six numbers the page can show M for.

    Text that does not parse (a word, five numbers, 10,000 characters) is not: the control opens
    at its default. Six numbers that make no usable M (singular, NaN) are: the page says why, as
    it does for a typed matrix, which is the point of such a link.
    """
    if len(text) > MATRIX_MAX_CHARS:
        return False
    try:
        warp.parse_matrix_text(text)
    except ValueError as error:
        return "is not a number" not in str(error) and "needs 6 numbers" not in str(error)
    return True


def matrix_markdown(name: str, value: np.ndarray) -> str:
    """``name = [matrix]`` as inline maths in display style (no scroll region around it)."""
    return f"$\\displaystyle {name} = {warp.matrix_latex(value)}$"


def heat_height(dsize: tuple[int, int]) -> int:
    """Chart height (px) at which the difference map fills its axes for a ``(w, h)`` output."""
    w, h = dsize
    return int(min(460, max(120, round(HEAT_PLOT_PX * h / w) + 50)))


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S)
def _compare(case: WarpCase, _img: np.ndarray) -> warp.WarpComparison:
    """compare_warps, computed once per distinct case for every session (a toggle flipped back
    and forth, a class of students on the same defaults). ``_img`` is not hashed: the case's
    digest names it (hashing the pixels on every run cost more than the rest of the lookup)."""
    return warp.compare_warps(
        _img, case.affine, case.dsize, **case.sampling, device=case.device, notes=case.notes
    )


@bounded_cache(max_entries=16, ttl=SHARED_TTL_S)
def _canvas_check(case: WarpCase, _img: np.ndarray, _warped: np.ndarray | None) -> warp.CanvasCheck:
    """canvas_check of the case's correct theta, once per case (``_warped``: its CPU warp)."""
    return warp.canvas_check(_img, case.affine, case.dsize, **case.sampling, warped=_warped)


@dataclasses.dataclass(frozen=True)
class WarpCase:
    """One warp the page shows, in a few hashable fields: the key of its shared figures.

    The image is named by its digest (its pixels travel beside the key, unhashed), so fifty
    students on the same sample and settings share one set of figures.
    """

    image_digest: str
    matrix: tuple[tuple[float, ...], ...]
    dsize: tuple[int, int]
    align_corners: bool
    mode: str
    padding_mode: str
    device: str
    notes: bool

    @property
    def affine(self) -> np.ndarray:
        """The (2, 3) float64 matrix M."""
        return np.array(self.matrix, dtype=np.float64)

    @property
    def sampling(self) -> dict[str, bool | str]:
        """``align_corners``, ``mode`` and ``padding_mode``, as ``lessons.warp.affine``'s
        keyword arguments."""
        return {"align_corners": self.align_corners, "mode": self.mode,
                "padding_mode": self.padding_mode}  # fmt: skip

    @property
    def profile_row(self) -> int:
        """The output row the profile chart draws: the middle one."""
        return self.dsize[1] // 2

    def compare(self, img: np.ndarray) -> warp.WarpComparison:
        """The cached :func:`_compare` of ``img`` (the image this case's digest names)."""
        return _compare(self, img)


def warp_case(img, matrix, dsize, align_corners, mode, padding_mode, device, notes) -> WarpCase:
    """The :class:`WarpCase` of the page's current image and settings."""
    rows = tuple(tuple(float(v) for v in row) for row in np.asarray(matrix, dtype=np.float64))
    return WarpCase(
        digest(img), rows, dsize, align_corners, mode, padding_mode, device, notes
    )


# The builders below run once per process and WarpCase, for every session (issue 13): their
# figures are shared, so nothing may change them once built. ``_img`` is not hashed; the case's
# digest stands for it. 16 cases each, like _compare.
@shared_figure(max_entries=16)
def diff_figure(case: WarpCase, _img: np.ndarray) -> go.Figure:
    """The |grid_sample − cv2| heat map, max-pooled so no error hides in the preview."""
    diff_preview, pool = warp.max_pool_preview(
        case.compare(_img).difference, max_side=HEAT_MAX_SIDE
    )
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
    heat.update_layout(
        title=_("|grid_sample − cv2| (max of {pool}×{pool})").format(pool=pool)
        if pool > 1
        else "|grid_sample − cv2|",
        margin={"l": 0, "r": 0, "t": 40, "b": 0},
        height=heat_height(case.dsize),
    )
    return heat


@shared_figure(max_entries=16)
def profile_figure(case: WarpCase, _img: np.ndarray) -> go.Figure:
    """The middle output row of both warps, mean over channels."""
    result, row = case.compare(_img), case.profile_row
    profile = go.Figure()
    for name, image, style in (
        ("cv2.warpAffine", result.reference, {"color": "#1f77b4", "width": 3}),
        ("F.grid_sample", result.warped, {"color": "#ff7f0e", "width": 1.5, "dash": "dot"}),
    ):
        values = image[row].astype(np.float64).mean(axis=1)
        profile.add_trace(go.Scatter(y=values, mode="lines", name=name, line=style))
    profile.update_layout(
        title=_("Output row {row}, mean over channels: a sideways offset is a shift").format(
            row=row
        ),
        xaxis_title=_("output x (px)"),
        yaxis_title=_("value"),
        height=280,
        margin={"l": 0, "r": 0, "t": 40, "b": 0},
    )
    return profile


@shared_figure(max_entries=16)
def grid_figure(case: WarpCase, _img: np.ndarray) -> go.Figure:
    """The input with a dot where every few output pixels read it, and the output frame."""
    result = case.compare(_img)
    grid = result.grid
    preview, sx, sy = warp.image_preview(_img)
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
    hover_template = _("output ({ox:.0f}, {oy:.0f}) ← input ({ix:.2f}, {iy:.2f})")
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
            name=_("grid_sample samples"),
            text=hover,
            hovertemplate="%{text}<extra></extra>",
        )
    )
    w, h = case.dsize
    corners = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1], [0, 0]], dtype=np.float64)
    m_inv = result.matrices.m_inv
    frame = corners @ m_inv[:2, :2].T + m_inv[:2, 2]
    fig.add_trace(
        go.Scatter(
            x=frame[:, 0],
            y=frame[:, 1],
            mode="lines",
            name=_("output frame"),
            line={"color": "white", "dash": "dash"},
            hoverinfo="skip",
        )
    )
    fig.update_layout(
        height=520,
        margin={"l": 0, "r": 0, "t": 30, "b": 0},
        legend={"orientation": "h"},
        title=_("Every {step}th output pixel, drawn where it reads the input").format(
            step=grid.step
        ),
    )
    return fig


@shared_figure(max_entries=16)
def zoom_figure(case: WarpCase, _img: np.ndarray) -> go.Figure:
    """Close-up of neighbouring output pixels: where grid_sample reads and where OpenCV does."""
    zoom = case.compare(_img).zoom
    close = go.Figure()
    crop = warp.crop_around(
        _img, np.r_[zoom.in_x, zoom.ref_x], np.r_[zoom.in_y, zoom.ref_y], margin=1
    )
    if crop is not None:
        pixels, x0, y0 = crop
        close.add_trace(go.Image(z=pixels, x0=x0, y0=y0, hoverinfo="skip", opacity=0.8))
    zoom_template = _(
        "output ({ox:.0f}, {oy:.0f}) ← input ({ix:.3f}, {iy:.3f}); OpenCV reads ({rx:.3f}, "
        "{ry:.3f})"
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
            name=_("cv2.warpAffine reads"),
            hoverinfo="skip",
        )
    )
    close.add_trace(
        go.Scatter(
            x=zoom.in_x,
            y=zoom.in_y,
            mode="markers",
            marker={"size": 7, "color": "red" if case.notes else "lime"},
            name=_("grid_sample reads"),
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
        title=_("Close-up: {n} neighbouring output pixels").format(n=zoom.out_x.size),
    )
    return close


layout = lesson_layout(
    N_("Affine warp playground"),
    N_(
        "the **|grid_sample − cv2|** map beside the two warps of one matrix M: black means "
        "F.affine_grid + F.grid_sample agrees with cv2.warpAffine. Switch on **Notes' theta** "
        "and it lights up at every edge: a half-pixel shift."
    ),
)
# Sentences joined into one paragraph: a space between English ones, none between Chinese ones.
SEP = "" if current_language() == "zh" else " "
settings = current_settings()

# ------------------------------------------------------------------------------------------
# Details, section 1: the image first (the controls beside the figure need its size)
# ------------------------------------------------------------------------------------------
with layout.details:
    st.header(_("1. Image, transform and output size"), anchor=False)
    img = image_input("warp.image")
if img is None:
    with layout.figure:
        st.info(
            _("Pick a sample or upload an image below (section 1) to start warping."),
            icon=":material/image:",
        )
    st.stop()
try:
    warp.validate_image(img)
except ValueError as error:
    with layout.figure:
        st.error(
            tr(error)
            + "\n\n"
            + _("Hint: choose a bundled sample or upload a larger image (section 1)."),
            icon=":material/error:",
        )
    st.stop()
src_h, src_w = img.shape[:2]
if warp.is_grayscale(img):
    with layout.details:
        st.info(
            _(
                "This image is grayscale: its three channels are equal, so both warps and every "
                "error are the same as for a single channel."
            ),
            icon=":material/filter_b_and_w:",
        )

# ------------------------------------------------------------------------------------------
# Controls beside the figure: the lesson's switch, the main transform, the sampling modes
# ------------------------------------------------------------------------------------------
matrix: np.ndarray | None = None
definition_error: ValueError | None = None
with layout.controls:
    notes = st.toggle(
        _("Notes' theta"),
        value=False,
        key="warp.notes",
        **BOUND,
        help=_(
            "Use the notes' affine2theta ({ref}) instead of the correct "
            "conversion. It normalizes with x_n = 2x/W - 1, which is half a pixel off with "
            "align_corners=False. Switch it on to see the error appear."
        ).format(ref=cite("000:18")),
    )
    align_corners = st.toggle(
        "align_corners",
        value=False,
        key="warp.align_corners",
        **BOUND,
        help=_(
            "Passed to F.affine_grid and F.grid_sample: are −1 and 1 the centres of the corner "
            "pixels (True) or the outer edges of the image (False)?"
        ),
    )
    definition = st.radio(
        _("Define M with"),
        DEFINITIONS,
        key="warp.definition",
        format_func=translator(),
        **BOUND,
        help=_("M is OpenCV's 2x3 matrix: source pixel -> destination pixel."),
    )
    try:
        if definition == "Sliders":
            angle = st.slider(
                _("Rotation (degrees)"), -180.0, 180.0, 30.0, 1.0, key="warp.angle", **BOUND
            )
            scale = st.slider(_("Scale"), 0.1, 4.0, 1.0, 0.05, key="warp.scale", **BOUND)
        elif definition == "Matrix entries":
            default = warp.matrix_from_params(15, 0.9, center=((src_w - 1) / 2, (src_h - 1) / 2))
            reject_unusable_link_value("warp.matrix_text", matrix_text_is_usable)
            text = st.text_area(
                _("M (two rows of three)"),
                value="\n".join("  ".join(f"{v:.6g}" for v in row) for row in default),
                height=90,
                max_chars=MATRIX_MAX_CHARS,
                key="warp.matrix_text",
                **BOUND,
                help=_(
                    "Two rows a b c / d e f: x' = a·x + b·y + c and y' = d·x + e·y + f, in "
                    "pixels. Brackets and commas are fine: paste a NumPy array straight from "
                    "Python."
                ),
            )
            matrix = warp.parse_matrix_text(text)
        else:
            st.caption(_("Edit the three point pairs below the picture (section 1)."))
    except ValueError as error:
        definition_error = error
    mode = st.selectbox(_("Interpolation"), warp.INTERPOLATIONS, key="warp.mode", **BOUND)
    padding_mode = st.selectbox(_("Padding"), warp.PADDING_MODES, key="warp.padding", **BOUND)

# ------------------------------------------------------------------------------------------
# Details, section 1 (continued): the rarely used inputs of M, and the output size
# ------------------------------------------------------------------------------------------
with layout.details:
    try:
        if definition == "Sliders":
            st.markdown(_("**More of M** (shear, translation and the centre of rotation)"))
            c2, c3, c4 = st.columns(3)
            shear_x = c2.slider(_("Shear x"), -1.0, 1.0, 0.0, 0.05, key="warp.shear_x", **BOUND)
            shear_y = c2.slider(_("Shear y"), -1.0, 1.0, 0.0, 0.05, key="warp.shear_y", **BOUND)
            tx = c3.slider(_("Translate x (percent of W)"), -100, 100, 0, 1, key="warp.tx", **BOUND)
            ty = c3.slider(_("Translate y (percent of H)"), -100, 100, 0, 1, key="warp.ty", **BOUND)
            cx = c4.slider(_("Centre x (percent of W)"), 0, 100, 50, 1, key="warp.cx", **BOUND)
            cy = c4.slider(_("Centre y (percent of H)"), 0, 100, 50, 1, key="warp.cy", **BOUND)
            centre = (cx / 100 * (src_w - 1), cy / 100 * (src_h - 1))
            st.caption(
                f"M = T({tx / 100 * src_w:.1f}, {ty / 100 * src_h:.1f} px) · "
                f"cv2.getRotationMatrix2D(centre=({centre[0]:.1f}, {centre[1]:.1f}), "
                f"angle={angle:g}, scale={scale:g}) · Shear(centre)"
            )
            matrix = warp.matrix_from_params(
                angle, scale, shear_x, shear_y, tx / 100 * src_w, ty / 100 * src_h, centre
            )
        elif definition == "Point pairs":
            src_default, dst_default = warp.default_points(src_w, src_h)
            st.markdown(
                _(
                    "**Point pairs:** three source points and where they must land; "
                    "cv2.getAffineTransform solves for M."
                )
            )
            src_pts, dst_pts = [], []
            for i in range(3):
                cols = st.columns(4)
                values = []
                for col, (label, name, default_value) in zip(
                    cols,
                    [
                        (_("source {n} x").format(n=i + 1), f"p{i}_sx", src_default[i, 0]),
                        (_("source {n} y").format(n=i + 1), f"p{i}_sy", src_default[i, 1]),
                        (_("target {n} x").format(n=i + 1), f"p{i}_dx", dst_default[i, 0]),
                        (_("target {n} y").format(n=i + 1), f"p{i}_dy", dst_default[i, 1]),
                    ],
                    strict=True,
                ):
                    values.append(
                        col.number_input(
                            label,
                            value=float(default_value),
                            step=1.0,
                            key=f"warp.{name}",
                            **BOUND,
                        )
                    )
                src_pts.append(values[:2])
                dst_pts.append(values[2:])
            matrix = warp.matrix_from_points(src_pts, dst_pts)
    except ValueError as error:
        definition_error = error

    size_mode = st.radio(
        _("Output size (dsize)"),
        SIZE_MODES,
        horizontal=True,
        key="warp.size_mode",
        format_func=translator(),
        **BOUND,
    )
    if size_mode == "Custom":
        s1, s2 = st.columns(2)
        out_w = s1.number_input(
            _("Output width"), min_value=0, value=src_w, step=1, key="warp.out_w", **BOUND
        )
        out_h = s2.number_input(
            _("Output height"), min_value=0, value=src_h, step=1, key="warp.out_h", **BOUND
        )
    else:
        factor = {"Same as input": 1.0, "Half (shrink)": 0.5, "Double (enlarge)": 2.0}[size_mode]
        out_w, out_h = max(1, round(src_w * factor)), max(1, round(src_h * factor))
    size_note = st.container()

if definition_error is not None:
    with layout.figure:
        st.error(
            tr(definition_error) + "\n\n" + _(DEFINITION_HINTS[definition]),
            icon=":material/error:",
        )
    st.stop()
try:
    dsize = warp.validate_dsize((out_w, out_h))
except ValueError as error:
    hint = (
        _("Hint: pick an output width and height between {low} and {high} pixels.").format(
            low=warp.MIN_SIDE, high=warp.MAX_OUTPUT_SIDE
        )
        if size_mode == "Custom"
        else _(
            "Hint: '{option}' gives {out_w}×{out_h} for this {src_w}×{src_h} image; choose "
            "another output size option, or Custom."
        ).format(option=_(size_mode), out_w=out_w, out_h=out_h, src_w=src_w, src_h=src_h)
    )
    with layout.figure:
        st.error(tr(error) + "\n\n" + hint, icon=":material/error:")
    st.stop()

case = warp_case(img, matrix, dsize, align_corners, mode, padding_mode, settings.device, notes)
# A large output (from a link or from the size boxes alike) waits for a click stating its time,
# for exactly this case; then it takes its place among the server's heavy jobs.
expected = warp.estimate_warp_seconds(*dsize, mode, notes=notes)
with layout.figure:
    if not heavy_gate(
        "warp.large", expected, dataclasses.astuple(case),  # plain values: WarpCase is
        # defined anew by each run of this script, and a new class's instances never compare equal
        what=_("the {w}×{h} warp").format(w=dsize[0], h=dsize[1]),
        message=_("A {w}×{h} output with {mode} interpolation takes about {seconds:.0f} s on "
                  "this server, which everyone here shares, so it waits until you ask for it. "
                  "A smaller output size (section 1) shows the same lesson at once.").format(
                      w=dsize[0], h=dsize[1], mode=mode, seconds=max(1.0, expected)),
    ):
        # Meanwhile the view's own top-left corner: a smaller dsize crops the same output.
        whole = dsize
        dsize = warp.preview_dsize(whole, mode, notes=notes, seconds=budget_s())
        expected = warp.estimate_warp_seconds(*dsize, mode, notes=notes)
        case = warp_case(img, matrix, dsize, align_corners, mode, padding_mode, settings.device,
                         notes)
        st.caption(_("Meanwhile: the top-left {w}×{h} of the {whole_w}×{whole_h} output (a "
                     "smaller dsize crops the same output).").format(
                         w=dsize[0], h=dsize[1], whole_w=whole[0], whole_h=whole[1]))
try:
    with (layout.figure, st.spinner(_("Warping with cv2.warpAffine and F.grid_sample...")),
          heavy_job() if expected > budget_s() else contextlib.nullcontext()):
        result = case.compare(img)
        correct = dataclasses.replace(case, notes=False).compare(img) if notes else result
except ValueError as error:
    with layout.figure:
        st.error(
            tr(error) + "\n\n" + _("Hint: a different image, transform or output size will work."),
            icon=":material/error:",
        )
    st.stop()

# ------------------------------------------------------------------------------------------
# The main figure: both warps and their difference
# ------------------------------------------------------------------------------------------
theta_name = _("the notes' affine2theta") if notes else "affine_to_theta"
e = result.errors
unit = " " + _("grey levels") if img.dtype == np.uint8 else ""
# An output of at most 2 * border_px pixels on a side has no interior: its figures are NaN.
has_interior = not math.isnan(e.mean_interior)
with layout.figure:
    images_col, heat_col = st.columns([0.36, 0.64], gap="small")
    with images_col:
        show_image(
            result.reference,
            (case, "reference"),
            caption="cv2.warpAffine",
            alt=_("The {w}×{h} output of cv2.warpAffine with the current M.").format(
                w=dsize[0], h=dsize[1]
            ),
            width="stretch",
        )
        show_image(
            result.warped,
            (case, "warped"),
            caption=_("F.grid_sample (notes' theta)") if notes else "F.grid_sample",
            alt=_(
                "The {w}×{h} output of F.affine_grid + F.grid_sample with "
                "{theta_name}; it looks the same as OpenCV's."
            ).format(w=dsize[0], h=dsize[1], theta_name=theta_name),
            width="stretch",
        )
    with heat_col:
        # Max-pooled for the browser (about 300 px wide), so no error can hide in the preview.
        show_chart(
            diff_figure(case, img),
            alt=_(
                "Heat map of |grid_sample − cv2.warpAffine| per output pixel: largest "
                "{largest:.3g}, mean {mean:.3g}{unit}."
            ).format(largest=e.max_whole, mean=e.mean_whole, unit=unit),
            width="stretch",
            theme=None,
            key="warp.diff_chart",
        )

dx, dy = result.notes_shift
shift = float(np.hypot(dx, dy))
if has_interior:
    err_mean, err_max = e.mean_interior, e.max_interior
    ok_mean, ok_max = correct.errors.mean_interior, correct.errors.max_interior
else:
    err_mean, err_max = e.mean_whole, e.max_whole
    ok_mean, ok_max = correct.errors.mean_whole, correct.errors.max_whole
with layout.figure:
    if notes:
        if align_corners:
            how = _(
                "With align_corners=True its 2/W (instead of 2/(W−1)) slightly rescales the "
                "sampling about the top-left corner, so samples are misplaced by "
                "{offset:.3f} px on average (measured on the sampling grid)."
            ).format(offset=result.grid_offset_px)
        else:
            how = _(
                "Every sample is misplaced by the same (dx, dy) = ({dx:+.3f}, {dy:+.3f}) px "
                "(|shift| = {shift:.3f} px; measured on the sampling grid: "
                "{offset:.3f} px)."
            ).format(dx=dx, dy=dy, shift=shift, offset=result.grid_offset_px)
        verdict = (
            _(
                "Interior mean error {err_mean:.3f}{unit} vs {ok_mean:.4f} with the correct "
                "theta; max {err_max:.3g} vs {ok_max:.3g}."
            )
            if has_interior
            else _(
                "Whole-image mean error {err_mean:.3f}{unit} vs {ok_mean:.4f} with the correct "
                "theta; max {err_max:.3g} vs {ok_max:.3g}."
            )
        ).format(err_mean=err_mean, unit=unit, ok_mean=ok_mean, err_max=err_max, ok_max=ok_max)
        head = _("**The notes' affine2theta ({ref}) is in use.**").format(ref=cite("000:18"))
        st.warning(SEP.join((head, how, verdict)), icon=":material/warning:")
    else:
        st.success(
            (
                _(
                    "Correct theta: the two paths agree to {err_mean:.4f}{unit} on average and "
                    "{err_max:.3g} at most inside the border. (Switch on the notes' theta to "
                    "shift every sample by {shift:.3f} px with align_corners=False.)"
                )
                if has_interior
                else _(
                    "Correct theta: the two paths agree to {err_mean:.4f}{unit} on average and "
                    "{err_max:.3g} at most over the whole image. (Switch on the notes' theta to "
                    "shift every sample by {shift:.3f} px with align_corners=False.)"
                )
            ).format(err_mean=err_mean, unit=unit, err_max=err_max, shift=shift),
            icon=":material/check_circle:",
        )

# What the output size does, measured on this warp (the correct theta, on the CPU).
with size_note:
    try:
        check = _canvas_check(
            dataclasses.replace(case, notes=False),
            img,
            correct.warped if settings.device == "cpu" else None,
        )
    except ValueError as error:  # e.g. reflection too far outside at the input's own size
        st.caption(
            _("The output-size check could not run for this transform: {error}").format(
                error=tr(error)
            )
        )
    else:
        channels = 1 if img.ndim == 2 else img.shape[2]
        st.caption(SEP.join(tr(part) for part in warp.output_size_caption_parts(check, channels)))
    # Drawn only when opened (a callout is ~15 elements, 10% of the page's cost for a class).
    size_notes = lazy_expander(N_("The notes on affine_grid's size ({ref})"),
                               key="warp.size_notes_box", ref=cite("000:18"))
    if size_notes is not None:
        with size_notes:
            notes_callout(callouts_of("lessons.warp.affine")["affine_grid_size_vs_dsize"])

# ------------------------------------------------------------------------------------------
# Details, section 2: the difference in numbers
# ------------------------------------------------------------------------------------------
details = layout.details
details.header(_("2. The difference in numbers"), anchor=False)
m1, m2, m3, m4 = details.columns(4)
m1.metric(
    _("Interior max |Δ|"),
    f"{e.max_interior:.3g}" if has_interior else _("n/a"),
    help=_(
        "Largest |grid_sample − cv2.warpAffine| with a {border} px border excluded on "
        "every side (the border is where the two libraries' padding rules meet)."
    ).format(border=e.border_px),
)
m2.metric(
    _("Interior mean |Δ|"),
    f"{e.mean_interior:.4f}" if has_interior else _("n/a"),
    help=_("Mean |Δ| with a {border} px border excluded on every side.").format(border=e.border_px),
)
m3.metric(_("Whole-image max |Δ|"), f"{e.max_whole:.3g}")
m4.metric(_("Whole-image mean |Δ|"), f"{e.mean_whole:.4f}")
details.caption(
    _(
        "Compared: cv2.warpAffine with {interpolation} and {border}, and "
        "F.grid_sample with mode={mode!r}, padding_mode={padding_mode!r}, "
        "align_corners={align_corners} and {theta_name}."
    ).format(
        interpolation=result.cv2_interpolation,
        border=result.cv2_border,
        mode=mode,
        padding_mode=padding_mode,
        align_corners=align_corners,
        theta_name=theta_name,
    )
)
if mode == "nearest":
    details.caption(
        _(
            "Nearest neighbour: {differing} output pixels differ, "
            "{off_ties} of them away from a rounding tie (a sample point within "
            "{tie:g} px of k + 0.5, where OpenCV and grid_sample may round to different "
            "neighbours)."
        ).format(
            differing=result.differing_pixels,
            off_ties=result.differing_off_ties,
            tie=warp.TIE_PX,
        )
    )
if not has_interior:
    details.info(
        _(
            "The output ({w}×{h}) has no interior once the {border} px border "
            "is excluded, so the verdict is for the whole image. Pick a larger output size "
            "for interior figures."
        ).format(w=dsize[0], h=dsize[1], border=e.border_px),
        icon=":material/info:",
    )

with layout.details:
    row = case.profile_row
    show_chart(
        profile_figure(case, img),
        alt=_(
            "Output row {row} of both warps, mean over channels: the two curves overlap "
            "unless one path samples shifted."
        ).format(row=row),
        width="stretch",
        key="warp.profile_chart",
    )

    # ------------------------------------------------------------------------------------------
    # 4. Matrices and the sampling grid
    # ------------------------------------------------------------------------------------------
    st.header(_("3. From M to theta, and where each output pixel samples"), anchor=False)
    mats = result.matrices
    tab_mats, tab_grid = st.tabs([_("Matrices"), _("Sampling grid")])
    with tab_mats:
        st.latex(
            r"\theta = N_{src}\, M^{-1}\, N_{dst}^{-1}\quad\text{("
            + _("top two rows of the 3×3")
            + ")}"
        )
        st.latex(mats.formula)
        st.caption(
            (
                _(
                    "align_corners=True: −1 and 1 are the centres of the corner pixels. N_src "
                    "uses the input size {src_w}×{src_h}, N_dst the output size {w}×{h}."
                )
                if align_corners
                else _(
                    "align_corners=False: −1 and 1 are the outer edges of the image, half a "
                    "pixel beyond the corner pixel centres. N_src uses the input size "
                    "{src_w}×{src_h}, N_dst the output size {w}×{h}."
                )
            ).format(src_w=src_w, src_h=src_h, w=dsize[0], h=dsize[1])
        )
        # Inline maths, one matrix a line: a display formula (st.latex) is a scroll region, and
        # the 3x3 matrices overflowed it by a few pixels, so axe-core flagged a scroll region a
        # keyboard cannot reach (scrollable-region-focusable).
        for name, value in (
            (r"N_{src}", mats.n_src),
            (r"M^{-1}", mats.m_inv),
            (r"N_{dst}", mats.n_dst),
            (r"\theta", mats.theta),
            (r"M", mats.m),
            *([(r"\theta_{correct}", mats.correct_theta)] if notes else []),
        ):
            st.markdown(matrix_markdown(name, value))
        with st.expander(_("Why the inverse, and why normalize?")):
            st.markdown(
                _(
                    "cv2.warpAffine reads the destination pixel d from the source at M⁻¹·d, so "
                    "the matrix it needs internally is the inverse of the one you give it. "
                    "affine_grid does the same lookup but wants it in normalized coordinates: for "
                    "each output position in [−1, 1] it returns an input position in [−1, 1]. So "
                    "we convert output pixels to normalized coordinates backwards (N_dst⁻¹), "
                    "apply M⁻¹, and normalize the result with the input size (N_src). Here "
                    "theta[0, 2] = {theta02:.4f}: the normalized input x read by the output's "
                    "centre column when the image is not rotated."
                ).format(theta02=mats.theta[0, 2])
            )
    with tab_grid:
        grid = result.grid
        g1, g2 = st.columns([3, 2])
        with g1:
            show_chart(
                grid_figure(case, img),
                alt=_(
                    "The input image with {n} dots: where every {step}th "
                    "output pixel reads the input, and the output frame as a dashed outline."
                ).format(n=grid.in_x.size, step=grid.step),
                width="stretch",
                key="warp.grid_chart",
            )
        zoom = result.zoom
        with g2:
            show_chart(
                zoom_figure(case, img),
                alt=_(
                    "Close-up of {n} neighbouring output pixels: filled dots "
                    "where grid_sample reads, rings where cv2.warpAffine reads."
                ).format(n=zoom.out_x.size),
                width="stretch",
                key="warp.zoom_chart",
            )
        st.caption(
            (
                _(
                    "Overview: {n} output pixels, coloured by output x. "
                    "Hover a dot: output pixel ← input coordinate. Dots outside the picture read "
                    "the padding ({padding_mode}). The dashed outline is the output frame seen "
                    "from the input. In the close-up, a dot centred in its white ring means "
                    "grid_sample reads exactly where OpenCV does; with the notes' theta every dot "
                    "sits {offset:.3f} px off its ring."
                )
                if notes
                else _(
                    "Overview: {n} output pixels, coloured by output x. "
                    "Hover a dot: output pixel ← input coordinate. Dots outside the picture read "
                    "the padding ({padding_mode}). The dashed outline is the output frame seen "
                    "from the input. In the close-up, a dot centred in its white ring means "
                    "grid_sample reads exactly where OpenCV does (mean offset now {offset:.1e} px)."
                )
            ).format(n=grid.in_x.size, padding_mode=padding_mode, offset=result.grid_offset_px)
        )

    # ------------------------------------------------------------------------------------------
    # 5. Timing and code
    # ------------------------------------------------------------------------------------------
    st.header(_("4. Timing"), anchor=False)
    st.caption(
        _(
            "Both paths on the current image and output size; torch on `{device}`. On a GPU, "
            "torch.cuda.synchronize() runs before starting and before stopping the clock, because "
            "CUDA calls return before the kernel has finished."
        ).format(device=settings.device)
    )
    if st.button(_("Time both paths (median of 5)"), key="warp.time", icon=":material/timer:"):
        try:
            # a heavy job: timings taken beside another heavy job would measure the contention
            with (st.spinner(_("Timing cv2.warpAffine and affine_grid + grid_sample...")),
                  heavy_job()):
                timing = warp.time_warps(
                    img,
                    matrix,
                    dsize,
                    align_corners=align_corners,
                    mode=mode,
                    padding_mode=padding_mode,
                    device=settings.device,
                )
        except ValueError as error:
            st.error(
                tr(error) + "\n\n" + _("Hint: choose another device in the sidebar."),
                icon=":material/error:",
            )
        else:
            t1, t2, t3, t4 = st.columns(4)
            t1.metric("cv2.warpAffine (CPU)", f"{timing.cv2_ms:.2f} ms")
            t2.metric(
                _("torch end to end ({device})").format(device=timing.device),
                f"{timing.torch_ms:.2f} ms",
            )
            t3.metric(_("affine_grid + grid_sample only"), f"{timing.torch_kernel_ms:.2f} ms")
            t4.metric("torch / cv2", f"{timing.ratio:.1f}×")
            st.caption(
                _(
                    "End to end = numpy → tensor on the device → affine_grid + grid_sample → "
                    "numpy. The grid_sample path also builds a float grid of 2·H·W coordinates "
                    "first."
                )
            )

    sample = st.session_state.get("warp.image.sample", "chelsea.png")
    if st.session_state.get("warp.image.source") == UPLOAD:
        image_code = "np.array(Image.open('your_image.png').convert('RGB'))"
    else:
        image_code = (
            f"np.array(Image.open(Path(skimage.data.data_dir) / {str(sample)!r}).convert('RGB'))"
        )
    show_code(
        warp.snippet_for(
            matrix,
            dsize,
            align_corners=align_corners,
            mode=mode,
            padding_mode=padding_mode,
            device=settings.device,
            notes=notes,
            image_code=image_code,
        )
    )
