"""Flow hole filling: optical flow with NaN holes, filled by multi-scale masked means.

Pick a flow and its holes, see it filled by the gradual mean, then open a tab: what each window
size adds, the other methods and the notes' versions in accuracy and speed, the notes' NumPy loop.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import NoReturn

import numpy as np
import plotly.graph_objects as go
import streamlit as st

import lessons.flow.fill as ff
from core.text import N_
from lessons.flow import explanations as say
from lessons.flow import figures, flow_files, menus, questions, snippets, sources
from lessons.flow.fill import METHOD_CV2, NOTES_NUMPY_METHOD, NOTES_TORCH_METHOD, FlowCase, FlowSpec
from lessons.flow.gradual_mean import FillResult, window_sizes
from lessons.flow.notes_checks import NOTES_CLAIM_REF, NOTES_CLAIM_ZH, notes_speed_claim
from lessons.flow.shared_results import SharedResults
from ui.caching import bounded_cache
from ui.charts import shared_figure, show_chart
from ui.code import show_code
from ui.heavy import budget_s, heavy_gate, heavy_job
from ui.i18n import _, cite, tr, translator
from ui.lesson import lesson_layout, stop_with_error
from ui.links import BOUND
from ui.notes_callout import callouts_of, notes_callout, notes_quote
from ui.pictures import upload_digest
from ui.predict import predict_panel
from ui.settings import current_settings

CACHE_TTL_S = 3600  # shared results live an hour, then are computed again
SHARED_FIGURES = 160  # a few cases x settings of each figure while a lesson runs

settings = current_settings()
layout = lesson_layout(N_("Flow hole filling"), say.LOOK_AT)


@bounded_cache(max_entries=8, ttl=CACHE_TTL_S)
def _built_case(spec: FlowSpec) -> FlowCase:
    """Built-in cases, shared by every session (same spec, same flow)."""
    return ff.build_flow(spec)


@bounded_cache(max_entries=4, ttl="30m")
def _flow_file(digest: str, suffix: str, _data: bytes) -> np.ndarray:
    """An uploaded flow file (SHA-256 ``digest``) decoded once, whatever the mask settings."""
    return flow_files.load_flow_file(f"flow{suffix}", _data)


@bounded_cache(max_entries=4, ttl=CACHE_TTL_S)
def _uploaded_case(origin: tuple, spec: FlowSpec, _data: tuple[bytes, ...]) -> FlowCase:
    """Cases from uploads, keyed on the files' SHA-256 (``origin``) and the mask settings."""
    if origin[0] == "file":
        return ff.case_from_flow(_flow_file(origin[2], Path(origin[1]).suffix.lower(), _data[0]),
                                 spec)
    return ff.case_from_image_files(_data, spec, max_side=menus.IMAGE_CAP)


@st.cache_resource(show_spinner=False)
def _shared_results() -> SharedResults:
    return SharedResults(max_entries=40, ttl_s=CACHE_TTL_S)


@st.cache_resource(show_spinner=False)
def _reference_rates() -> dict[str, tuple[float, str]]:
    """Latest measured rate of the notes' reference per device (ms per work unit, clock time)."""
    return {}


@shared_figure(max_entries=SHARED_FIGURES)
def _figure(builder: str, key: tuple, _data: tuple) -> go.Figure:
    """``figures.<builder>(*_data)`` in this session's language, built once per ``key`` (what
    determines ``_data``) for every session: a class opening the lesson shares one server, and a
    figure costs 20-80 ms of the GIL."""
    return getattr(figures, builder)(*_data, translate=translator())


def _method(case_key: tuple, case: FlowCase, name: str, max_window: int,
            bar=None) -> tuple[ff.MethodResult, float]:
    """Method ``name``'s result on ``case``, shared by every session, and when it was computed
    (before this run's start: the timing came from the cache). A slow method reports into
    ``bar``; a run of the notes' reference measures its rate for the next estimate."""
    run_as = ff.method_settings(name, max_window, settings.device)
    report = None if bar is None else say.progress_reporter(bar.progress, name, translator())

    def compute() -> ff.MethodResult:
        row = ff.run_method(case, name, max_window=run_as[0], device=run_as[1], progress=report)
        if name == NOTES_TORCH_METHOD:
            _reference_rates()[settings.device] = (row.ms / ff.notes_reference_work(
                case.flow.shape, max_window), time.strftime("%H:%M"))
        return row

    return _shared_results().get_or_compute(  # type: ignore[return-value]
        ("method", case_key, name, *run_as), compute)


