"""CUDA memory monitor: live allocated / reserved / device memory on a real GPU, or the same
lessons on a simulated GPU driven by a model of PyTorch's caching allocator."""

from __future__ import annotations

import os
import time
from collections import deque

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.environment import available_devices
from core.text import N_, T
from lessons.memory import allocator_rule, cudnn_error, eval_memory, map_location
from lessons.memory.allocator_sim import format_size
from lessons.memory.backends import (
    DTYPES,
    SIMULATED_TOTALS_GB,
    UNITS,
    ActionResult,
    MemoryState,
    SimulatedGpu,
    TensorLedger,
    TorchCudaBackend,
    allocate,
    empty_cache,
    free_all,
    free_tensors,
    gpu_memory_policy,
    parse_shape,
    process_wide_calls_allowed,
    request_bytes,
    reset_peak,
    session_quota,
)
from lessons.memory.cuda_snippet import snippet_for
from lessons.memory.figures import (
    BAND_LABEL,
    FragmentationBars,
    LiveSeries,
    Segment,
    fragmentation_bars,
    fragmentation_figure,
    fragmentation_ratio,
    live_chart_of,
    live_point,
    live_series,
    segment_map,
    snapshot_segments,
)
from lessons.memory.live_sampler import MIN_INTERVAL_S, LiveSampler
from lessons.memory.scenarios import SCENARIOS, Step, run_scenario
from ui.caching import SHARED_TTL_S, bounded_cache
from ui.charts import shared_figure, show_chart
from ui.code import show_code
from ui.i18n import _, cite, current_language, tr, translator
from ui.lesson import lesson_layout
from ui.links import BOUND, reject_unusable_link_value
from ui.notes_callout import callouts_of, notes_callout, notes_citation, notes_quote
from ui.settings import current_settings
from ui.tables import show_table
from ui.visibility import tab_hidden

HISTORY_MAX = 5000
SIM_CHOICE = N_("simulated GPU")
LOOK_AT = N_(
    "the gap between **allocated** (your tensors, blue) and **reserved** (PyTorch's cache, "
    "purple), and the grey band on top: memory nvidia-smi also counts but PyTorch does not "
    "(the CUDA context)."
)
#: Why a real GPU shared by a class runs no scenario and no Cache-tab call (TP_GPU_MEMORY).
SHARED_GPU_REFUSAL = N_(
    "This GPU is shared by every session of the server (TP_GPU_MEMORY=shared): guided scenarios "
    "and the Cache tab empty the cache, reset the peaks and cap memory for the whole process, "
    "so they run only on the simulated GPU here (choose it above). "
    "Allocate and Free still work on the real device, within this session's quota."
)
SHAPE_MAX_CHARS = 200  # a shape is a few numbers; a link's longer text is not one


def is_usable_shape(text: str) -> bool:
    """Whether a link's shape text is one the page can allocate from (else it opens at the
    default shape): :func:`parse_shape` takes it, and it is short."""
    if len(text) > SHAPE_MAX_CHARS:
        return False
    try:
        parse_shape(text)
    except ValueError:
        return False
    return True


state = st.session_state
settings = current_settings()
# Value controls are bound to the URL (ui/links.py: a lesson link sets them) and keep their
# values across page switches. The size's default goes in through the session state: its
# widget has value=None so that it may be cleared (None), which the page then refuses.
state.setdefault("memory.size", 4.0)
if "memory.ledger" not in state:
    # Tensors belong to this browser session: the ledger frees them when the session ends.
    state["memory.ledger"] = TensorLedger()
    state["memory.history"] = deque(maxlen=HISTORY_MAX)
ledger: TensorLedger = state["memory.ledger"]
logs: dict[str, list[Step]] = state.setdefault("memory.logs", {})  # backend key -> steps
names: dict[int, str] = state.setdefault("memory.names", {})  # tensor id -> snippet variable

layout = lesson_layout(N_("CUDA memory monitor"), LOOK_AT)


def trx(text: object) -> str:
    """:func:`ui.i18n.tr`, also translating the values of a ``T`` that are ``T`` themselves
    (core builds some messages from sentence pieces)."""
    if isinstance(text, T) and text.args:
        args = {k: trx(v) if isinstance(v, T) else v for k, v in text.args.items()}
        return _(text.template).format(**args)
    return tr(text)


