"""CUDA memory monitor: allocated / reserved / device memory, live on a real GPU or on a simulated
one driven by a model of PyTorch's caching allocator. The story: controls, live chart, scenario
steps, inside the allocator, the notes checked live, a snippet (map: lessons/memory/__init__)."""

from __future__ import annotations

import time
from collections import deque

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.environment import available_devices
from core.text import N_, T
from lessons.memory import allocator_rule, backends, cudnn_error, eval_memory, figures, map_location
from lessons.memory import explanations as E
from lessons.memory.backends import SimulatedGpu, TensorLedger, TorchCudaBackend
from lessons.memory.cuda_snippet import SnippetLog
from lessons.memory.gpu_memory import process_rows
from lessons.memory.live_sampler import MIN_INTERVAL_S, LiveSampler
from lessons.memory.questions import INSIDE_PART, NOTES_PART, SCENARIO_PART, form_view, questions
from lessons.memory.scenarios import SCENARIOS, Step, run_scenario
from ui.caching import SHARED_TTL_S, bounded_cache
from ui.charts import shared_figure, show_chart
from ui.code import show_code
from ui.i18n import _, cite, current_language, tr, translator
from ui.lesson import lesson_layout
from ui.links import BOUND, reject_unusable_link_value
from ui.notes_callout import callouts_of, notes_callout, notes_citation, notes_quote
from ui.predict import predict_panel
from ui.settings import current_settings
from ui.tables import show_table
from ui.visibility import tab_hidden

state = st.session_state
settings = current_settings()
has_gpu = settings.device.startswith("cuda")
# Value controls are bound to the URL (a lesson link sets them). The size's default goes in
# through the session state: its widget has value=None so that it may be cleared (refused).
state.setdefault("memory.size", 4.0)
if "memory.ledger" not in state:
    # Tensors belong to this browser session: the ledger frees them when the session ends.
    state["memory.ledger"] = TensorLedger()
    state["memory.history"] = deque(maxlen=5000)  # the simulated GPU's chart samples
ledger: TensorLedger = state["memory.ledger"]
log: SnippetLog = state.setdefault("memory.snippet_log", SnippetLog())
layout = lesson_layout(N_("CUDA memory monitor"), E.LOOK_AT)


def table_of(rows: list[dict]) -> pd.DataFrame:
    """A pure module's rows, their ``T`` headers and values in this session's language."""
    return pd.DataFrame([{tr(k) if isinstance(k, T) else k: tr(v) if isinstance(v, T) else v
                          for k, v in row.items()} for row in rows])  # fmt: skip


def lazy_tabs(labels: list[str], key: str, views: tuple) -> None:
    """Tabs bound to the URL; only the open one runs and is drawn (on_change="rerun"), and the
    controls of a closed one keep their values (persist_state, in BOUND)."""
    tabs = st.tabs(labels, key=key, bind="query-params", on_change="rerun")
    for tab, view in zip(tabs, views, strict=True):
        with tab:
            if tab.open:
                view()


# ------------------------------------------------------------------ actions and their message
def show_message(kind: str, text: str, *, errors: tuple[str, ...] = (), detail: str = "") -> None:
    """The one message slot: only the latest action's outcome is shown."""
    state["memory.message"] = {"kind": kind, "text": text, "errors": errors, "detail": detail}


def record(result: backends.ActionResult, steps: list[Step]) -> None:
    show_message("success" if result.ok else "error", result.message, detail=result.error)
    if result.ok:
        log.add(backend.key, steps)
    st.rerun()  # redraw everything (tensor list, charts) from the new state


def run_guided(key: str) -> None:
    """Run scenario ``key``; its steps restart the snippet and its message fills the slot."""
    if not whole_process:
        return show_message("error", E.SHARED_GPU_REFUSAL)
    with st.spinner(_("Running the scenario ...")):
        run = state["memory.scenario_run"] = run_scenario(key, backend, ledger)
    log.restart(backend.key, run, {h.id for h in ledger.held(backend.key)})
    show_message("success", run.summary, errors=run.caught, detail=run.error_detail)


