"""Flow hole filling: optical flow with NaN holes, filled by multi-scale masked means."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from core.figure_style import png_data_uri
from core.text import N_, T
from lessons.flow.figures import flow_to_rgb
from lessons.flow.fill import (
    METHOD_CV2,
    METHOD_TORCH,
    NOTES_NUMPY_MAX_HOLES,
    NOTES_NUMPY_METHOD,
    NOTES_REFERENCE_DEFAULT_MAX_PIXELS,
    NOTES_REFERENCE_MS_PER_UNIT,
    NOTES_TORCH_METHOD,
    OTHER_METHODS,
    WINDOWED_METHODS,
    FlowCase,
    FlowSpec,
    MethodResult,
    build_flow,
    case_from_flow,
    case_from_images,
    check_fillable,
    combine_methods,
    estimate_method_ms,
    estimate_notes_ms,
    load_flow_file,
    notes_reference_on_by_default,
    notes_reference_work,
    run_method,
)
from lessons.flow.gradual_mean import FillResult, scale_means, window_sizes
from lessons.flow.notes_checks import NOTES_CLAIM_REF, NOTES_CLAIM_ZH, notes_speed_claim
from lessons.flow.references import notes_window_sizes
from lessons.flow.snippets import notes_numpy_snippet_for, snippet_for
from lessons.flow.sources import MAX_SIDE, SYNTHETIC_FIELDS, decode_image
from ui.caching import bounded_cache
from ui.charts import shared_figure, show_chart
from ui.code import show_code
from ui.heavy import budget_s, heavy_gate, heavy_job
from ui.i18n import _, cite, tr, translator
from ui.images import upload_digest
from ui.lesson import lesson_layout
from ui.links import BOUND
from ui.markdown import plain
from ui.notes_callout import callouts_of, notes_callout, notes_quote
from ui.settings import current_settings

IMAGE_CAP = 1024  # uploaded image pairs: Farneback + every method must stay interactive
SOURCES = {
    "synthetic": N_("Synthetic (ground truth)"),
    "stereo": N_("Motorcycle stereo pair"),
    "affine": N_("Image + affine warp"),
    "upload_flow": N_("Upload a flow file"),
    "upload_pair": N_("Upload two images"),
}
SOURCE_HELP = N_(
    "Synthetic: a known motion field, so the fill is scored against the ground truth. "
    "Motorcycle stereo pair: Farneback flow on scikit-image's pair. Image + affine warp: "
    "Farneback on an image and a copy warped by a known affine (ground truth). Uploads: a "
    ".flo / .npy flow file, or two images whose Farneback flow is computed here."
)
MASKS = {
    "random": N_("Random pixels"),
    "blobs": N_("Blobs"),
    "stripes": N_("Stripes"),
    "border": N_("Border band"),
    "fb": N_("Forward-backward check"),
}
#: The synthetic motion fields' names, shown in the menu (the values stay core's names).
FIELD_LABELS = {
    "translation": N_("translation"),
    "rotation": N_("rotation"),
    "zoom": N_("zoom"),
    "shear": N_("shear"),
    "vortex": N_("vortex"),
    "piecewise": N_("piecewise"),
}
#: A case's reference, as a panel title (capitalised) and inside a sentence.
REFERENCE_TITLES = {"ground truth": N_("Ground truth"), "pre-mask flow": N_("Pre-mask flow")}
SIZES = {"240x320": (240, 320), "480x640": (480, 640), "720x1280": (720, 1280)}
WINDOW_CHOICES = [3, 5, 9, 17, 33, 65, 129]
PANEL_MAX_SIDE = 320  # the main figure's panels are drawn ~300 px wide, on a projector too
HEAT_MAX_SIDE = 640  # a full 720x1280 float heat map is ~12 MB of plotly JSON per chart and rerun
#: The lazy tabs under the picture; only the open one runs (the first is open on arrival).
DETAIL_TABS = (N_("Window sizes"), N_("Accuracy and speed"), N_("The notes' NumPy loop"))
CACHE_TTL_S = 3600  # shared results live an hour, then are computed again
#: Mask panel colours: valid flow pale blue, holes near-black, so a mask that is all holes or
#: all valid (a border band, a full hole fraction) still shows against the white page.
MASK_VALID_RGB = (198, 219, 239)
MASK_HOLE_RGB = (17, 17, 17)
FRAME = dict(showline=True, mirror=True, linecolor="#555555", linewidth=1)

settings = current_settings()
# Every value control is in the URL (a lesson link opens this view) and keeps its value across a
# visit to another page (**BOUND); the uploads are neither.
layout = lesson_layout(
    N_("Flow hole filling"),
    N_("the black holes in the flow (left), where they are (dark in the mask), and the same flow "
       "filled by averaging masked window means of sizes 3, 5, 9, ... (colour = direction, "
       "strength = speed)."),
)


@bounded_cache(max_entries=8, ttl=CACHE_TTL_S)
def _built_case(spec: FlowSpec) -> FlowCase:
    """Built-in cases, shared by every session (same spec, same flow)."""
    return build_flow(spec)


@bounded_cache(max_entries=4, ttl="30m")
def _flow_file(digest: str, suffix: str, _data: bytes) -> np.ndarray:
    """An uploaded flow file (SHA-256 ``digest``) decoded once, whatever the mask settings: its
    header is checked before its data is read (``load_flow_file``)."""
    return load_flow_file(f"flow{suffix}", _data)


@bounded_cache(max_entries=4, ttl=CACHE_TTL_S)
def _uploaded_case(origin: tuple, spec: FlowSpec, _data: tuple[bytes, ...]) -> FlowCase:
    """Cases from uploads, keyed on the files' SHA-256 (``origin``) and the mask settings."""
    if origin[0] == "file":
        flow = _flow_file(origin[2], Path(origin[1]).suffix.lower(), _data[0])
        return case_from_flow(flow, spec)
    img1 = decode_image(_data[0], T("the first image"), max_side=IMAGE_CAP)
    img2 = decode_image(_data[1], T("the second image"), max_side=IMAGE_CAP)
    return case_from_images(img1, img2, spec)