def show_message(kind: str, text: str, *, errors: tuple[str, ...] = (), detail: str = "") -> None:
    """The one message slot: only the latest action's outcome is shown (issue 12)."""
    state["memory.message"] = {"kind": kind, "text": text, "errors": errors, "detail": detail}


def record(result: ActionResult, steps: list[Step]) -> None:
    show_message("success" if result.ok else "error", result.message, detail=result.error)
    if result.ok:
        logs.setdefault(backend.key, []).extend(steps)
    st.rerun()  # redraw everything (tensor list, charts) from the new state


def var_name(tensor_id: int) -> str:
    """The snippet's variable for a tensor: ``t<id>``, or its name in a guided scenario."""
    return names.get(tensor_id, f"t{tensor_id}")


def run_guided(key: str) -> None:
    """Run scenario ``key``; its steps restart the snippet and its message fills the slot."""
    if not whole_process:
        show_message("error", SHARED_GPU_REFUSAL)
        return
    with st.spinner(_("Running the scenario ...")):
        run = run_scenario(key, backend, ledger)
    state["memory.scenario_run"] = run
    # The scenario starts by freeing this session's tensors and emptying the cache, so the
    # snippet restarts from its steps; its surviving tensors keep their scenario names.
    logs[backend.key] = list(run.scenario.steps)
    live_ids = {h.id for h in ledger.held(backend.key)}
    names.update({o.tensor_id: o.step.name for o in run.outcomes if o.tensor_id in live_ids})
    caught = [(i, o) for i, o in enumerate(run.outcomes, start=1) if o.error]
    show_message(
        "success",
        run.summary,
        errors=tuple(
            T(
                "Caught OutOfMemoryError at '{name}' (step {i}); the run went on.",
                name=o.step.name,
                i=i,
            )
            for i, o in caught
        ),
        detail="\n\n".join(o.error for _i, o in caught),
    )