# ------------------------------------------------------------------------------ controls
def choose_backend() -> SimulatedGpu | TorchCudaBackend:
    """The sidebar's GPU, or a simulated one of the chosen size (a new size replaces it)."""
    choice = E.SIM_CHOICE
    if has_gpu:
        choice = st.radio(_("Device"), [settings.device, E.SIM_CHOICE], key="memory.backend",
                          **BOUND, horizontal=True, format_func=translator(),
                          help=_(E.DEVICE_HELP))  # fmt: skip
    if choice != E.SIM_CHOICE:
        try:
            real = TorchCudaBackend(choice)
        except ValueError as error:
            st.error(_("{error}. Pick another device in the sidebar or use the simulated GPU.")
                     .format(error=tr(error)))  # fmt: skip
            st.stop()
        st.info(tr(E.real_device_notice(choice)), icon=":material/memory:")
        return real
    total_gb = st.radio(_("Simulated GPU memory"), backends.SIMULATED_TOTALS_GB, index=1,
                        key="memory.sim_total", **BOUND, horizontal=True,
                        format_func=lambda gb: f"{gb} GB")  # fmt: skip
    sim = backends.session_simulated_gpu(state, total_gb, ledger, log)  # a new size: a new one
    st.warning(tr(E.simulated_notice(sim, has_gpu=has_gpu)), icon=":material/science:")
    return sim


def allocate_tab() -> None:
    mode = st.radio(_("Request by"), [N_("size"), N_("shape + dtype")], key="memory.alloc_mode",
                    **BOUND, horizontal=True, format_func=translator())  # fmt: skip
    c1, c2, form = *st.columns(2), {}
    if mode == "size":
        # no min_value: the browser would keep the old value for -5; the backend refuses it
        form["size"] = c1.number_input(_("Size"), value=None, step=1.0, key="memory.size",
                                       **BOUND, format="%g", placeholder="4")  # fmt: skip
        form["unit"] = c2.selectbox(_("Unit"), list(backends.UNITS), index=0, key="memory.unit",
                                    **BOUND, help=_(E.UNIT_HELP))  # fmt: skip
    else:
        reject_unusable_link_value("memory.shape", backends.is_usable_shape)
        form["shape_text"] = c1.text_input(_("Shape"), "1024, 1024", key="memory.shape",
                                           max_chars=backends.SHAPE_MAX_CHARS, **BOUND)  # fmt: skip
        form["dtype"] = c2.selectbox("dtype", list(backends.DTYPES), key="memory.dtype", **BOUND)
    if not st.button(_("Allocate"), key="memory.allocate", type="primary"):
        return
    try:
        ask = backends.form_request(mode != "size", **form, max_bytes=device_total)
    except ValueError as error:
        return show_message("error", backends.refusal_message(error))
    with st.spinner(_("Allocating ...")):
        result = backends.allocate(backend, ledger, ask.nbytes, ask.label, shape=ask.shape,
                                   dtype=ask.dtype, quota=quota)  # fmt: skip
    name = f"t{result.held[0].id}" if result.ok else ""
    record(result, [Step("alloc", name=name, nbytes=ask.nbytes, shape=ask.shape, dtype=ask.dtype)])