def _show_comparison_if_on() -> None:
    """Switching the notes' reference on opens the tab where its time and error appear."""
    if st.session_state.get("flow.notes"):
        st.session_state["flow.details_tab"] = _(menus.DETAIL_TABS[1])


def _suggest_mask() -> None:
    """A new source suggests its mask (forward-backward check for two images, else random pixels).
    Not the menu's default: Streamlit leaves a default out of the URL, so a default that followed
    the source would make a link drop the mask a visitor kept."""
    if st.session_state.get("flow.source") in menus.IMAGE_SOURCES:
        st.session_state["flow.mask"] = "fb"
    elif st.session_state.get("flow.mask") == "fb":
        st.session_state["flow.mask"] = "random"


def _fail(message: str, hint: str) -> NoReturn:
    stop_with_error(layout.figure, message, hint, icon=None)


def _controls() -> tuple[str, FlowSpec, int, object, tuple[object, object]]:
    """``(source, spec, max_window, upload, image pair)`` from the controls. Each value control is
    in the URL (a lesson link opens this view) and kept across pages (**BOUND); not the uploads."""
    t = translator()
    source = st.selectbox(_("Flow source"), list(menus.SOURCE_LABELS), key="flow.source",
                          format_func=lambda v: t(menus.SOURCE_LABELS[v]), on_change=_suggest_mask,
                          help=_(menus.SOURCE_HELP), **BOUND)
    field, size, noise, upload, pair = "rotation", "240x320", 0.0, None, (None, None)
    if source == "synthetic":
        field = st.selectbox(_("Motion field"), sources.SYNTHETIC_FIELDS, index=1, key="flow.field",
                             format_func=lambda v: t(menus.FIELD_LABELS.get(v, v)), **BOUND)
        size = st.selectbox(_("Size (H x W)"), list(menus.SIZES), key="flow.size", **BOUND)
        noise = st.slider(_("Noise (px std)"), 0.0, 1.0, 0.2, 0.05, key="flow.noise", **BOUND,
                          help=_(menus.NOISE_HELP))
    elif source == "upload_flow":
        upload = st.file_uploader(_("Flow file"), type=["flo", "npy"], key="flow.file",
                                  help=_(menus.FLOW_FILE_HELP).format(max_side=sources.MAX_SIDE))
    elif source == "upload_pair":
        pair = (st.file_uploader(_("First image"), type=menus.IMAGE_TYPES, key="flow.image1"),
                st.file_uploader(_("Second image"), type=menus.IMAGE_TYPES, key="flow.image2"))
    # The default is the same for every source (see _suggest_mask), so a link that leaves the
    # mask out means the same mask whatever source it names.
    mask = st.selectbox(_("Hole mask"), menus.mask_choices(source), key="flow.mask", index=0,
                        format_func=lambda v: t(menus.MASK_LABELS[v]), **BOUND)
    fraction, hole_size, fb_threshold = 0.3, 12, 1.0
    if mask in menus.FRACTION_MASKS:
        fraction = st.slider(_("Hole fraction"), 0.05, 1.0, 0.3, 0.05, key="flow.fraction",
                             **BOUND)
    if mask in menus.WIDTH_MASKS:
        hole_size = st.slider(_("Hole width (px)"), 1, 80, 12, key="flow.hole_size", **BOUND,
                              help=_(menus.HOLE_WIDTH_HELP))
    if mask == "fb":
        fb_threshold = st.slider(_("Round-trip threshold (px)"), 0.1, 5.0, 1.0, 0.1,
                                 key="flow.fb_threshold", **BOUND, help=_(menus.FB_THRESHOLD_HELP))
    max_window = int(st.select_slider("max_window", menus.WINDOW_CHOICES, value=33, **BOUND,
                                      key="flow.max_window", help=_(menus.MAX_WINDOW_HELP)))
    st.markdown(tr(say.windows_line(window_sizes(max_window))))
    h, w = menus.SIZES[size]
    spec = FlowSpec(source=source if source in ff.SOURCES else "synthetic", field=field, height=h,
                    width=w, noise=noise, mask=mask, fraction=fraction, hole_size=hole_size,
                    fb_threshold=fb_threshold, seed=settings.seed % 2**31)
    return source, spec, max_window, upload, pair