# ------------------------------------------------------------------------------ controls
has_gpu = settings.device.startswith("cuda")
with layout.controls:
    choice = SIM_CHOICE
    if has_gpu:
        choice = st.radio(
            _("Device"),
            [settings.device, SIM_CHOICE],
            key="memory.backend",
            **BOUND,
            horizontal=True,
            format_func=translator(),
            help=_(
                "The real GPU chosen in the sidebar, or a simulated GPU that follows the same "
                "allocator rules."
            ),
        )
    if choice == SIM_CHOICE:
        total_gb = st.radio(
            _("Simulated GPU memory"),
            SIMULATED_TOTALS_GB,
            index=1,  # 24 GB
            key="memory.sim_total",
            **BOUND,
            horizontal=True,
            format_func=lambda gb: f"{gb} GB",
        )
        sim = state.get("memory.sim")
        if sim is None or sim.total_gb != total_gb:
            if sim is not None:
                ledger.drop_backend(sim.key)
                logs.pop(sim.key, None)  # its tensors are gone with it
                state.pop("memory.scenario_run", None)
                state.pop("memory.message", None)
            sim = SimulatedGpu(int(total_gb))
            state["memory.sim"] = sim
            state["memory.history"].clear()
        backend = sim
        banner = (
            _("**SIMULATED** {total} GB GPU, {context} CUDA context: nothing runs on hardware.")
            if has_gpu
            else _(
                "**SIMULATED** {total} GB GPU, {context} CUDA context (no GPU here): nothing "
                "runs on hardware."
            )
        )
        st.warning(
            banner.format(total=total_gb, context=format_size(backend.context_bytes)),
            icon=":material/science:",
        )
    else:
        try:
            backend = TorchCudaBackend(choice)
        except ValueError as error:
            st.error(
                _("{error}. Pick another device in the sidebar or use the simulated GPU.").format(
                    error=tr(error)
                )
            )
            st.stop()
        st.info(
            _(
                "Real device {device}: PyTorch's counters cover this server process (all "
                "sessions), NVML the whole device. Your tensors belong to your browser session."
            ).format(device=choice),
            icon=":material/memory:",
        )
    # A real GPU shared by a class: calls that act on the whole process (a scenario's
    # empty_cache and memory cap, the Cache tab) are refused, and Allocate has a per-session
    # quota ($TP_GPU_MEMORY, lessons.memory.backends).
    try:
        whole_process = process_wide_calls_allowed(backend, gpu_memory_policy())
        quota = None if backend.simulated else session_quota()
    except ValueError as error:
        st.error(_("{error}. Fix the server's setting and restart it.").format(error=tr(error)))
        st.stop()
    device_total = backend.state().device_total

    tab_scen, tab_alloc, tab_held, tab_cache = st.tabs(
        [_("Scenario"), _("Allocate"), _("Free"), _("Cache")]
    )
    with tab_scen:
        t = translator()
        key = st.selectbox(
            _("Guided scenario"),
            list(SCENARIOS),
            key="memory.scenario",
            **BOUND,
            format_func=lambda k: t(SCENARIOS[k].name),
            help=_(
                "Each scenario frees this session's tensors and empties the cache first, then "
                "runs its steps; the table below the chart lists them."
            ),
        )
        if not state.get("memory.opened"):
            # Arrive on the chosen guided scenario (the first one, or a lesson link's) already
            # run: the chart has something to show. After the select box, which reads the link.
            state["memory.opened"] = True
            run_guided(key)
        if st.button(_("Run scenario"), key="memory.run_scenario", type="primary"):
            run_guided(key)
            st.rerun()

    with tab_alloc:
        mode = st.radio(
            _("Request by"),
            [N_("size"), N_("shape + dtype")],
            key="memory.alloc_mode",
            **BOUND,
            horizontal=True,
            format_func=translator(),
        )
        c1, c2 = st.columns(2)
        if mode == "size":
            # no min_value: the browser would silently keep the old value for -5 (issue 12);
            # the core refuses it with a message instead
            size = c1.number_input(
                _("Size"),
                value=None,
                step=1.0,
                key="memory.size",
                **BOUND,
                format="%g",
                placeholder="4",
            )
            unit = c2.selectbox(
                _("Unit"),
                list(UNITS),
                index=0,
                key="memory.unit",
                **BOUND,
                help=_("Binary units: 1 KB = 1024 B, as torch reports them."),
            )
        else:
            reject_unusable_link_value("memory.shape", is_usable_shape)
            shape_text = c1.text_input(
                _("Shape"), "1024, 1024", max_chars=SHAPE_MAX_CHARS, key="memory.shape", **BOUND
            )
            dtype = c2.selectbox("dtype", list(DTYPES), key="memory.dtype", **BOUND)
        if st.button(_("Allocate"), key="memory.allocate", type="primary"):
            try:
                if mode == "size":
                    nbytes, label = request_bytes(size, unit, max_bytes=device_total)
                    shape, dt = None, "uint8"
                else:
                    shape = parse_shape(shape_text)
                    nbytes, label = request_bytes(shape=shape, dtype=dtype, max_bytes=device_total)
                    dt = dtype
            except ValueError as error:
                reason = error.args[0] if len(error.args) == 1 else str(error)
                if str(reason).endswith("."):
                    reason = str(reason).rstrip(".")
                if str(reason).startswith("Refused"):
                    text = T("{error}.", error=reason)
                else:
                    text = T(
                        "{error}. Hint: a positive size, or a shape like '1024, 1024'.",
                        error=reason,
                    )
                show_message("error", text)
            else:
                with st.spinner(_("Allocating ...")):
                    result = allocate(
                        backend, ledger, nbytes, label, shape=shape, dtype=dt, quota=quota
                    )
                name = f"t{result.held[0].id}" if result.ok else ""
                record(result, [Step("alloc", name=name, nbytes=nbytes, shape=shape, dtype=dt)])

    with tab_held:
        held = ledger.held(backend.key)
        options = {h.id: h for h in held}
        # Not bound to the URL: the choices are this session's own tensors, which a link's
        # reader does not hold (ids name nothing there), and freeing needs a click anyway.
        if "memory.free_select" in state:  # drop tensors freed since the last run
            state["memory.free_select"] = [i for i in state["memory.free_select"] if i in options]
        held_label = _("{name}: {label} (block {size})")
        selected = st.multiselect(
            _("Tensors this session holds"),
            list(options),
            key="memory.free_select",
            format_func=lambda i: held_label.format(
                name=var_name(i), label=options[i].label, size=format_size(options[i].block)
            ),
            placeholder=_("none held") if not held else _("choose tensors"),
        )
        if st.button(_("Free selected (del)"), key="memory.free", disabled=not held):
            result = free_tensors(backend, ledger, list(selected))
            record(result, [Step("free", name=var_name(i)) for i in selected])
        if st.button(_("Free all"), key="memory.free_all", disabled=not held):
            freed = [var_name(h.id) for h in held]
            result = free_all(backend, ledger)
            record(result, [Step("free", name=n) for n in freed])

    with tab_cache:
        if not whole_process:
            st.info(trx(SHARED_GPU_REFUSAL))
        elif st.button("empty_cache()", key="memory.empty_cache", help="torch.cuda.empty_cache()"):
            record(empty_cache(backend), [Step("empty_cache")])
        if whole_process and st.button(
            "reset_peak_memory_stats()",
            key="memory.reset_peak",
            help="torch.cuda.reset_peak_memory_stats()",
        ):
            record(reset_peak(backend), [Step("reset_peak")])

    message = state.get("memory.message")
    if message:
        shown = st.success if message["kind"] == "success" else st.error
        shown(trx(message["text"]), icon=":material/check_circle:" if shown is st.success else None)
        for line in message["errors"]:
            st.error(trx(line), icon=":material/error:")
        if message["detail"]:
            with st.expander(_("The allocator's OutOfMemoryError message")):
                st.code(message["detail"], language=None, wrap_lines=True)

    with st.expander(_("Live chart settings")):
        # Off by default on the simulated GPU: it changes only when this session acts, and
        # every action redraws the chart, so a timer would only spend the server's CPU (a
        # rerun a second per student) to move the time axis. A real GPU refreshes by itself.
        live = st.toggle(
            _("Live"),
            value=not backend.simulated,
            key="memory.live",
            **BOUND,
            help=_(
                "Redraw the chart every interval. Off by default on the simulated GPU, which "
                "changes only when you act."
            ),
        )
        # the floor keeps 50 viewers within one core (lessons.memory.live_sampler.MIN_INTERVAL_S)
        interval = st.slider(
            _("Refresh every (s)"),
            MIN_INTERVAL_S,
            5.0,
            1.0,
            step=0.5,
            key="memory.interval",
            **BOUND,
        )
        window = st.slider(_("Window (s)"), 10, 600, 120, step=10, key="memory.window", **BOUND)
    # A hidden browser tab stops its timer: the tab reports hiding and showing (a full rerun),
    # and the fragment below gets no run_every while hidden (issue 13: a tab nobody looks at
    # costs the server nothing).
    hidden = tab_hidden("memory.tab_visibility")