class SharedResults:
    """Fill results shared by every session of this server: at most ``max_entries``, each kept
    ``ttl_s`` seconds. A key being computed is computed once; other sessions asking for it
    meanwhile wait and get the same result. (Not ``st.cache_data``: it replays the progress
    bar that a long fill draws, into a block that no longer exists.) Results are shared
    objects: read them, never write to them."""

    def __init__(self, max_entries: int, ttl_s: float) -> None:
        self.max_entries, self.ttl_s = max_entries, ttl_s
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple, tuple[object, float]] = OrderedDict()
        self._key_locks: dict[tuple, threading.Lock] = {}

    def ready(self, key: tuple) -> bool:
        """Whether ``key`` is computed and fresh (a get would not compute it)."""
        with self._lock:
            hit = self._items.get(key)
            return hit is not None and time.time() - hit[1] < self.ttl_s

    def get_or_compute(self, key: tuple, compute: Callable[[], object]) -> tuple[object, float]:
        """``(value, time it was computed)``; compute only on a miss or an expired entry."""
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                hit = self._items.get(key)
                if hit is not None and time.time() - hit[1] < self.ttl_s:
                    self._items.move_to_end(key)
                    return hit
            item = (compute(), time.time())
            with self._lock:
                self._items[key] = item
                self._items.move_to_end(key)
                while len(self._items) > self.max_entries:
                    old, _item = self._items.popitem(last=False)
                    self._key_locks.pop(old, None)
            return item


@st.cache_resource(show_spinner=False)
def _shared_results() -> SharedResults:
    return SharedResults(max_entries=40, ttl_s=CACHE_TTL_S)