def _case(source: str, spec: FlowSpec, upload, pair) -> tuple[FlowCase, tuple]:
    """The flow with holes, and ``case_key``, what its results are keyed on; stops the page
    (saying what to do) while an upload is missing or when the flow cannot be filled."""
    files = [upload] if source == "upload_flow" else list(pair)
    try:
        with layout.figure, st.spinner(_(say.PREPARING)):
            if source in ff.SOURCES:
                origin: tuple[object, ...] = ("built-in",)
                case = _built_case(spec)
            elif any(f is None for f in files):
                st.info(_(say.upload_prompt(source)))
                st.stop()
            else:
                origin = (("file", upload.name, upload_digest(upload)) if source == "upload_flow"
                          else ("pair", *(upload_digest(image) for image in files)))
                case = _uploaded_case(origin, spec, tuple(f.getvalue() for f in files))
            ff.check_fillable(case)
    except ValueError as exc:
        _fail(tr(exc), _(say.wrong_hint(source)) if "NaN" in str(exc) else
              _("pick another file or source, or change the mask settings."))
    return case, (origin, spec)


def _notes_switch(shape: tuple[int, ...], max_window: int) -> tuple[bool, float, float]:
    """The notes' avg_pool2d switch: ``(on, the reference's ms per work unit, expected ms)``. Off
    by default above 240x320 (~20 s at 720x1280 on 2 cores), and back to that default when the
    flow's size changes (but not on a session's first run, which keeps what a link asked for)."""
    default = ff.notes_reference_on_by_default(shape)
    last_shape = st.session_state.get("flow.notes_shape")
    st.session_state["flow.notes_shape"] = shape[:2]
    if last_shape is not None and last_shape != shape[:2]:
        st.session_state["flow.notes"] = default
    rate, when = _reference_rates().get(settings.device, (ff.NOTES_REFERENCE_MS_PER_UNIT, ""))
    expected_ms = ff.estimate_notes_ms(shape, max_window, rate)
    with layout.controls:
        on = st.toggle(_("Notes' avg_pool2d"), value=default, key="flow.notes", **BOUND,
                       on_change=_show_comparison_if_on, help=_(menus.NOTES_SWITCH_HELP).format(
                           pixels=ff.NOTES_REFERENCE_DEFAULT_MAX_PIXELS))
        st.markdown("".join(map(tr, say.notes_time(expected_ms, settings.device, shape, when, on))))
    return on, rate, expected_ms


def _fill_all(case_key: tuple, case: FlowCase, names: list[str], main: tuple, max_window: int,
              expected_ms: float) -> tuple[ff.Comparison, dict]:
    """Every method of ``names`` after the main fill (``main``: its row and stamp), reported step
    by step; the comparison and when each result was computed."""
    results, stamps = [main[0]], {METHOD_CV2: main[1]}
    status = st.status(_("Filling with {n} methods...").format(n=len(names)), expanded=False)
    t0 = time.perf_counter()
    try:
        for i, name in enumerate(names[1:], start=2):
            status.update(label=tr(say.step_label(i, len(names), name, expected_ms)))
            bar = None
            if name in (NOTES_TORCH_METHOD, NOTES_NUMPY_METHOD):
                with status:
                    bar = st.progress(0.0, text=_("{name}: starting...").format(name=_(name)))
            row, stamps[name] = _method(case_key, case, name, max_window, bar)
            if bar is not None:
                bar.empty()
            results.append(row)
        comp = ff.combine_methods(case, results, max_window=max_window)
    except ValueError as exc:
        status.update(label=_("Filling failed"), state="error", expanded=True)
        _fail(tr(exc), _(say.wrong_hint(source)))
    cached = [n for n in names if stamps[n] < run_start]
    status.update(label="".join(map(tr, say.fill_done(len(names), time.perf_counter() - t0,
                                                      len(cached)))), state="complete",
                  expanded=False)
    return comp, stamps


def _windows_tab(case_key: tuple, case: FlowCase, fill: FillResult, max_window: int,
                 per_scale: bool) -> None:
    """What each window size adds: where the scales reached, and (``per_scale``) each one's mean."""
    windows, holes = window_sizes(max_window), int(np.count_nonzero(case.mask))
    if (thinned := say.thinned_caption(figures.heat_step(case.mask.shape))) is not None:
        st.caption(tr(thinned))
    hist = figures.scales_histogram(case, fill, len(windows))
    s1, s2 = st.columns(2)
    with s1:
        show_chart(_figure("scales_map_figure", (case_key, max_window), (case, fill, max_window)),
                   key="flow.scales_map", alt=_(say.SCALES_MAP_ALT))
    with s2:
        show_chart(_figure("scales_hist_figure", hist, (hist,)), key="flow.scales_hist",
                   alt=tr(say.scales_hist_alt(len(windows))))
    # keyed, so a browser test reads the count from .st-key-flow-windows_summary
    st.container(key="flow.windows_summary").markdown(tr(say.windows_summary(
        max_window, windows, hist, holes, fill.unfilled)))
    if fill.unfilled:
        st.warning(tr(say.unfilled_warning(fill.unfilled, windows[-1])))
    if per_scale:
        st.markdown(_(say.PER_SCALE_INTRO))
        rgbs = _shared_results().get_or_compute(  # once for every session, one colour scale
            ("per_scale_rgb", case_key, max_window),
            lambda: figures.per_scale_rgbs(case, fill.filled, max_window))[0]
        for tab, k, rgb in zip(st.tabs([f"{k}x{k}" for k in windows]), windows, rgbs, strict=True):
            with tab:
                show_chart(_figure("scale_figure", (case_key, max_window, k), (rgb, k)),
                           alt=tr(say.scale_alt(k)))