# ------------------------------------------------------------------------------ live chart
def live_backends() -> list:
    if backend.simulated:
        return [backend]
    return [TorchCudaBackend(d) for d in available_devices() if d.startswith("cuda")]


def show_metrics(current: MemoryState) -> None:
    """The numbers under the chart. On the simulated GPU only this session's actions change
    them (each a full rerun), so they sit outside the live fragment: a fragment rerun fades its
    text for a moment, which an accessibility audit then reads as low contrast."""
    m = [*st.columns(3), *st.columns(3)[:2]]  # 3 + 2: room for values such as '612.00 MiB'
    m[0].metric(_("allocated"), format_size(current.allocated))
    m[1].metric(_("reserved"), format_size(current.reserved))
    m[2].metric(
        _("device used"),
        _("n/a") if current.device_used is None else format_size(current.device_used),
        help=_("NVML's number, what nvidia-smi shows (simulated)")
        if backend.simulated
        else _("NVML's number, what nvidia-smi shows"),
    )
    band = current.not_reserved_used
    m[3].metric(
        _("not reserved by PyTorch"),
        _("n/a") if band is None else format_size(band),
        help=_("The grey band: {what}.").format(what=_(BAND_LABEL)),
    )
    m[4].metric(_("segments"), current.segments)
    if not backend.simulated and current.notes:
        st.caption(" ".join(trx(n) for n in current.notes))


# max_bytes=None: the sampler is a live object every viewer shares (a copy would read the GPUs
# again); after the ttl a new one starts and the old thread ends once nobody reads it.
@bounded_cache(max_entries=4, ttl=SHARED_TTL_S, kind="resource", max_bytes=None)
def _device_sampler(devices: tuple[str, ...]) -> LiveSampler:
    """One sampler per process for the real GPUs: every viewer's chart draws from its history
    instead of reading the devices itself (issue 13)."""
    backends = [TorchCudaBackend(d) for d in devices]
    return LiveSampler(lambda: [b.state() for b in backends])


def _live_points() -> tuple[list, list[MemoryState]]:
    """The chart's points and the current state of each device."""
    if backend.simulated:  # this session's own simulator: nothing to share
        states = [backend.state()]
        state["memory.history"].append(live_point(time.time(), states[0]))
        return list(state["memory.history"]), states
    sampler = _device_sampler(tuple(d for d in available_devices() if d.startswith("cuda")))
    points = sampler.points(float(window))
    return points, list(sampler.latest()) or [b.state() for b in live_backends()]