with layout.controls:
    backend = choose_backend()
    # A real GPU shared by a class ($TP_GPU_MEMORY): calls that act on the whole process (a
    # scenario's empty_cache and cap, the Cache tab) are refused, and Allocate has a quota.
    try:
        whole_process = backends.process_wide_calls_allowed(backend, backends.gpu_memory_policy())
        quota = None if backend.simulated else backends.session_quota()
    except ValueError as error:
        st.error(_("{error}. Fix the server's setting and restart it.").format(error=tr(error)))
        st.stop()
    device_total = backend.state().device_total
    tabs = st.tabs([_("Scenario"), _("Allocate"), _("Free"), _("Cache")])
    with tabs[0]:
        t = translator()
        key = st.selectbox(_("Guided scenario"), list(SCENARIOS), key="memory.scenario", **BOUND,
                           format_func=lambda k: t(SCENARIOS[k].name), help=_(E.SCENARIO_HELP))
        if not state.get("memory.opened"):
            # Arrive on the chosen guided scenario (the first one, or a lesson link's) already
            # run: the chart has something to show. After the select box, which reads the link.
            state["memory.opened"] = True
            run_guided(key)
        if st.button(_("Run scenario"), key="memory.run_scenario", type="primary"):
            run_guided(key)
            st.rerun()
    with tabs[1]:
        allocate_tab()
    with tabs[2]:
        held = ledger.held(backend.key)
        options = {h.id: h for h in held}
        # Not bound to the URL: the choices are this session's own tensors, which a link's
        # reader does not hold (ids name nothing there), and freeing needs a click anyway.
        if "memory.free_select" in state:  # drop tensors freed since the last run
            state["memory.free_select"] = [i for i in state["memory.free_select"] if i in options]
        selected = st.multiselect(
            _("Tensors this session holds"), list(options), key="memory.free_select",
            format_func=lambda i: tr(backends.held_label(log.name(i), options[i])),
            placeholder=_("none held") if not held else _("choose tensors"),
        )  # fmt: skip
        if st.button(_("Free selected (del)"), key="memory.free", disabled=not held):
            result = backends.free_tensors(backend, ledger, list(selected))
            record(result, [Step("free", name=log.name(i)) for i in selected])
        if st.button(_("Free all"), key="memory.free_all", disabled=not held):
            freed = [log.name(h.id) for h in held]
            record(backends.free_all(backend, ledger), [Step("free", name=n) for n in freed])
    with tabs[3]:
        if not whole_process:
            st.info(tr(E.SHARED_GPU_REFUSAL))
        elif st.button("empty_cache()", key="memory.empty_cache", help="torch.cuda.empty_cache()"):
            record(backends.empty_cache(backend), [Step("empty_cache")])
        if whole_process and st.button("reset_peak_memory_stats()", key="memory.reset_peak",
                                       help="torch.cuda.reset_peak_memory_stats()"):  # fmt: skip
            record(backends.reset_peak(backend), [Step("reset_peak")])
    if message := state.get("memory.message"):
        shown = st.success if message["kind"] == "success" else st.error
        shown(tr(message["text"]), icon=":material/check_circle:" if shown is st.success else None)
        for line in message["errors"]:
            st.error(tr(line), icon=":material/error:")
        if message["detail"]:
            with st.expander(_("The allocator's OutOfMemoryError message")):
                st.code(message["detail"], language=None, wrap_lines=True)
    with st.expander(_("Live chart settings")):
        # Off by default on the simulated GPU: it changes only when this session acts, and each
        # action redraws the chart, so a timer would only spend the server's CPU.
        live = st.toggle(_("Live"), value=not backend.simulated, key="memory.live", **BOUND,
                         help=_(E.LIVE_HELP))  # fmt: skip
        # the floor keeps 50 viewers within one core (lessons.memory.live_sampler.MIN_INTERVAL_S)
        interval = st.slider(_("Refresh every (s)"), MIN_INTERVAL_S, 5.0, 1.0, step=0.5,
                             key="memory.interval", **BOUND)  # fmt: skip
        window = st.slider(_("Window (s)"), 10, 600, 120, step=10, key="memory.window", **BOUND)
    # A hidden browser tab reports hiding and showing (a full rerun), and the fragment below
    # gets no run_every while hidden: a tab nobody looks at costs the server nothing.
    hidden = tab_hidden("memory.tab_visibility")


# ------------------------------------------------------------------------------ live chart
def show_metrics(current: backends.MemoryState) -> None:
    """The numbers under the chart; on the simulated GPU outside the live fragment (only a full
    rerun changes them), as a fragment rerun fades its text, which reads as low contrast."""
    cells = [*st.columns(3), *st.columns(3)[:2]]  # 3 + 2: room for values such as '612.00 MiB'
    for cell, (label, value, help_) in zip(cells, E.metric_cells(current), strict=True):
        cell.metric(_(label), tr(value) if isinstance(value, T) else value,
                    help=tr(help_) if help_ else None)  # fmt: skip
    if not backend.simulated and current.notes:
        st.caption(" ".join(tr(n) for n in current.notes))


@shared_figure(max_entries=96)
def _figure(kind: str, drawn: tuple) -> go.Figure:
    """A figure keyed on what it draws, shared by every session that draws the same: the live
    chart's samples (timed from the newest), a scenario's segments and blocks, the bars."""
    build = {"live": figures.live_chart_of, "segments": figures.segment_map,
             "fragmentation": figures.fragmentation_figure}[kind]  # fmt: skip
    return build(drawn, translator())


# max_bytes=None: the sampler is a live object every viewer shares (a copy would read the GPUs
# again); after the ttl a new one starts and the old thread ends once nobody reads it.
@bounded_cache(max_entries=4, ttl=SHARED_TTL_S, kind="resource", max_bytes=None)
def _device_sampler(devices: tuple[str, ...]) -> LiveSampler:
    """One sampler per process for the real GPUs: one device read per tick for every viewer."""
    gpus = [TorchCudaBackend(d) for d in devices]
    return LiveSampler(lambda: [gpu.state() for gpu in gpus])