def _accuracy_tab(case_key: tuple, case: FlowCase, comp: ff.Comparison, stamps: dict[str, float],
                  max_window: int, expected_ms: float) -> None:
    """Each method's error and time, its EPE map, and the notes' "3 ms" beside the measured."""
    st.header(_("Accuracy and speed"), anchor=False)
    st.dataframe(say.comparison_table(comp.methods, stamps, run_start, tr), width="stretch",
                 hide_index=True)
    if cached := [n for n, stamp in stamps.items() if stamp < run_start]:
        st.markdown(tr(say.cached_timings(len(cached), len(stamps))))
    if case.reference is None:
        st.info(_(say.NO_REFERENCE))
    else:
        names = [m.name for m in comp.methods]
        pick = st.selectbox(_("EPE map of"), names, key="flow.epe_method",
                            format_func=translator(), **BOUND)
        chosen, run_as = comp.methods[names.index(pick)], ff.method_settings(pick, max_window,
                                                                             settings.device)
        times = tuple((m.name, m.ms) for m in comp.methods)  # the key: agrees with the table
        a1, a2 = st.columns(2)
        with a1:
            show_chart(_figure("epe_figure", (case_key, pick, *run_as), (case, chosen)),
                       key="flow.epe_map", alt=tr(say.epe_alt(chosen.name, case.reference_kind)))
        with a2:
            show_chart(_figure("timing_figure", times, (times,)), key="flow.timing",
                       alt=say.timing_alt(comp.methods, tr))
        if (summary := say.epe_summary(case.reference_kind, comp.methods)) is not None:
            st.container(key="flow.epe_summary").markdown(tr(summary))  # .st-key-flow-...
    notes_row = next((m for m in comp.methods if m.name == NOTES_TORCH_METHOD), None)
    if notes_row is None:
        st.markdown(tr(say.notes_switch_hint(expected_ms, cite(NOTES_CLAIM_REF))))
        return
    st.markdown(tr(say.speed_summary(settings.device, notes_row, comp.methods)))
    with st.container(border=True, key="flow.three_ms"):
        claim, measured = st.columns(2)
        claim.markdown(_("**The notes say** ({ref}, after the NumPy loop)").format(
            ref=cite(NOTES_CLAIM_REF)))
        # keyed like a callout: the notes' own Chinese, verbatim in both languages
        with claim.container(key="notes_callout-flow_claim_quote"):
            notes_quote(NOTES_CLAIM_ZH, "vectorised with PyTorch, it gets to about 3 ms.")
        measured.markdown(_("**Measured here** just now") if stamps[NOTES_TORCH_METHOD] >= run_start
                          else _("**Measured here** (from the cache)"))
        measured.metric(_("avg_pool2d version, this flow"), f"{notes_row.ms:.1f} ms",
                        help=_("The notes' claim is 3 ms."))
        measured.text(tr(notes_speed_claim(notes_row.ms, settings.device, case.flow.shape)))


# ---------------------------------------------------------------- the story, top to bottom
run_start = time.time()
with layout.controls:
    source, spec, max_window, upload, pair = _controls()
case, case_key = _case(source, spec, upload, pair)
with_notes, rate, expected_ms = _notes_switch(case.flow.shape, max_window)
main = _method(case_key, case, METHOD_CV2, max_window)
hole_px = int(np.count_nonzero(case.mask))
with layout.figure:
    show_chart(_figure("case_figure", (case_key, max_window), (case, main[0])),
               key="flow.main_figure", alt=tr(say.picture_alt(case, hole_px)))
    st.markdown(tr(say.picture_caption(case, hole_px)))
snippet_args = dict(  # what the snippets rebuild: a built-in case, or the upload by its name
    spec=spec if source in ff.SOURCES else None, max_window=max_window,
    upload_name=upload.name if upload is not None else None)