@shared_figure(max_entries=32)
def _live_figure(series: tuple[LiveSeries, ...]) -> go.Figure:
    """The live chart, keyed on exactly what it draws: the window's samples, timed from the
    newest. On a real GPU every viewer with the same window shares one figure per sampler tick;
    on the simulated GPU a student arriving at the defaults gets the first student's figure (the
    same scenario, one sample). Bounded: each tick or action makes a new key."""
    return live_chart_of(series, translator())


@st.fragment(run_every=interval if live and not hidden else None)
def live_panel() -> None:
    points, states = _live_points()
    current = next((s for s in states if s.label.startswith(backend.label)), states[0])
    show_chart(
        _live_figure(live_series(points, float(window))),
        alt=_(
            "Live memory of {device}: allocated {allocated} and reserved {reserved} over the "
            "last {window} seconds, with a band for the memory the device uses outside "
            "PyTorch's cache."
        ).format(
            device=tr(current.label),
            allocated=format_size(current.allocated),
            reserved=format_size(current.reserved),
            window=window,
        ),
        key="memory.live_chart",
    )
    if not backend.simulated:  # other processes change a real GPU: refresh with the chart
        show_metrics(current)


with layout.figure:
    live_panel()
    if backend.simulated:
        show_metrics(backend.state())


@shared_figure(max_entries=32)
def _segment_figure(segments: tuple[Segment, ...]) -> go.Figure:
    """The segment map, keyed on the segments and blocks it draws: sessions whose allocators
    hold the same blocks (every student after the same scenario) share it."""
    return segment_map(segments, translator())


@shared_figure(max_entries=32)
def _fragmentation_figure(bars: FragmentationBars) -> go.Figure:
    """The fragmentation bars, keyed on the four numbers they draw."""
    return fragmentation_figure(bars, translator())


def _segment_map_tab() -> None:
    """The snapshot's segments, one row each, coloured by block state."""
    show_chart(
        _segment_figure(snapshot_segments(snapshot)),
        alt=_(
            "Segment map: {n} segment(s), each a row of its blocks, coloured allocated, "
            "inactive split or free whole segment."
        ).format(n=len(snapshot)),
        key="memory.segment_map",
    )
    text = (
        _(
            "{n} segment(s) from the simulator's snapshot(). Orange pieces are cached but "
            "cannot be returned: their segment still holds a tensor. Green segments are "
            "entirely free; empty_cache() gives them back."
        )
        if backend.simulated
        else _(
            "{n} segment(s) from torch.cuda.memory_snapshot(). Orange pieces are cached but "
            "cannot be returned: their segment still holds a tensor. Green segments are "
            "entirely free; empty_cache() gives them back."
        )
    )
    st.markdown(text.format(n=len(snapshot)))


def _fragmentation_tab() -> None:
    """Allocated vs cached vs the largest free block."""
    show_chart(
        _fragmentation_figure(fragmentation_bars(now_state)),
        alt=_(
            "Bars: allocated {allocated}, reserved but unallocated {cached}, inactive split "
            "{inactive}, largest free block {largest}."
        ).format(
            allocated=format_size(now_state.allocated),
            cached=format_size(now_state.cached),
            inactive=format_size(now_state.inactive_split_bytes),
            largest=format_size(now_state.largest_free_block),
        ),
        key="memory.frag_chart",
    )
    st.markdown(
        _(
            "Reserved but unallocated: **{cached}**; the largest free block is **{largest}**, "
            "so a request larger than that needs a new segment although {cached} is free in "
            "the cache (fragmentation {ratio:.0%})."
        ).format(
            cached=format_size(now_state.cached),
            largest=format_size(now_state.largest_free_block),
            ratio=fragmentation_ratio(now_state),
        )
    )


def _stats_tab() -> None:
    """The memory_stats() counters."""
    # a lazy tab: persist_state keeps the value while the tab is closed
    nonzero = st.checkbox(_("Only non-zero values"), True, key="memory.stats_nonzero", **BOUND)
    columns = [_("key"), _("value")]
    rows = [dict(zip(columns, (k, v), strict=True)) for k, v in now_state.stats.items()
            if v or not nonzero]  # fmt: skip
    st.dataframe(pd.DataFrame(rows, columns=columns), hide_index=True)