def _live_points() -> tuple[list, list[backends.MemoryState]]:
    """The chart's points and the current state of each device."""
    if backend.simulated:  # this session's own simulator: nothing to share
        states = [backend.state()]
        state["memory.history"].append(figures.live_point(time.time(), states[0]))
        return list(state["memory.history"]), states
    devices = tuple(d for d in available_devices() if d.startswith("cuda"))
    sampler = _device_sampler(devices)
    points = sampler.points(float(window))  # before latest(): it starts a stopped sampler
    return points, list(sampler.latest()) or [TorchCudaBackend(d).state() for d in devices]


@st.fragment(run_every=interval if live and not hidden else None)
def live_panel() -> None:
    points, states = _live_points()
    current = next((s for s in states if s.label.startswith(backend.label)), states[0])
    show_chart(_figure("live", figures.live_series(points, float(window))),
               alt=tr(figures.live_chart_alt(current, window)), key="memory.live_chart")
    if not backend.simulated:  # other processes change a real GPU: refresh with the chart
        show_metrics(current)


with layout.figure:
    live_panel()
    if backend.simulated:
        show_metrics(backend.state())


# ------------------------------------------------------------------ inside the allocator
def _segment_map_tab() -> None:
    show_chart(_figure("segments", figures.snapshot_segments(snapshot)),
               alt=tr(figures.segment_map_alt(len(snapshot))), key="memory.segment_map")
    st.markdown(tr(figures.segment_map_caption(len(snapshot), simulated=backend.simulated)))


def _fragmentation_tab() -> None:
    bars = figures.fragmentation_bars(now_state)
    show_chart(_figure("fragmentation", bars), alt=tr(figures.fragmentation_alt(bars)),
               key="memory.frag_chart")  # fmt: skip
    st.markdown(tr(figures.fragmentation_caption(bars)))


def _stats_tab() -> None:
    nonzero = st.checkbox(_("Only non-zero values"), True, key="memory.stats_nonzero", **BOUND)
    rows = [(k, v) for k, v in now_state.stats.items() if v or not nonzero]
    st.dataframe(pd.DataFrame(rows, columns=[_("key"), _("value")]), hide_index=True)


def _processes_tab() -> None:
    if backend.simulated:
        st.markdown(_("Simulated GPU: the only 'process' is this page's simulator."))
    elif now_state.processes:
        st.dataframe(table_of(process_rows(now_state.processes)), hide_index=True)
    else:
        st.markdown(_("NVML lists no compute processes (or cannot be read): {notes}")
                    .format(notes=" ".join(tr(n) for n in now_state.notes)))  # fmt: skip


# ------------------------------------------------------------------------------ the notes
_claims = st.cache_data(show_spinner=False)(allocator_rule.check_allocator_claims)
_eval_memory = bounded_cache(max_entries=32, ttl=SHARED_TTL_S)(eval_memory.measure_eval_memory)
_map_location = bounded_cache(max_entries=8, ttl=SHARED_TTL_S)(map_location.map_location_demo)
_conv_oom = st.cache_data(show_spinner=False)(cudnn_error.conv_oom_demo)


def _allocator_rule_tab() -> None:
    st.caption(_(allocator_rule.CLAIMS_CAPTION).format(ref=cite("000:4")))
    rows = allocator_rule.claim_rows(_claims(), english=current_language() == "en")
    show_table(table_of(rows), hide_index=True, border="horizontal")
    st.caption(_(cudnn_error.ERROR_DOCTOR_LINK))
    for callout in callouts_of("lessons.memory.allocator_rule").values():
        notes_callout(callout)
    st.caption(_(allocator_rule.ON_A_GPU).format(scenario=_(SCENARIOS["reuse"].name)))