def _method(
    case_key: tuple, case: FlowCase, name: str, max_window: int, device: str,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[MethodResult, float]:
    """One method's result on one case, shared by every session; with the time it was computed
    (a stamp before this run's start means the timing came from the cache)."""
    return _shared_results().get_or_compute(  # type: ignore[return-value]
        ("method", case_key, name, max_window, device),
        lambda: run_method(case, name, max_window=max_window, device=device,
                           progress=progress),
    )


def _scale_means(case_key: tuple, case: FlowCase, max_window: int) -> dict[int, np.ndarray]:
    return _shared_results().get_or_compute(  # type: ignore[return-value]
        ("per_scale", case_key, max_window), lambda: scale_means(case.flow, max_window)
    )[0]


@st.cache_resource(show_spinner=False)
def _reference_rates() -> dict[str, tuple[float, str]]:
    """Latest measured rate of the notes' reference per device (ms per work unit, clock time),
    shared by the sessions of this server process."""
    return {}


def _panel_step(img: np.ndarray) -> int:
    """Stride that keeps a panel at most PANEL_MAX_SIDE px a side."""
    return -(-max(img.shape[:2]) // PANEL_MAX_SIDE)


def _panel(img: np.ndarray) -> np.ndarray:
    """An (H, W, 3) uint8 panel at most PANEL_MAX_SIDE px a side (it is drawn ~300 px wide)."""
    step = _panel_step(img)
    return np.ascontiguousarray(img[::step, ::step])


def mask_rgb(mask: np.ndarray) -> np.ndarray:
    """(H, W) bool hole mask -> (H, W, 3) uint8: holes MASK_HOLE_RGB, valid MASK_VALID_RGB."""
    return np.where(mask[..., None], np.array(MASK_HOLE_RGB, np.uint8),
                    np.array(MASK_VALID_RGB, np.uint8))


def _main_fig(panels: list[tuple[np.ndarray, str]]) -> go.Figure:
    """The lesson's picture: flow with holes, the mask, the fill (and the reference)."""
    cols = 2 if len(panels) == 4 else len(panels)
    rows = -(-len(panels) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[t for _img, t in panels],
                        horizontal_spacing=0.03, vertical_spacing=0.09)
    for i, (img, _title) in enumerate(panels):
        fig.add_trace(go.Image(source=png_data_uri(_panel(img)), hoverinfo="skip"),
                      row=i // cols + 1, col=i % cols + 1)
    # no axis frames here: Plotly draws them around each subplot's domain, not the image, so
    # they read as a grid; the mask's pale-blue valid pixels keep it visible on white instead
    axes = dict(showticklabels=False, ticks="", showgrid=False, zeroline=False)
    fig.update_xaxes(**axes)
    fig.update_yaxes(**axes)
    fig.update_layout(margin=dict(l=0, r=0, t=30, b=0), height=205 * rows + 40,
                      font=dict(color="#111111"))
    return fig


# Figures are built from go objects and one layout dict: plotly.express and chained update_*
# calls cost 30-50 ms a figure in property validation, a visible share of every rerun.
def _picture_axes(height: int, width: int) -> dict[str, object]:
    """Layout for one (height, width)-pixel picture: the frame hugs the pixels (no padding, no
    grid or ticks over them), square pixels, row 0 on top."""
    bare = dict(showticklabels=False, ticks="", showgrid=False, zeroline=False,
                constrain="domain", **FRAME)
    return dict(xaxis=dict(range=[-0.5, width - 0.5], **bare),
                yaxis=dict(range=[height - 0.5, -0.5], scaleanchor="x", **bare))


def _image_fig(img: np.ndarray, title: str) -> go.Figure:
    return go.Figure(
        go.Image(source=png_data_uri(_panel(img)), dx=_panel_step(img), dy=_panel_step(img),
                 x0=(_panel_step(img) - 1) / 2, y0=(_panel_step(img) - 1) / 2,
                 hoverinfo="skip"),
        layout=dict(title=title, margin=dict(l=0, r=0, t=30, b=0), height=300,
                    **_picture_axes(*img.shape[:2])),
    )


def _heat_step(shape: tuple[int, ...]) -> int:
    """Stride that keeps a heat map at most HEAT_MAX_SIDE pixels a side (1 = full resolution)."""
    return -(-max(shape[:2]) // HEAT_MAX_SIDE)


def _heat_fig(z: np.ndarray, title: str, colorbar: str, *, zmin: float | None = None,
              zmax: float | None = None) -> go.Figure:
    step = _heat_step(z.shape)
    z = np.ascontiguousarray(z[::step, ::step], dtype=np.float32)
    heat = go.Heatmap(
        z=z, x0=(step - 1) / 2, dx=step, y0=(step - 1) / 2, dy=step, zmin=zmin, zmax=zmax,
        colorscale="viridis", colorbar=dict(title=dict(text=colorbar)),
        zsmooth="fast",  # one bitmap instead of a fillRect per cell: same look, far less work
        hovertemplate="x=%{x}, y=%{y}<br>%{z:.3g}<extra></extra>",
    )
    full_h, full_w = z.shape[0] * step, z.shape[1] * step
    return go.Figure(heat, layout=dict(title=title, margin=dict(l=0, r=0, t=30, b=0),
                                       height=300, **_picture_axes(full_h, full_w)))


# ---------------------------------------------------------------- shared figures
# Issue 13: a class opening the same lesson shares one server, and building a figure costs
# 20-80 ms of the GIL. Each figure below is built once per process for its key and then handed to
# every session, read-only. ``case_key`` names the case (a built-in spec, or an upload's SHA-256
# and the mask spec); arguments starting with ``_`` are not part of the key (Streamlit does not
# hash them): they are this session's copies of what the key already determines.
SHARED_FIGURES = 16  # per builder: a few cases x max_window settings while a lesson runs


def _reference_title(kind: str) -> str:
    """``"Ground truth"`` / ``"Pre-mask flow"``, in this session's language."""
    return _(REFERENCE_TITLES[kind]) if kind in REFERENCE_TITLES else _(kind).capitalize()


def _flow_rgbs(case: FlowCase, main: MethodResult) -> list[np.ndarray]:
    """Colour images of the flow with holes, its fill (and the reference), on one shared scale."""
    pictures = [case.flow, main.filled]
    if case.reference is not None:
        pictures.append(case.reference)
    return flow_to_rgb(*pictures)


@shared_figure(max_entries=SHARED_FIGURES)
def _main_figure(case_key: tuple, max_window: int, _case: FlowCase,
                 _main: MethodResult) -> go.Figure:
    """The lesson's picture of ``_case`` and its main fill ``_main`` at ``max_window``."""
    rgb = _flow_rgbs(_case, _main)
    panels = [(rgb[0], _("Flow with holes (black)")), (mask_rgb(_case.mask), _("Holes (dark)")),
              (rgb[1], _("Filled: gradual mean"))]
    if _case.reference is not None:
        panels.append((rgb[2], _reference_title(_case.reference_kind)))
    return _main_fig(panels)


@shared_figure(max_entries=SHARED_FIGURES)
def _reference_figure(case_key: tuple, max_window: int, _case: FlowCase,
                      _main: MethodResult) -> go.Figure:
    """The reference flow alone, coloured on the main picture's scale (which the fill sets)."""
    return _image_fig(_flow_rgbs(_case, _main)[2], _(_case.reference_kind))


@shared_figure(max_entries=SHARED_FIGURES)
def _scales_map_figure(case_key: tuple, max_window: int, _case: FlowCase,
                       _fill: FillResult) -> go.Figure:
    """How many window sizes had a valid sample, at each hole of ``_case``."""
    used = _fill.scales_used[..., 0].astype(float)
    used[~_case.mask] = np.nan
    return _heat_fig(used, _("Scales that contributed (holes)"), _("scales"), zmin=0,
                     zmax=len(window_sizes(max_window)))


def _scales_histogram(case: FlowCase, fill: FillResult, scales: int) -> tuple[int, ...]:
    """Hole pixels by how many of the ``scales`` window sizes contributed (0 to ``scales``)."""
    return tuple(int(n) for n in np.bincount(fill.scales_used[..., 0][case.mask],
                                             minlength=scales + 1))


@shared_figure(max_entries=SHARED_FIGURES)
def _scales_hist_figure(hist: tuple[int, ...]) -> go.Figure:
    """Bar chart of :func:`_scales_histogram`; the counts are small, so they are the key."""
    return go.Figure(
        go.Bar(x=[str(i) for i in range(len(hist))], y=list(hist),
               hovertemplate=_("%{x} scales: %{y:,} hole pixels<extra></extra>")),
        layout=dict(title=_("Hole pixels by contributing scales"), height=300,
                    margin=dict(l=0, r=0, t=30, b=0),
                    xaxis_title=_("scales with a valid sample"), yaxis_title=_("hole pixels")),
    )


def _per_scale_rgbs(case_key: tuple, case: FlowCase, main: MethodResult,
                    per_scale: dict[int, np.ndarray], max_window: int) -> list[np.ndarray]:
    """Each scale's masked mean at the holes as a colour image, on one scale with the fill;
    computed once for all the scales' figures (the shared scale needs every map)."""
    def colour() -> list[np.ndarray]:
        maps = []
        for k in window_sizes(max_window):
            holes_only = per_scale[k].copy()
            holes_only[~case.mask] = np.nan
            maps.append(holes_only)
        return flow_to_rgb(*maps, main.filled)[:-1]

    return _shared_results().get_or_compute(  # type: ignore[return-value]
        ("per_scale_rgb", case_key, max_window), colour
    )[0]


@shared_figure(max_entries=2 * SHARED_FIGURES)  # one per window size of a few settings
def _scale_figure(case_key: tuple, max_window: int, k: int, _case: FlowCase,
                  _main: MethodResult, _per_scale: dict[int, np.ndarray]) -> go.Figure:
    """The ``k`` x ``k`` window's masked mean at the holes (``_per_scale``: every scale's)."""
    rgbs = _per_scale_rgbs(case_key, _case, _main, _per_scale, max_window)
    return _image_fig(rgbs[window_sizes(max_window).index(k)],
                      _("window {k}x{k}").format(k=k))


@shared_figure(max_entries=2 * SHARED_FIGURES)  # one per method of a few settings
def _epe_figure(case_key: tuple, method: str, max_window: int, device: str, _case: FlowCase,
                _row: MethodResult) -> go.Figure:
    """Endpoint error of ``method`` (run with ``max_window`` on ``device``) on the holes."""
    epe = np.where(_case.mask, _row.epe, np.nan)
    return _heat_fig(epe, _("Endpoint error vs {reference}").format(
        reference=_(_case.reference_kind)), "px")


@shared_figure(max_entries=SHARED_FIGURES)
def _timing_figure(times: tuple[tuple[str, float], ...]) -> go.Figure:
    """Each method's time in ms; keyed on the times shown, so it never disagrees with the table."""
    return go.Figure(
        go.Bar(x=[ms for _name, ms in times], y=[_(name) for name, _ms in times],
               orientation="h",
               hovertemplate="%{y}: %{x:.3g} ms<extra></extra>"),
        # dtick=1: label the powers of ten only (no small 2 and 5 labels)
        layout=dict(title=_("Time per method"), height=300, margin=dict(l=0, r=0, t=30, b=0),
                    xaxis=dict(type="log", dtick=1, title=_("ms (log scale)"))),
    )


def _show_comparison_if_on() -> None:
    """Switching the notes' reference on opens the tab where its time and error appear."""
    if st.session_state.get("flow.notes"):
        st.session_state["flow.details_tab"] = _(DETAIL_TABS[1])


#: Sources whose flow comes from two images: the forward-backward check applies to them only.
IMAGE_SOURCES = ("stereo", "affine", "upload_pair")


def _suggest_mask() -> None:
    """When the visitor picks another source, suggest its mask: the forward-backward check for
    two images, random pixels when that check no longer applies.

    A suggestion, not the menu's default: Streamlit leaves a value equal to the default out of
    the URL, so a default that followed the source would make a link drop the mask a visitor
    kept (the stereo pair with random pixels would open with the forward-backward check)."""
    if st.session_state.get("flow.source") in IMAGE_SOURCES:
        st.session_state["flow.mask"] = "fb"
    elif st.session_state.get("flow.mask") == "fb":
        st.session_state["flow.mask"] = "random"


class _QuietStatus:
    """Stands in for ``st.status`` when only the main fill runs: nothing to report."""

    def update(self, **_kwargs: object) -> None:
        pass


def _fail(message: str, hint: str) -> None:
    with layout.figure:
        # The message can quote the file (its name, its header): shown as written, not markdown.
        st.error(_("{message}\n\n**What to change:** {hint}").format(message=plain(message),
                                                                     hint=hint))
    st.stop()


def _seconds(ms: float) -> str:
    return f"{ms / 1e3:.1f} s" if ms >= 1e3 else f"{ms:.0f} ms"


# ---------------------------------------------------------------- controls
with layout.controls:
    t = translator()
    source = st.selectbox(_("Flow source"), list(SOURCES), format_func=lambda v: t(SOURCES[v]),
                          key="flow.source", help=_(SOURCE_HELP), on_change=_suggest_mask,
                          **BOUND)
    field, size, noise = "rotation", "240x320", 0.0
    upload = None
    pair: tuple[object, object] = (None, None)
    if source == "synthetic":
        field = st.selectbox(_("Motion field"), SYNTHETIC_FIELDS, index=1, key="flow.field",
                             format_func=lambda v: t(FIELD_LABELS.get(v, v)), **BOUND)
        size = st.selectbox(_("Size (H x W)"), list(SIZES), key="flow.size", **BOUND)
        noise = st.slider(_("Noise (px std)"), 0.0, 1.0, 0.2, 0.05, key="flow.noise", **BOUND,
                          help=_("Gaussian noise on the observed flow; the ground truth stays "
                                 "clean."))
    elif source == "upload_flow":
        upload = st.file_uploader(
            _("Flow file"), type=["flo", "npy"], key="flow.file",
            help=_("Middlebury .flo or a .npy of shape (H, W, 2) float, at most {max_side} px "
                   "a side. NaN in the file are its holes; a file without NaN gets the mask "
                   "below.").format(max_side=MAX_SIDE),
        )
    elif source == "upload_pair":
        pair = (
            st.file_uploader(_("First image"), type=["png", "jpg", "jpeg", "bmp"],
                             key="flow.image1"),
            st.file_uploader(_("Second image"), type=["png", "jpg", "jpeg", "bmp"],
                             key="flow.image2"),
        )
    image_source = source in IMAGE_SOURCES
    mask_options = list(MASKS) if image_source else [m for m in MASKS if m != "fb"]
    # The default is the same for every source (see _suggest_mask), so a link that leaves the
    # mask out means the same mask whatever source it names.
    mask = st.selectbox(_("Hole mask"), mask_options, format_func=lambda v: t(MASKS[v]),
                        key="flow.mask", index=0, **BOUND)
    fraction, hole_size, fb_threshold = 0.3, 12, 1.0
    if mask in ("random", "blobs", "stripes"):
        fraction = st.slider(_("Hole fraction"), 0.05, 1.0, 0.3, 0.05, key="flow.fraction",
                             **BOUND)
    if mask in ("blobs", "stripes", "border"):
        hole_size = st.slider(_("Hole width (px)"), 1, 80, 12, key="flow.hole_size", **BOUND,
                              help=_("Blob radius, stripe width or border band width, in "
                                     "pixels."))
    if mask == "fb":
        fb_threshold = st.slider(_("Round-trip threshold (px)"), 0.1, 5.0, 1.0, 0.1,
                                 key="flow.fb_threshold", **BOUND,
                                 help=_("Hole where flow there and back misses by more than "
                                        "this."))
    max_window = st.select_slider("max_window", WINDOW_CHOICES, value=33, key="flow.max_window",
                                  **BOUND,
                                  help=_("Largest window; the sizes are 2**k + 1 up to it."))
    windows = window_sizes(int(max_window))
    st.markdown(_("**Windows:** {sizes}").format(sizes=", ".join(f"`{k}x{k}`" for k in windows)))

h, w = SIZES[size]
spec = FlowSpec(source=source if source in ("synthetic", "stereo", "affine") else "synthetic",
                field=field, height=h, width=w, noise=noise, mask=mask, fraction=fraction,
                hole_size=hole_size, fb_threshold=fb_threshold, seed=settings.seed % 2**31)

# ---------------------------------------------------------------- build the case
run_start = time.time()
case: FlowCase | None = None
if source == "upload_flow":
    wrong_hint = _("upload a flow file with finite values where the flow is known (NaN only "
                   "at the holes), or pick a built-in source.")
else:
    wrong_hint = _("lower the hole fraction or the band width, or pick another source.")
try:
    with layout.figure, st.spinner(_("Preparing the flow (Farneback runs both ways for real "
                                     "images)...")):
        if source in ("synthetic", "stereo", "affine"):
            case = _built_case(spec)
            origin: tuple[object, ...] = ("built-in",)
        elif source == "upload_flow":
            if upload is None:
                st.info(_("Upload a .flo or .npy flow file to continue."))
                st.stop()
            data = upload.getvalue()
            origin = ("file", upload.name, upload_digest(upload))
            case = _uploaded_case(origin, spec, (data,))
        else:
            if pair[0] is None or pair[1] is None:
                st.info(_("Upload two images of the same size to compute their flow."))
                st.stop()
            datas = (pair[0].getvalue(), pair[1].getvalue())
            origin = ("pair", *(upload_digest(image) for image in pair))
            case = _uploaded_case(origin, spec, datas)
        check_fillable(case)
except ValueError as exc:
    _fail(tr(exc), wrong_hint if "NaN" in str(exc) else
          _("pick another file or source, or change the mask settings."))

assert case is not None
case_key = (origin, spec)
shape = case.flow.shape
hole_px = int(np.count_nonzero(case.mask))
total_px = case.mask.size

# ---------------------------------------------------------------- the notes' reference switch
# Off by default above 240x320 (seconds on a 2-core CPU, ~20 s at 720x1280); reset to that
# default whenever the flow's size changes, so picking 720x1280 never starts a long run. Not on
# the first run of a session: there the switch is at its default, or what a link asked for.
notes_default = notes_reference_on_by_default(shape)
last_shape = st.session_state.get("flow.notes_shape")
st.session_state["flow.notes_shape"] = shape[:2]
if last_shape is not None and last_shape != shape[:2]:
    st.session_state["flow.notes"] = notes_default
rate, rate_when = _reference_rates().get(settings.device, (NOTES_REFERENCE_MS_PER_UNIT, ""))
expected_ms = estimate_notes_ms(shape, int(max_window), rate)
with layout.controls:
    with_notes = st.toggle(
        _("Notes' avg_pool2d"), value=notes_default, key="flow.notes", **BOUND,
        on_change=_show_comparison_if_on,
        help=_("Run and time the notes' vectorised avg_pool2d version (000:80) beside the fast "
               "backends, in the *Accuracy and speed* tab (switching it on opens that tab). It "
               "is slow on a CPU, so it is off by default above {pixels:,} pixels (240x320)."
               ).format(pixels=NOTES_REFERENCE_DEFAULT_MAX_PIXELS),
    )
    basis = (_("rate measured here at {when}").format(when=rate_when) if rate_when
             else _("rate measured on this 2-core CPU"))
    st.markdown(
        _("Notes' version: about **{time}** on `{device}` at {h}x{w} ({basis})").format(
            time=_seconds(expected_ms), device=settings.device, h=shape[0], w=shape[1],
            basis=basis)
        + ("" if with_notes else _("; off."))
    )

# ---------------------------------------------------------------- the main fill and the picture
main_row, main_at = _method(case_key, case, METHOD_CV2, int(max_window), "cpu")
with layout.figure:
    show_chart(
        _main_figure(case_key, int(max_window), case, main_row), key="flow.main_figure",
        alt=(_("Flow colour images: the {case} flow with {holes:,} hole pixels in black, the "
               "hole mask (holes dark, valid flow pale blue), the flow filled by the gradual "
               "mean, and the {reference}.") if case.reference is not None else
             _("Flow colour images: the {case} flow with {holes:,} hole pixels in black, the "
               "hole mask (holes dark, valid flow pale blue), the flow filled by the gradual "
               "mean.")).format(case=_(case.description), holes=hole_px,
                                reference=_(case.reference_kind)),
    )
    st.markdown(
        _("{case}: {pixels:,} pixels, {holes:,} holes ({share:.0%}). Colours: torchvision's "
          "flow_to_image, hue = direction, saturation = speed, one shared scale.").format(
            case=_(case.description), pixels=total_px, holes=hole_px, share=hole_px / total_px)
    )

# ---------------------------------------------------------------- the other methods, in stages
with layout.details:
    # Lazy tabs (on_change="rerun"): the other methods run only while a tab that shows them is
    # open, so a change to the picture's controls costs one fill, not six (issue 12).
    windows_box, accuracy_box, numpy_box = st.tabs(
        [_(label) for label in DETAIL_TABS], key="flow.details_tab", on_change="rerun",
        bind="query-params",
    )
    rest_box = st.container()
compare = bool(accuracy_box.open or numpy_box.open)
with windows_box:
    per_scale = windows_box.open and st.toggle(_("Show what each scale contributes"),
                                               key="flow.per_scale", **BOUND)
# the NumPy loop's switch lives in its tab; while that tab is closed its kept value still holds
with_numpy = bool(st.session_state.get("flow.notes_numpy", False))
if numpy_box.open:
    with numpy_box:
        with_numpy = st.toggle(
            _("Run the notes' original NumPy loop (one hole at a time)"), key="flow.notes_numpy",
            **BOUND,
            help=_("The notes' first version (000:79): a Python loop over the hole pixels, a "
                   "few hundred microseconds each, so it runs only up to {limit:,} hole pixels."
                   ).format(limit=NOTES_NUMPY_MAX_HOLES),
        )
numpy_skipped = with_numpy and hole_px > NOTES_NUMPY_MAX_HOLES
run_numpy = with_numpy and not numpy_skipped

names = [METHOD_CV2]
if compare:
    names.append(METHOD_TORCH)
    if with_notes:
        names.append(NOTES_TORCH_METHOD)
    if run_numpy:
        names.append(NOTES_NUMPY_METHOD)
    names.extend(OTHER_METHODS)


def _run_args(name: str) -> tuple[int, str]:
    """The (max_window, device) a method runs with: the key of its shared result."""
    device = settings.device if name in (NOTES_TORCH_METHOD, METHOD_TORCH) else "cpu"
    return (int(max_window) if name in WINDOWED_METHODS else 33), device


# The comparison's methods not yet in the shared cache cost seconds to minutes at the larger
# sizes and windows (the notes' reference at 720x1280 and max_window 129: minutes). Above the
# budget they wait for a click that states their time, whether a link or this session's
# controls asked for them; until then the tab shows the main fill alone.
todo = [n for n in names[1:]
        if not _shared_results().ready(("method", case_key, n, *_run_args(n)))]
compare_s = sum(estimate_method_ms(n, shape, int(max_window), hole_px, notes_ms_per_unit=rate)
                for n in todo) / 1e3
compare_gated = False
if compare and todo:
    with accuracy_box if accuracy_box.open else numpy_box:
        compare_gated = not heavy_gate(
            # every method with what its result is keyed on (max_window, device): a click for
            # one window does not unlock another
            "flow.compare", compare_s, (case_key, tuple((n, *_run_args(n)) for n in names)),
            what=_("the comparison of {n} methods at {h}x{w}").format(
                n=len(names), h=shape[0], w=shape[1]))
if compare_gated:
    names, compare = [METHOD_CV2], False
results: list[MethodResult] = [main_row]
stamps: dict[str, float] = {METHOD_CV2: main_at}
#: each method's (max_window, device): with case_key, what its result and EPE map are keyed on
run_args: dict[str, tuple[int, str]] = {METHOD_CV2: (int(max_window), "cpu")}
compare_job = (heavy_job(_("Accuracy and speed")) if compare and compare_s > budget_s()
               else contextlib.nullcontext())
with accuracy_box if accuracy_box.open else numpy_box, compare_job:  # drawn only if compare
    status = (st.status(_("Filling with {n} methods...").format(n=len(names)), expanded=False)
              if compare else _QuietStatus())
    t0 = time.perf_counter()
    try:
        for i, name in enumerate(names[1:], start=2):
            run_args[name] = _run_args(name)
            if name == NOTES_TORCH_METHOD:
                label = _("Step {i} of {n}: {name} (expected about {time})...").format(
                    i=i, n=len(names), name=_(name), time=_seconds(expected_ms))
            else:
                label = _("Step {i} of {n}: {name}...").format(i=i, n=len(names), name=_(name))
            status.update(label=label)
            bar = None
            if name in (NOTES_TORCH_METHOD, NOTES_NUMPY_METHOD):
                with status:
                    bar = st.progress(0.0, text=_("{name}: starting...").format(name=_(name)))
            # the progress texts are made here, in this run's language (the callback runs later)
            progress_text = (_("{name}: {done:,} of {total:,} windows")
                             if name == NOTES_TORCH_METHOD else
                             _("{name}: {done:,} of {total:,} hole pixels"))

            def _report(done: int, total: int, name: str = _(name), bar=bar,
                        text: str = progress_text) -> None:
                if bar is not None:
                    bar.progress(done / max(total, 1),
                                 text=text.format(name=name, done=done, total=total))

            row, at = _method(case_key, case, name, *run_args[name], _report)
            if bar is not None:
                bar.empty()
            results.append(row)
            stamps[name] = at
            if name == NOTES_TORCH_METHOD and at >= run_start:
                _reference_rates()[settings.device] = (
                    row.ms / notes_reference_work(shape, int(max_window)),
                    time.strftime("%H:%M"),
                )
        per_scale_maps = _scale_means(case_key, case, int(max_window)) if per_scale else None
        comp = combine_methods(case, results, max_window=int(max_window),
                               per_scale=per_scale_maps)
    except ValueError as exc:
        status.update(label=_("Filling failed"), state="error", expanded=True)
        _fail(tr(exc), wrong_hint)
    cached = [n for n in names if stamps[n] < run_start]
    status.update(
        label=_("{n} methods filled in {s:.1f} s").format(n=len(names),
                                                           s=time.perf_counter() - t0)
        + (_("; {n} timings reused from the cache").format(n=len(cached)) if cached else ""),
        state="complete", expanded=False,
    )
    if numpy_skipped:
        st.warning(
            _("The notes' NumPy loop is skipped: it visits one hole pixel at a time, and this "
              "flow has {holes:,} hole pixels, more than the page's limit of {limit:,}. Pick the "
              "240x320 size or a lower hole fraction.").format(holes=hole_px,
                                                               limit=NOTES_NUMPY_MAX_HOLES)
        )

fill = comp.fill
main = comp.methods[0]
heat_step = _heat_step(case.mask.shape)
if case.reference is not None:
    with rest_box, st.expander(_("Reference flow ({reference})").format(
            reference=_(case.reference_kind))):
        show_chart(_reference_figure(case_key, int(max_window), case, main_row),
                   alt=_("Flow colour image of the {reference}.").format(
                       reference=_(case.reference_kind)))

# ---------------------------------------------------------------- windows
if windows_box.open:
    with windows_box:
        if heat_step > 1:
            if heat_step == 2:
                thinned = _("The heat maps below are drawn from every 2nd pixel in each "
                            "direction, to keep the page responsive at this size.")
            elif heat_step == 3:
                thinned = _("The heat maps below are drawn from every 3rd pixel in each "
                            "direction, to keep the page responsive at this size.")
            else:
                thinned = _("The heat maps below are drawn from every {n}th pixel in each "
                            "direction, to keep the page responsive at this size.")
            st.caption(thinned.format(n=heat_step))
        s1, s2 = st.columns(2)
        with s1:
            show_chart(_scales_map_figure(case_key, int(max_window), case, fill),
                       key="flow.scales_map",
                       alt=_("Heat map over the holes of how many window sizes had a valid "
                             "sample; deep inside a hole only the larger windows reach valid "
                             "flow."))
        hist = _scales_histogram(case, fill, len(windows))
        with s2:
            show_chart(_scales_hist_figure(hist), key="flow.scales_hist",
                       alt=_("Bar chart: number of hole pixels by how many window sizes "
                             "contributed (0 to {n}).").format(n=len(windows)))
        all_scales = hist[len(windows)]
        # keyed, so a browser test reads the count from .st-key-flow-windows_summary
        summary = (
            _("With `max_window={max_window}` the fill averages {n} window means ({sizes}). "
              "{all:,} of {holes:,} hole pixels had a valid sample at every scale; the others "
              "sit deep inside a hole, so only the larger windows reach valid flow. "
              "**{unfilled:,} hole values stayed NaN** (no valid sample within {k}x{k}) -- "
              "raise max_window to reach them.") if fill.unfilled else
            _("With `max_window={max_window}` the fill averages {n} window means ({sizes}). "
              "{all:,} of {holes:,} hole pixels had a valid sample at every scale; the others "
              "sit deep inside a hole, so only the larger windows reach valid flow. "
              "**{unfilled:,} hole values stayed NaN** (no valid sample within {k}x{k}).")
        )
        st.container(key="flow.windows_summary").markdown(summary.format(
            max_window=max_window, n=len(windows), sizes=", ".join(map(str, windows)),
            all=all_scales, holes=hole_px, unfilled=fill.unfilled, k=windows[-1]))
        if fill.unfilled:
            st.warning(_("{unfilled:,} hole values are still NaN: no valid sample lies within "
                         "the largest window ({k}x{k}). Raise max_window.").format(
                             unfilled=fill.unfilled, k=windows[-1]))
        if per_scale and comp.per_scale:
            st.markdown(_("Each scale's masked mean on its own (holes only; black = that window "
                          "saw no valid sample). The fill is the average of the non-black ones."))
            tabs = st.tabs([f"{k}x{k}" for k in windows])
            for tab, k in zip(tabs, windows, strict=True):
                with tab:
                    show_chart(_scale_figure(case_key, int(max_window), k, case, main,
                                             comp.per_scale),
                               alt=_("Flow colour image of the {k}x{k} window's masked mean "
                                     "at the holes; black where that window saw no valid "
                                     "sample.").format(k=k))

# ---------------------------------------------------------------- accuracy and timing
def _made(stamp: float) -> str:
    """When a result was computed: this run, or how long ago it went into the cache."""
    if stamp >= run_start:
        return _("this run")
    minutes = (run_start - stamp) / 60
    return (_("cache, <1 min ago") if minutes < 1
            else _("cache, {n} min ago").format(n=round(minutes)))


when = {n: _made(stamps[n]) for n in stamps}
rows = [
    {
        _("method"): _(m.name),
        _("mean EPE on holes (px)"): m.mean_epe,
        _("median EPE on holes (px)"): m.median_epe,
        _("time (ms)"): round(m.ms, 2),
        _("timed"): when[m.name],
        _("device"): m.device,
        _("NaN left"): m.unfilled,
        _("max |diff| vs notes"): m.max_diff_vs_notes,
    }
    for m in comp.methods
]
notes_row = next((m for m in comp.methods if m.name == NOTES_TORCH_METHOD), None)
if accuracy_box.open and not compare_gated:
    with accuracy_box:
        st.header(_("Accuracy and speed"), anchor=False)
        st.dataframe(rows, width="stretch", hide_index=True)
        if cached:
            st.markdown(
                _("*{cached} of {n} timings come from the cache* (column *timed*): the same flow "
                  "and settings were filled earlier, in this or another session, and the time "
                  "shown is the one measured then.").format(cached=len(cached), n=len(names))
            )
        if case.reference is None:
            st.info(_("This flow brought its own holes, so there is nothing to compare the fill "
                      "with: upload a flow without NaN to get EPE numbers against the pre-mask "
                      "flow."))
        else:
            method_names = [m.name for m in comp.methods]
            pick = st.selectbox(_("EPE map of"), method_names, key="flow.epe_method",
                                format_func=translator(), **BOUND)
            chosen = comp.methods[method_names.index(pick)]
            a1, a2 = st.columns(2)
            with a1:
                show_chart(_epe_figure(case_key, pick, *run_args[pick], case, chosen),
                           key="flow.epe_map",
                           alt=_("Heat map of the endpoint error of {method} on the holes, in "
                                 "pixels, against the {reference}.").format(
                                     method=_(chosen.name), reference=_(case.reference_kind)))
            with a2:
                show_chart(_timing_figure(tuple((m.name, m.ms) for m in comp.methods)),
                           key="flow.timing",
                           alt=_("Horizontal bar chart of each method's time in ms, log scale: "
                                 "{times}.").format(times="; ".join(
                                     f"{_(m.name)} {m.ms:.1f} ms" for m in comp.methods)))
            best = min((m for m in comp.methods if np.isfinite(m.mean_epe)),
                       key=lambda m: m.mean_epe, default=None)
            near = comp.methods[-1]
            if best is not None:
                st.container(key="flow.epe_summary").markdown(  # .st-key-flow-epe_summary
                    _("Against the {reference}, the gradual mean's mean EPE on the holes is "
                      "**{main:.3f} px**, nearest-valid fill's is **{near:.3f} px**; the most "
                      "accurate here is *{best}*. Averaging many valid neighbours cancels noise, "
                      "and on linear motion the mean of a symmetric window is exact; at motion "
                      "boundaries (try *piecewise*) large windows mix both motions.").format(
                          reference=_(case.reference_kind), main=main.mean_epe,
                          near=near.mean_epe, best=_(best.name))
                )
        if notes_row is not None:
            fast = min(comp.methods[:2], key=lambda m: m.ms)
            st.markdown(
                _("Speed on `{device}`: the notes' avg_pool2d version took {notes_ms:.1f} ms, "
                  "the fastest backend ({fast}) {fast_ms:.1f} ms -- **{ratio:.0f}x** faster, "
                  "with a largest difference of {diff:.1e}. avg_pool2d adds up k*k values per "
                  "pixel; a box filter keeps a running sum (O(1) per pixel), and the fast "
                  "backends do the divisions only at the holes.").format(
                      device=settings.device, notes_ms=notes_row.ms, fast=_(fast.name),
                      fast_ms=fast.ms, ratio=notes_row.ms / max(fast.ms, 1e-6),
                      diff=max(m.max_diff_vs_notes or 0.0 for m in comp.methods[:2]))
            )
            with st.container(border=True, key="flow.three_ms"):
                claim, measured = st.columns(2)
                claim.markdown(_("**The notes say** ({ref}, after the NumPy loop)").format(
                    ref=cite(NOTES_CLAIM_REF)))
                # keyed like a callout: the notes' own Chinese, verbatim in both languages
                with claim.container(key="notes_callout-flow_claim_quote"):
                    notes_quote(NOTES_CLAIM_ZH,
                                "vectorised with PyTorch, it gets to about 3 ms.")
                measured.markdown(_("**Measured here** just now")
                                  if stamps[NOTES_TORCH_METHOD] >= run_start
                                  else _("**Measured here** (from the cache)"))
                measured.metric(_("avg_pool2d version, this flow"), f"{notes_row.ms:.1f} ms",
                                help=_("The notes' claim is 3 ms."))
                measured.text(tr(notes_speed_claim(notes_row.ms, settings.device,
                                                       case.flow.shape)))
        else:
            st.markdown(
                _("Switch on *Notes' avg_pool2d* (beside the picture) to time it against the "
                  "notes' \"about 3 ms\" ({ref}); expected here: about {time}.").format(
                      ref=cite(NOTES_CLAIM_REF), time=_seconds(expected_ms))
            )

if numpy_box.open:
    with numpy_box:
        numpy_row = next((m for m in comp.methods if m.name == NOTES_NUMPY_METHOD), None)
        sizes = notes_window_sizes(int(max_window) - 1)
        st.markdown(
            _("Before vectorising, the notes (000:77-79) filled each hole in turn with the mean "
              "of its window means for windows {sizes} (here `max_window_size = {size}`, beside "
              "this page's {windows}). Their code differs from the vectorised method in four "
              "ways: the window `(cx - w//2, cy - w//2, cx + w, cy + w)` is **not centred** (it "
              "reaches w - 1 pixels right and down, w/2 left and up), `crop_rect` pads outside "
              "the image with **zeros that count as flow**, every fill is written back at once "
              "so **later holes average earlier fills**, and an early `break` after a window "
              "with no valid sample would leave the hole NaN (the in-place filling makes that "
              "unreachable with the default mask: the row above a hole is always the zero "
              "border or already filled).").format(
                  sizes=", ".join(map(str, sizes)), size=int(max_window) - 1,
                  windows=", ".join(map(str, windows)))
        )
        if numpy_row is not None and case.reference is not None:
            # same method; the fast backend when the reference is off
            vectorised = notes_row or main
            ratio = numpy_row.mean_epe / max(vectorised.mean_epe, 1e-12)
            per_hole_us = numpy_row.ms * 1e3 / max(hole_px, 1)
            st.markdown(
                _("On this flow the notes' NumPy loop has a mean EPE on the holes of "
                  "**{numpy_epe:.3f} px**, against **{epe:.3f} px** for the vectorised method "
                  "({method}): **{ratio:.1f}x** the error. It took **{s:.2f} s** on the CPU "
                  "({us:.0f} us per hole pixel). The time is for the notes' loop with one change "
                  "that leaves every bit of the output alone: `crop_rect` pads the whole image "
                  "for every window of every hole, which this loop skips by building only the "
                  "window; the code as printed is slower still.").format(
                      numpy_epe=numpy_row.mean_epe, epe=vectorised.mean_epe,
                      method=_(vectorised.name), ratio=ratio, s=numpy_row.ms / 1e3,
                      us=per_hole_us)
            )
        elif numpy_row is not None:
            if numpy_row.max_diff_vs_notes:
                took = _("The notes' NumPy loop took **{s:.2f} s** on the CPU; its largest "
                         "difference from the avg_pool2d version on this flow is {diff:.2f} px. "
                         "This flow has no reference, so neither can be scored.")
            else:
                took = _("The notes' NumPy loop took **{s:.2f} s** on the CPU. This flow has no "
                         "reference, so neither can be scored.")
            st.markdown(took.format(s=numpy_row.ms / 1e3, diff=numpy_row.max_diff_vs_notes))
        elif not (numpy_skipped or compare_gated):
            st.info(
                _("Switch on *Run the notes' original NumPy loop* above to add it to the table, "
                  "with its error and time (up to {limit:,} hole pixels; it shows its progress "
                  "while it runs).").format(limit=NOTES_NUMPY_MAX_HOLES)
            )
        show_code(
            notes_numpy_snippet_for(
                spec if source in ("synthetic", "stereo", "affine") else None,
                int(max_window),
                upload_name=upload.name if upload is not None else None,
            ),
            title=N_("Run the notes' NumPy loop beside the avg_pool2d version in Python"),
        )

with rest_box:
    with st.expander(_("The formula")):
        st.latex(
            r"\hat x_c(p)=\frac{1}{|S(p)|}\sum_{k\in S(p)}"
            r"\frac{\sum_{q\in W_k(p)} m_c(q)\,x_c(q)}{\sum_{q\in W_k(p)} m_c(q)},\quad "
            r"S(p)=\{k : \textstyle\sum_{W_k(p)} m_c>0\}"
        )
        st.markdown(_("`m_c` is 1 where channel c is valid; windows `W_k` are k x k, "
                      "zero-padded at the borders; only NaN values are replaced."))
    st.header(_("What the notes say, checked live"), anchor=False)
    for callout in callouts_of("lessons.flow.notes_checks").values():
        notes_callout(callout)
    show_code(
        snippet_for(
            spec if source in ("synthetic", "stereo", "affine") else None,
            int(max_window),
            upload_name=upload.name if upload is not None else None,
        )
    )