def _processes_tab() -> None:
    """The device's processes, as NVML lists them."""
    if backend.simulated:
        st.markdown(_("Simulated GPU: the only 'process' is this page's simulator."))
    elif now_state.processes:
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "pid": p.pid,
                        _("who"): _("this app's server") if p.pid == os.getpid() else "",
                        _("used"): _("n/a") if p.used is None else format_size(p.used),
                    }
                    for p in now_state.processes
                ]
            ),
            hide_index=True,
        )
    else:
        st.markdown(
            _("NVML lists no compute processes (or cannot be read): {notes}").format(
                notes=" ".join(trx(n) for n in now_state.notes)
            )
        )


# ------------------------------------------------------------------------------ details
now_state = backend.state()
snapshot = backend.snapshot()
with layout.details:
    run = state.get("memory.scenario_run")
    if run is not None:
        st.header(_("Guided scenario: {title}").format(title=_(run.scenario.title)), anchor=False)
        st.markdown(_(run.scenario.lesson))
        notes_citation(run.scenario.ref, verbatim=run.scenario.verbatim)
        st.markdown(
            _("The steps on {backend}, with the numbers after each:").format(
                backend=tr(run.backend_label)
            )
        )
        show_table(
            pd.DataFrame([{_(k): trx(v) for k, v in row.items()} for row in run.rows()]),
            hide_index=True,
            border="horizontal",
        )
    else:
        st.header(_("Guided scenario"), anchor=False)
        st.markdown(_("Pick a scenario beside the chart and press **Run scenario**."))

    st.header(_("Inside the allocator"), anchor=False)
    if backend.simulated:
        st.markdown(
            _(
                "The simulated GPU is a model of PyTorch's caching allocator "
                "(c10/cuda/CUDACachingAllocator.cpp): rounding, pools, best fit, splitting, "
                "merging, empty_cache, retry and OOM. Every number on this page comes from it."
            )
        )
    # on_change="rerun": only the open tab runs and is drawn (lazy tabs), so an allocation
    # does not redraw three views nobody is looking at.
    tab_map, tab_frag, tab_stats, tab_proc = st.tabs(
        [_("Segment map"), _("Fragmentation"), "memory_stats", _("Processes (NVML)")],
        key="memory.allocator_tab",
        bind="query-params",
        on_change="rerun",
    )
    with tab_map:
        if tab_map.open:
            _segment_map_tab()

    with tab_frag:
        if tab_frag.open:
            _fragmentation_tab()

    with tab_stats:
        if tab_stats.open:
            _stats_tab()

    with tab_proc:
        if tab_proc.open:
            _processes_tab()


# ------------------------------------------------------------------------------ the notes
@st.cache_data(show_spinner=False)
def _claims() -> tuple:
    return allocator_rule.check_allocator_claims()


@bounded_cache(max_entries=32, ttl=SHARED_TTL_S)
def _eval_memory(batch: int, size: int, batches: int, device: str):
    return eval_memory.measure_eval_memory(batch, size, batches, device)


@bounded_cache(max_entries=8, ttl=SHARED_TTL_S)  # 1-8 workers
def _map_location(world_size: int):
    return map_location.map_location_demo(world_size)


@st.cache_data(show_spinner=False)
def _conv_oom() -> tuple:
    return cudnn_error.conv_oom_demo()


def _allocator_rule_tab() -> None:
    """Each claim of the notes' allocator passage, decided by a live run."""
    st.caption(
        _(
            "Each claim of the {ref}-5 passage, decided by a live run of the simulator "
            "(it follows c10/cuda/CUDACachingAllocator.cpp) or of the installed torch."
        ).format(ref=cite("000:4"))
    )
    english = current_language() == "en"
    show_table(
        pd.DataFrame(
            [
                {
                    _("notes"): c.ref,
                    _("the notes say"): c.quote_zh,
                    **({"in English": c.claim_en} if english else {}),
                    _("holds"): _("yes") if c.holds else _("no"),
                    _("measured"): trx(c.evidence),
                }
                for c in _claims()
            ]
        ),
        hide_index=True,
        border="horizontal",
    )
    for callout in callouts_of("lessons.memory.allocator_rule").values():
        notes_callout(callout)
    st.caption(
        _(
            "On a GPU, choose it above and run the guided scenario '{scenario}' to see the "
            "real allocator place the same requests."
        ).format(scenario=_(SCENARIOS["reuse"].name))
    )