def _no_grad_tab() -> None:
    st.markdown(_(eval_memory.NO_GRAD_INTRO))
    notes_citation("004:49-53", verbatim=False)
    c1, c2, c3 = st.columns(3)
    batch = c1.slider(_("Batch size"), 1, 64, 8, key="memory.nograd_batch", **BOUND)
    size = c2.select_slider(_("Image size"), [16, 32, 64, 128], 32, key="memory.nograd_size",
                            **BOUND)  # fmt: skip
    batches = c3.slider(_("Batches kept"), 1, 8, 3, key="memory.nograd_batches", **BOUND)
    # its CUDA measurement resets the whole process's peaks: on a shared GPU it runs on the CPU
    with st.spinner(_("Evaluating ...")):
        demo = _eval_memory(batch, size, batches, backends.measuring_device(settings.device))
    st.dataframe(table_of(eval_memory.eval_memory_rows(demo)), hide_index=True,
                 key="memory.nograd_table")  # fmt: skip
    st.markdown("".join(tr(text) for text in eval_memory.measured_text(demo)))
    show_code(eval_memory.eval_memory_snippet(batch, size, batches),
              title=N_("Measure it yourself (runs on CPU)"))  # fmt: skip


def _map_location_tab() -> None:
    st.markdown(_(map_location.MAP_LOCATION_INTRO))
    notes_citation("000:63", verbatim=False)
    world = st.slider(_("DDP workers (processes)"), 1, 8, 4, key="memory.load_world", **BOUND)
    load = _map_location(world)
    if load.rewritten:
        st.info(tr(map_location.rewritten_notice(load)), icon=":material/info:")
    st.dataframe(table_of(map_location.attempt_rows(load)), hide_index=True,
                 key="memory.load_table")  # fmt: skip
    st.markdown(tr(map_location.ballooning_text(load)))
    st.dataframe(table_of(map_location.worker_rows(load)), hide_index=True,
                 key="memory.load_workers")  # fmt: skip
    notes_citation("000:76", verbatim=False)
    st.caption(_(map_location.ERROR_DOCTOR_LINK))
    show_code(map_location.MAP_LOCATION_SNIPPET, title=N_("Load it yourself"))


def _cudnn_error_tab() -> None:
    with st.container(border=True, key="notes_callout-memory_cudnn_error"):
        st.markdown(_("**The notes say** ({ref})").format(ref=cite("002:1360-1367")))
        st.code(cudnn_error.NOTES_ERROR, language="text", wrap_lines=True)
        notes_quote(*cudnn_error.NOTES_READING)
        st.markdown(_(cudnn_error.WHY))
    st.markdown(_(cudnn_error.DEMO_INTRO))
    rows = cudnn_error.conv_oom_rows(_conv_oom())
    show_table(table_of(rows), hide_index=True, border="horizontal")
    st.caption(_(cudnn_error.ERROR_DOCTOR_LINK))


now_state = backend.state()
snapshot = backend.snapshot()
with layout.details:
    with st.container(key=SCENARIO_PART):  # the scenario's numbers, step by step
        if (run := state.get("memory.scenario_run")) is None:
            st.header(_("Guided scenario"), anchor=False)
            st.markdown(_("Pick a scenario beside the chart and press **Run scenario**."))
        else:
            title = _(run.scenario.title)
            st.header(_("Guided scenario: {title}").format(title=title), anchor=False)
            st.markdown(_(run.scenario.lesson))
            notes_citation(run.scenario.ref, verbatim=run.scenario.verbatim)
            st.markdown(_("The steps on {backend}, with the numbers after each:")
                        .format(backend=tr(run.backend_label)))  # fmt: skip
            show_table(table_of(run.rows()), hide_index=True, border="horizontal")
    with st.container(key=INSIDE_PART):
        st.header(_("Inside the allocator"), anchor=False)
        if backend.simulated:
            st.markdown(_(E.SIMULATOR_MODEL))
        lazy_tabs([_("Segment map"), _("Fragmentation"), "memory_stats", _("Processes (NVML)")],
                  "memory.allocator_tab",
                  (_segment_map_tab, _fragmentation_tab, _stats_tab, _processes_tab))  # fmt: skip
    with st.container(key=NOTES_PART):
        st.header(_("What the notes teach about memory, checked"), anchor=False)
        lazy_tabs([_("Allocator rule (000:4-5)"), "no_grad (004:49)", "map_location (000:63)",
                   _("cuDNN error (002:1360)")], "memory.notes_tab",
                  (_allocator_rule_tab, _no_grad_tab, _map_location_tab,
                   _cudnn_error_tab))  # fmt: skip
    snippet = log.snippet(backend.key, settings.device if has_gpu else "cuda:0")
    show_code(snippet or _(E.NO_SNIPPET), title=N_("Reproduce these allocations with torch.cuda"))
predict_panel(layout.predict, "memory", lambda: questions(form_view(state, device_total)))