with layout.details:
    # Lazy tabs (on_change="rerun"): the other methods run only while a tab that shows them is
    # open, so a change to the picture's controls costs one fill, not six.
    windows_box, accuracy_box, numpy_box = st.tabs(
        [_(label) for label in menus.DETAIL_TABS], key="flow.details_tab", on_change="rerun",
        bind="query-params")
    rest_box = st.container()
compare = bool(accuracy_box.open or numpy_box.open)
compare_box = accuracy_box if accuracy_box.open else numpy_box
with windows_box:
    per_scale = windows_box.open and st.toggle(_("Show what each scale contributes"),
                                               key="flow.per_scale", **BOUND)
# the NumPy loop's switch lives in its tab; while that tab is closed its kept value still holds
with_numpy = bool(st.session_state.get("flow.notes_numpy", False))
if numpy_box.open:
    with numpy_box:
        with_numpy = st.toggle(_(menus.NUMPY_SWITCH), key="flow.notes_numpy", **BOUND, help=_(
            menus.NUMPY_SWITCH_HELP).format(limit=ff.NOTES_NUMPY_MAX_HOLES))
numpy_skipped = with_numpy and hole_px > ff.NOTES_NUMPY_MAX_HOLES
names = ff.comparison_methods(with_notes=with_notes, with_notes_numpy=with_numpy and not
                              numpy_skipped) if compare else [METHOD_CV2]

# Methods not in the shared cache yet cost up to minutes (the notes' reference at 720x1280 and
# max_window 129): above the budget they wait for a click that states their time, whether a link
# or the controls asked for them. The click names every method with what its result is keyed on
# (max_window, device): a click for one window does not unlock another.
run_as = {n: ff.method_settings(n, max_window, settings.device) for n in names}
compare_s = sum(ff.estimate_method_ms(n, case.flow.shape, max_window, hole_px,
                                      notes_ms_per_unit=rate) for n in names[1:]
                if not _shared_results().ready(("method", case_key, n, *run_as[n]))) / 1e3
with compare_box:  # nothing to click for when every result is in the cache (0 s)
    compare_gated = compare and not heavy_gate(
        "flow.compare", compare_s, (case_key, tuple((n, *run_as[n]) for n in names)),
        what=tr(say.comparison_what(len(names), case.flow.shape)))
if compare_gated:
    names, compare = [METHOD_CV2], False
with compare_box, (heavy_job(_("Accuracy and speed")) if compare and compare_s > budget_s()
                   else contextlib.nullcontext()):  # drawn only if compare
    comp, stamps = (_fill_all(case_key, case, names, main, max_window, expected_ms) if compare
                    else (ff.combine_methods(case, [main[0]], max_window=max_window),
                          {METHOD_CV2: main[1]}))
    if numpy_skipped:
        st.warning(tr(say.numpy_skipped(hole_px)))
if case.reference is not None:
    with rest_box, st.expander(tr(say.reference_heading(case.reference_kind))):
        show_chart(_figure("reference_figure", (case_key, max_window), (case, main[0])),
                   alt=tr(say.reference_alt(case.reference_kind)))
if windows_box.open:
    with windows_box, st.container(key=questions.WINDOWS_PART):  # blurred until a reveal
        _windows_tab(case_key, case, comp.fill, max_window, per_scale)
if accuracy_box.open and not compare_gated:
    with accuracy_box:
        _accuracy_tab(case_key, case, comp, stamps, max_window, expected_ms)
if numpy_box.open:
    with numpy_box:
        st.markdown(tr(say.numpy_loop_intro(max_window, window_sizes(max_window))))
        if (result := say.numpy_loop_result(case, comp.methods,
                                            offer=not (numpy_skipped or compare_gated))):
            (st.markdown if NOTES_NUMPY_METHOD in stamps else st.info)(tr(result))
        show_code(snippets.notes_numpy_snippet_for(**snippet_args),
                  title=N_("Run the notes' NumPy loop beside the avg_pool2d version in Python"))
with rest_box:
    with st.expander(_("The formula")):
        st.latex(say.FORMULA_LATEX)
        st.markdown(_(say.FORMULA_NOTE))
    st.header(_("What the notes say, checked live"), anchor=False)
    for callout in callouts_of("lessons.flow.notes_checks").values():
        notes_callout(callout)
    show_code(snippets.snippet_for(**snippet_args))
predict_panel(layout.predict, "flow", lambda: questions.questions(case, main[0].fill, max_window))