def _no_grad_tab() -> None:
    """What evaluation without torch.no_grad() keeps alive, measured."""
    st.markdown(
        _(
            "The notes (004:49-53): evaluate under `torch.no_grad()`, or memory may blow up. "
            "In grad mode every forward saves activations for a backward that never comes, and "
            "an evaluation loop that keeps its outputs keeps all of them alive through the graph."
        )
    )
    notes_citation("004:49-53", verbatim=False)
    c1, c2, c3 = st.columns(3)
    # a lazy tab: persist_state keeps these values while the tab is closed
    ng_batch = c1.slider(_("Batch size"), 1, 64, 8, key="memory.nograd_batch", **BOUND)
    ng_size = c2.select_slider(
        _("Image size"), [16, 32, 64, 128], 32, key="memory.nograd_size", **BOUND
    )
    ng_batches = c3.slider(_("Batches kept"), 1, 8, 3, key="memory.nograd_batches", **BOUND)
    # The CUDA measurement resets the device's peak statistics, a process-wide call: on a GPU
    # shared by a class the demo runs on the CPU (autograd keeps the same tensors there).
    try:
        exclusive = gpu_memory_policy() == "exclusive"
    except ValueError:  # the setting's error is shown at the top of the page
        exclusive = False
    ng_device = settings.device if has_gpu and exclusive else "cpu"
    with st.spinner(_("Evaluating ...")):
        demo = _eval_memory(ng_batch, ng_size, ng_batches, ng_device)
    st.dataframe(
        pd.DataFrame(
            [
                {
                    _("mode"): _(m.mode),
                    _("saved for backward per batch"): format_size(m.saved_per_batch),
                    _("still held after {n} batch(es)").format(n=demo.batches): format_size(m.held),
                    "output.requires_grad": m.output_requires_grad,
                    **(
                        {_("CUDA max_memory_allocated growth"): format_size(m.cuda_peak)}
                        if m.cuda_peak is not None
                        else {}
                    ),
                }
                for m in demo.modes
            ]
        ),
        hide_index=True,
        key="memory.nograd_table",
    )
    grad = demo.modes[0]
    measured = _(
        "Measured on `{device}` with `saved_tensors_hooks`: in grad mode each batch saves "
        "**{saved}** of activations (the input, {input}, and the weights, {weights}, not "
        "counted), and keeping {n} outputs keeps **{held}** alive; under `torch.no_grad()` "
        "nothing is saved."
    ).format(
        device=demo.device,
        saved=format_size(grad.saved_per_batch),
        input=format_size(demo.input_bytes),
        weights=format_size(demo.weight_bytes),
        n=demo.batches,
        held=format_size(grad.held),
    )
    if grad.cuda_peak is None:
        measured += _(
            " There is no GPU here: on one, the same bytes would be CUDA memory, and the "
            "table adds `torch.cuda.max_memory_allocated`."
        )
    st.markdown(measured)
    show_code(
        eval_memory.eval_memory_snippet(ng_batch, ng_size, ng_batches),
        title=N_("Measure it yourself (runs on CPU)"),
    )


def _map_location_tab() -> None:
    """torch.load of a cuda:0 state_dict with the notes' map_location calls."""
    st.markdown(
        _(
            "The notes (000:63): `torch.load` first deserialises to the CPU, then moves each "
            "tensor to the device it was saved from, and fails if that device is missing; "
            "`map_location` maps it elsewhere. Below, a state_dict saved from `cuda:0` into an "
            "in-memory file is loaded with the notes' calls (always `weights_only=True`)."
        )
    )
    notes_citation("000:63", verbatim=False)
    world = st.slider(_("DDP workers (processes)"), 1, 8, 4, key="memory.load_world", **BOUND)
    load = _map_location(world)
    if load.rewritten:
        st.info(
            _(
                "No cuda:0 here: the file was written by torch.save on the CPU and its device "
                "tag set to 'cuda:0', byte for byte what a cuda:0 save records; torch.load "
                "below reads the tags {tags}."
            ).format(tags=sorted(set(load.location_tags))),
            icon=":material/info:",
        )
    st.dataframe(
        pd.DataFrame(
            [
                {
                    _("call"): a.call,
                    _("lands on"): a.device or _("raises"),
                    _("error"): a.error or "",
                }
                for a in load.attempts
            ]
        ),
        hide_index=True,
        key="memory.load_table",
    )
    st.markdown(
        _(
            "GPU 0 ballooning (000:76): in DDP each of the {world} worker processes loads the "
            "same {size} state_dict. Without `map_location` every copy is restored to its saved "
            "device `{device}`: GPU 0 receives **{gpu0}** (and every worker opens a CUDA "
            "context there too), while the other GPUs get nothing. "
            "`map_location=f'cuda:{{local_rank}}'` (or saving from the CPU, as the notes' fix "
            "does) puts each copy on its own worker's GPU."
        ).format(
            world=world,
            size=format_size(load.nbytes),
            device=load.saved_device,
            gpu0=format_size(load.gpu0_bytes_without_map_location),
        )
    )
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "rank": w.rank,
                    _("no map_location"): w.default_device,
                    "map_location=f'cuda:{rank}'": w.mapped_device,
                    _("bytes"): format_size(w.nbytes),
                }
                for w in load.workers
            ]
        ),
        hide_index=True,
        key="memory.load_workers",
    )
    notes_citation("000:76", verbatim=False)
    show_code(map_location.MAP_LOCATION_SNIPPET, title=N_("Load it yourself"))


def _cudnn_error_tab() -> None:
    """The notes' cuDNN error, reproduced as what it really is."""
    with st.container(border=True, key="notes_callout-memory_cudnn_error"):
        st.markdown(_("**The notes say** ({ref})").format(ref=cite("002:1360-1367")))
        # the error the notes quote, as the console prints it
        st.code(
            "Unable to find a valid cuDNN algorithm to run convolution",
            language="text",
            wrap_lines=True,
        )
        notes_quote(
            "很有可能是 GPU 显存不够的原因, 尝试把 batch_size 改小一点问题得以解决;",
            "most likely the GPU does not have enough memory; making batch_size smaller solved it.",
        )
        st.markdown(
            _(
                "**Why.** For each convolution cuDNN offers several algorithms, many of which "
                "need a workspace of GPU memory. PyTorch's cuDNN path (Conv_v7.cpp) allocates "
                "the workspace through the caching allocator and, when that raises "
                "OutOfMemoryError, tries the next algorithm; if every one fails it reports "
                "*Unable to find a valid cuDNN algorithm* instead of the OOM. So the notes' "
                "reading is usually right, and a smaller batch leaves room for a workspace. "
                "Builds that use the cuDNN v8 frontend say *unable to find an engine to execute "
                "this computation* instead, and that message also appears for GPUs or cuDNN "
                "versions the build does not support, which no batch size fixes."
            )
        )
    rows = _conv_oom()
    st.markdown(
        _(
            "On the simulated 8 GB GPU: activations of `batch x 128 MiB`, then a 1 GiB "
            "convolution workspace. The workspace request is where memory runs out:"
        )
    )
    show_table(
        pd.DataFrame(
            [
                {
                    "batch": r.batch,
                    _("activations"): format_size(r.activations),
                    _("workspace"): format_size(r.workspace),
                    _("result"): _("fits")
                    if r.ok
                    else _("OOM at the activations")
                    if r.failed_at == "activations"
                    else _("OOM at the workspace"),
                    _("allocator message"): r.error,
                }
                for r in rows
            ]
        ),
        hide_index=True,
        border="horizontal",
    )


with layout.details:
    st.header(_("What the notes teach about memory, checked"), anchor=False)
    tab_rule, tab_nograd, tab_load, tab_cudnn = st.tabs(
        [
            _("Allocator rule (000:4-5)"),
            "no_grad (004:49)",
            "map_location (000:63)",
            _("cuDNN error (002:1360)"),
        ],
        key="memory.notes_tab",
        bind="query-params",
        on_change="rerun",  # lazy: only the open tab runs
    )
    with tab_rule:
        if tab_rule.open:
            _allocator_rule_tab()

    with tab_nograd:
        if tab_nograd.open:
            _no_grad_tab()

    with tab_load:
        if tab_load.open:
            _map_location_tab()

    with tab_cudnn:
        if tab_cudnn.open:
            _cudnn_error_tab()

    steps = logs.get(backend.key, [])
    show_code(
        snippet_for(steps, settings.device if has_gpu else "cuda:0")
        if steps
        else _(
            "# Allocate something or run a scenario: the snippet reproduces it with torch.cuda."
        ),
        title=N_("Reproduce these allocations with torch.cuda"),
    )
