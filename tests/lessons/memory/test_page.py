"""AppTest: every action and every guided scenario on the simulated GPU (CI has no GPU)."""

from __future__ import annotations

import pytest
import torch

from lessons.memory.allocator_sim import format_size
from lessons.memory.scenarios import SCENARIOS
from testing.apptest import switch_to
from tests.app.conftest import open_tab

SLUG = "memory"


def _ok(at):
    assert not at.exception, at.exception
    return at


def _success(at) -> str:
    return " ".join(s.value for s in at.success)


def _errors(at) -> str:
    return " ".join(e.value for e in at.error)


def _backend_radio(at):
    """The device radio: drawn only when the sidebar offers a CUDA device."""
    return next((r for r in at.radio if r.key == "memory.backend"), None)


@pytest.fixture
def arrival(open_page):
    """The page as a visitor first sees it."""
    at = open_page(SLUG)
    _ok(at)
    radio = _backend_radio(at)
    if radio is not None:  # a GPU here: the lesson below is about the simulator
        radio.set_value("simulated GPU").run()
    return _ok(at)


@pytest.fixture
def page(arrival):
    """A clean simulated GPU (80 GB): a new simulator drops the arrival scenario's tensors."""
    arrival.radio(key="memory.sim_total").set_value(80).run()
    _ok(arrival)
    assert not arrival.session_state["memory.sim"].sim.memory_reserved()
    return arrival


def test_smoke_labelled_simulated(page):
    assert page.title[0].value == "CUDA memory monitor"
    assert any("SIMULATED" in w.value for w in page.warning)
    assert page.get("plotly_chart")  # live chart, segment map, fragmentation


def _chart(at, index: int = 0) -> dict:
    import json

    return json.loads(at.get("plotly_chart")[index].proto.spec)


def test_arrives_on_the_first_scenario_with_a_scaled_chart(arrival):
    """The page opens on the first guided scenario, run, so it has something to show on
    arrival: the main figure (first chart) is scaled to the 2 MiB reserved, the 512 MiB context is
    a labelled band, and the scenario's steps are a table that fits."""
    at = arrival
    assert at.session_state["memory.scenario_run"].scenario.key == next(iter(SCENARIOS))
    assert "Ran '4 bytes reserve 2 MiB' (3 steps)" in _success(at)
    assert "got a 512 bytes block" in _success(at) and not _errors(at)
    spec = _chart(at, 0)  # the live chart: the first chart on the page
    layout = spec["layout"]
    assert layout["yaxis"]["title"]["text"].startswith("MiB")
    assert layout["yaxis"]["range"][1] < 4  # reserved is 2 MiB; the context does not set it
    assert any("outside PyTorch's cache: 512.00 MiB" in a["text"] for a in layout["annotations"])
    reserved = next(t for t in spec["data"] if t["name"].startswith("reserved"))
    assert reserved["y"][-1] == 2.0
    (table,) = [t.value for t in at.table if "lands in" in t.value.columns]
    assert list(table["step"]) == ["free all", "empty_cache()", "x = float32[1]"]
    assert len(table.columns) == 7
    assert "torch.empty((1,), dtype=torch.float32" in " ".join(c.value for c in at.code)


def test_one_simulated_notice_and_headings_in_order(arrival):
    """One notice says the GPU is simulated (two would take ~180 px). One h1, then h2s."""
    at = arrival
    notices = [w.value for w in at.warning] + [i.value for i in at.info]
    assert sum("simulated" in n.lower() for n in notices) == 1, notices
    assert len(at.title) == 1 and at.main.header and not at.main.subheader  # h3: sidebar only


def test_allocate_by_size_notes_numbers(page):
    page.number_input(key="memory.size").set_value(4.0)
    page.selectbox(key="memory.unit").select("B")
    page.button(key="memory.allocate").click().run()
    _ok(page)
    text = _success(page)
    assert "asked for 4 bytes, got a 512 bytes block" in text
    assert "new 2.00 MiB segment" in text


def test_allocate_by_shape_and_dtype(page):
    page.radio(key="memory.alloc_mode").set_value("shape + dtype").run()
    page.text_input(key="memory.shape").input("1024, 1024")
    page.selectbox(key="memory.dtype").select("float16")
    page.button(key="memory.allocate").click().run()
    _ok(page)
    assert "asked for 2.00 MiB" in _success(page)


def test_bad_shape_shows_error_and_page_keeps_working(page):
    page.radio(key="memory.alloc_mode").set_value("shape + dtype").run()
    page.text_input(key="memory.shape").input("ten, 3")
    page.button(key="memory.allocate").click().run()
    _ok(page)
    assert "shape must be comma-separated whole numbers" in _errors(page)


def test_too_large_request_is_refused(page):
    page.radio(key="memory.sim_total").set_value(8).run()
    page.number_input(key="memory.size").set_value(100.0)
    page.selectbox(key="memory.unit").select("GB")
    page.button(key="memory.allocate").click().run()
    _ok(page)
    assert "Refused: 100.00 GiB is more than" in _errors(page)


def _held(at) -> int:
    return len(at.multiselect(key="memory.free_select").options)


def test_negative_size_is_refused_not_replaced(page):
    """The field takes -5 and the page refuses it (with min_value=0 the browser would keep the
    old value for -5 and allocate that)."""
    size = page.number_input(key="memory.size")
    assert size.min is None or size.min < 0
    size.set_value(-5.0)
    page.selectbox(key="memory.unit").select("MB")
    page.button(key="memory.allocate").click().run()
    _ok(page)
    assert "size must be a positive number, got -5" in _errors(page)
    assert not _success(page) and _held(page) == 0


def test_cleared_size_is_refused(page):
    """A cleared size is refused, not replaced by the default (4 GiB with unit GB)."""
    page.selectbox(key="memory.unit").select("GB")
    page.number_input(key="memory.size").set_value(None)
    page.button(key="memory.allocate").click().run()
    _ok(page)
    assert "size is empty" in _errors(page)
    assert not _success(page) and _held(page) == 0


def test_shape_with_an_empty_piece_is_refused(page):
    page.radio(key="memory.alloc_mode").set_value("shape + dtype").run()
    page.text_input(key="memory.shape").input("1024,,")
    page.button(key="memory.allocate").click().run()
    _ok(page)
    assert "shape piece 2 of 2 is empty in '1024,,'" in _errors(page)
    assert _held(page) == 0


def test_huge_sizes_are_refused_in_readable_units(page):
    """1e30 GB is refused in two significant digits, 1e308 GB (beyond a float) without an
    OverflowError."""
    page.selectbox(key="memory.unit").select("GB")
    page.number_input(key="memory.size").set_value(1e30)
    page.button(key="memory.allocate").click().run()
    _ok(page)
    assert "Refused: 1.0e30 GiB is more than the whole device (80.00 GiB)" in _errors(page)
    page.number_input(key="memory.size").set_value(1e308)
    page.button(key="memory.allocate").click().run()
    _ok(page)
    assert "Refused: an unbounded size is more than the whole device" in _errors(page)


def test_only_the_latest_message_shows(page):
    """The message slot shows only the latest action: no old success (or a scenario's caught
    OOM) beside a new error."""
    page.number_input(key="memory.size").set_value(4.0)
    page.button(key="memory.allocate").click().run()
    assert "asked for 4 bytes" in _success(page)
    page.radio(key="memory.alloc_mode").set_value("shape + dtype").run()
    page.text_input(key="memory.shape").input("ten, 3")
    page.button(key="memory.allocate").click().run()
    _ok(page)
    assert "shape must be" in _errors(page) and not _success(page)
    page.selectbox(key="memory.scenario").select("fragmentation").run()
    page.button(key="memory.run_scenario").click().run()
    assert "Caught OutOfMemoryError" in _errors(page)
    page.text_input(key="memory.shape").input("1024, 1024")
    page.button(key="memory.allocate").click().run()
    _ok(page)
    assert "asked for 4.00 MiB" in _success(page) and not _errors(page)


def test_free_selected_free_all_empty_cache_reset_peak(page):
    page.number_input(key="memory.size").set_value(3.0)
    page.selectbox(key="memory.unit").select("MB")
    for _ in range(3):
        page.button(key="memory.allocate").click().run()
        _ok(page)
    select = page.multiselect(key="memory.free_select")
    assert len(select.options) == 3
    first = select.options[0]
    select.select(first)
    page.button(key="memory.free").click().run()
    _ok(page)
    assert "del t" in _success(page) and "not to the driver" in _success(page)
    assert len(page.multiselect(key="memory.free_select").options) == 2
    page.button(key="memory.free_all").click().run()
    _ok(page)
    assert "allocated -6.00 MiB" in _success(page)
    page.button(key="memory.empty_cache").click().run()
    _ok(page)
    assert "released 1 whole free segment(s), reserved -20.00 MiB" in _success(page)
    page.button(key="memory.reset_peak").click().run()
    _ok(page)
    assert "max allocated 9.00 MiB -> 0 bytes" in _success(page)
    code = " ".join(c.value for c in page.code)
    assert "torch.cuda.empty_cache()" in code and f"del {first.split(':')[0]}" in code


@pytest.mark.parametrize("key", list(SCENARIOS))
def test_every_scenario(page, key):
    page.selectbox(key="memory.scenario").select(key).run()
    page.button(key="memory.run_scenario").click().run()
    _ok(page)
    assert any("lands in" in t.value.columns for t in page.table), "the step table is shown"
    assert page.header[0].value == f"Guided scenario: {SCENARIOS[key].title}"
    code = " ".join(c.value for c in page.code)
    assert "torch.empty" in code
    if key == "fragmentation":
        assert "Caught OutOfMemoryError" in _errors(page)
        assert "set_per_process_memory_fraction" in code


def test_live_is_off_on_the_simulated_gpu(page):
    # The simulated GPU changes only when the session acts, so no timer reruns
    # the fragment by default (a class of 30 would cost 30 reruns a second for nothing).
    assert page.toggle(key="memory.live").value is False
    assert not [w.value for w in page.warning if "Session State" in w.value]


def test_live_fragment_runs_and_pauses(page):
    page.toggle(key="memory.live").set_value(True).run()
    before = len(page.session_state["memory.history"])
    page.slider(key="memory.interval").set_value(2.0).run()
    _ok(page)
    assert len(page.session_state["memory.history"]) > before  # the fragment ran once more
    page.toggle(key="memory.live").set_value(False).run()
    _ok(page)
    page.slider(key="memory.window").set_value(30).run()
    _ok(page)
    labels = [m.label for m in page.metric]
    assert "reserved" in labels and "not reserved by PyTorch" in labels


def test_switch_simulated_total(page):
    page.button(key="memory.allocate").click().run()
    page.radio(key="memory.sim_total").set_value(8).run()
    _ok(page)
    assert any("8 GB" in w.value for w in page.warning)
    # the old simulator's tensors are gone with it
    assert not page.multiselect(key="memory.free_select").options


def test_stats_table_toggle(page):
    page.button(key="memory.allocate").click().run()
    open_tab(page, "memory.allocator_tab", "memory_stats")
    page.checkbox(key="memory.stats_nonzero").uncheck().run()
    _ok(page)
    frames = [df.value for df in page.dataframe]
    assert any("allocated_bytes.all.current" in set(f.get("key", [])) for f in frames)


def _snippet(at) -> str:
    (code,) = [c.value for c in at.code if "def report(" in c.value]  # the allocator snippet
    return code


def _assert_snippet_reproduces_page(at) -> None:
    """Exec the page's snippet against a torch stand-in backed by a fresh simulator of the same
    size: it must run (no undefined names) and end with the page's own numbers."""
    import re

    from lessons.memory.backends import SimulatedGpu
    from tests.lessons.memory.test_gpu_memory import _fake_torch

    page_gpu = at.session_state["memory.sim"]
    printed: list[str] = []
    namespace = {
        "torch": _fake_torch(SimulatedGpu(page_gpu.total_gb).sim),
        "print": lambda *args: printed.append(" ".join(map(str, args))),
    }
    exec(_snippet(at).replace("import torch\n", "", 1), namespace)
    pattern = re.compile(r"allocated=\s*([\d,]+) reserved=\s*([\d,]+) segments=(\d+)")
    seen = [
        tuple(int(g.replace(",", "")) for g in m.groups())
        for line in printed
        if (m := pattern.search(line))
    ]
    sim = page_gpu.sim
    assert seen and seen[-1] == (sim.memory_allocated(), sim.memory_reserved(), sim.segment_count)


def test_snippet_follows_a_scenario_and_later_actions(page):
    """A scenario starts clean, so the snippet restarts from its steps; freeing one of the
    scenario's tensors afterwards deletes that scenario variable, not an undefined name."""
    page.number_input(key="memory.size").set_value(4.0)
    page.selectbox(key="memory.unit").select("B")
    page.button(key="memory.allocate").click().run()
    page.selectbox(key="memory.scenario").select("reuse").run()
    page.button(key="memory.run_scenario").click().run()
    _ok(page)
    select = page.multiselect(key="memory.free_select")
    assert len(select.options) == 4  # a, b, c, d of the scenario; the earlier t1 was freed
    select.select(select.options[1])
    page.button(key="memory.free").click().run()
    _ok(page)
    page.button(key="memory.allocate").click().run()
    _ok(page)
    _assert_snippet_reproduces_page(page)


def test_snippet_restarts_with_a_new_simulated_gpu(page):
    page.number_input(key="memory.size").set_value(3.0)
    page.selectbox(key="memory.unit").select("MB")
    page.button(key="memory.allocate").click().run()
    page.radio(key="memory.sim_total").set_value(80).run()
    page.number_input(key="memory.size").set_value(4.0)
    page.selectbox(key="memory.unit").select("B")
    page.button(key="memory.allocate").click().run()
    _ok(page)
    _assert_snippet_reproduces_page(page)


def _nodes(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _nodes(child)


def test_live_metrics_have_room_for_their_values(page):
    """Five metrics side by side cut values such as '612.00 MiB' to '612.00 ...' at a common
    browser width (the unit is lost): at most three metrics share a row."""
    rows = []
    for node in _nodes(page._tree):
        columns = [
            c for c in getattr(node, "children", {}).values() if type(c).__name__ == "Column"
        ]
        if any(getattr(n, "type", "") == "metric" for c in columns for n in _nodes(c)):
            rows.append(len(columns))
    assert rows and max(rows) <= 3, rows
    labels = [m.label for m in page.metric]
    assert labels == [
        "allocated",
        "reserved",
        "device used",
        "not reserved by PyTorch",
        "segments",
    ]


def test_input_error_does_not_outlive_other_actions(page):
    """A bad shape's error belongs to that allocation attempt, not to every later action."""
    page.radio(key="memory.alloc_mode").set_value("shape + dtype").run()
    page.text_input(key="memory.shape").input("ten, 3")
    page.button(key="memory.allocate").click().run()
    assert "shape must be" in _errors(page)
    page.button(key="memory.empty_cache").click().run()
    _ok(page)
    assert "empty_cache(): released" in _success(page)
    assert "shape must be" not in _errors(page)
    page.text_input(key="memory.shape").input("ten, 3")
    page.button(key="memory.allocate").click().run()
    page.button(key="memory.run_scenario").click().run()
    _ok(page)
    assert "shape must be" not in _errors(page)


# ------------------------------------------------------------------ the notes' lessons
def _texts(at) -> str:
    return "\n".join(t.value for t in at.text)


def _frame(at, column: str):
    """The one dataframe or table that has ``column`` (AppTest does not expose their keys)."""
    frames = [df.value for df in [*at.dataframe, *at.table] if column in df.value.columns]
    assert len(frames) == 1, f"{len(frames)} dataframes with a {column!r} column"
    return frames[0]


def test_notes_callouts_and_claims_shown(page):
    texts = _texts(page)
    assert "2,096,640 B of the 2 MiB segment are free (2 MiB minus the 512 B block)" in texts
    assert "went to the large pool" in texts and "kSmallSize = 1,048,576 B" in texts
    assert "0 bytes was released" in texts  # the OOM retry callout
    quotes = [h.proto.body for h in page.html if 'class="notes-quote"' in h.proto.body]
    assert any('lang="zh-CN"' in q and "剩余的 1.5 MB" in q for q in quotes), quotes
    claims = _frame(page, "holds")
    assert list(claims["holds"]) == ["yes", "yes", "yes", "no", "yes", "no", "no"]
    captions = " ".join(c.value for c in page.caption)
    assert "notes 000:4" in captions
    # the other notes tabs run when opened (lazy tabs)
    for tab, refs in (
        ("no_grad (004:49)", ["notes 004:49-53"]),
        ("map_location (000:63)", ["notes 000:63", "notes 000:76"]),
    ):
        open_tab(page, "memory.notes_tab", tab)
        captions = " ".join(c.value for c in page.caption)
        assert all(ref in captions for ref in refs), (tab, captions)
    open_tab(page, "memory.notes_tab", "cuDNN error (002:1360)")
    assert "Unable to find a valid cuDNN algorithm" in "\n".join(c.value for c in page.code)


def test_reuse_scenario_shows_where_blocks_land(page):
    page.selectbox(key="memory.scenario").select("reuse").run()
    page.button(key="memory.run_scenario").click().run()
    _ok(page)
    assert "A variation of the notes 000:5 example" in " ".join(c.value for c in page.caption)
    frame = _frame(page, "lands in")
    assert list(frame["lands in"])[-4:] == [
        "S1: small pool, 2.00 MiB segment",
        "S2: large pool, 20.00 MiB segment",
        "S1: small pool, 2.00 MiB segment",
        "S1: small pool, 2.00 MiB segment",
    ]


def test_no_grad_demo_follows_its_controls(page):
    assert not [s for s in page.slider if s.key == "memory.nograd_batch"]  # a closed lazy tab
    open_tab(page, "memory.notes_tab", "no_grad (004:49)")
    assert page.slider(key="memory.nograd_batch").value == 8
    page.slider(key="memory.nograd_batch").set_value(4).run()
    page.select_slider(key="memory.nograd_size").set_value(16).run()
    page.slider(key="memory.nograd_batches").set_value(2).run()
    _ok(page)
    frame = _frame(page, "saved for backward per batch")
    per_batch = 4 * 48 * 16 * 16 * 4 + 4 * 32 * 4
    assert list(frame["saved for backward per batch"]) == [
        format_size(per_batch),
        "0 bytes",
        "0 bytes",
    ]
    assert list(frame["still held after 2 batch(es)"])[0] == format_size(2 * per_batch)
    assert list(frame["output.requires_grad"]) == [True, False, False]


def test_map_location_demo_follows_world_size(page):
    open_tab(page, "memory.notes_tab", "map_location (000:63)")
    page.slider(key="memory.load_world").set_value(2).run()
    _ok(page)
    workers = _frame(page, "no map_location")
    assert list(workers["no map_location"]) == ["cuda:0", "cuda:0"]
    assert list(workers["map_location=f'cuda:{rank}'"]) == ["cuda:0", "cuda:1"]
    calls = _frame(page, "lands on")
    assert len(calls) == 5
    if not torch.cuda.is_available():  # no cuda:0 to restore to, and no cuda:1
        assert list(calls["lands on"]) == ["raises", "cpu", "cpu", "cpu", "raises"]
    open_tab(page, "memory.notes_tab", "cuDNN error (002:1360)")
    cudnn = _frame(page, "allocator message")
    assert list(cudnn["result"]) == ["OOM at the workspace", "fits", "fits"]


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_real_gpu_viewers_share_one_sampler(open_page):
    # On a real GPU every viewer's chart draws from one process-wide sampler, so two
    # sessions refreshing cost one device read per tick, not one each.
    from lessons.memory import live_sampler

    created: list[live_sampler.LiveSampler] = []
    real_init = live_sampler.LiveSampler.__init__

    def init(self, *args, **kwargs):
        created.append(self)
        real_init(self, *args, **kwargs)

    live_sampler.LiveSampler.__init__ = init
    try:
        sessions = []
        for _ in range(2):
            at = open_page("memory")
            at.session_state["sidebar.device"] = "cuda:0"
            at.run()
            if at.radio(key="memory.backend").value != "cuda:0":
                at.radio(key="memory.backend").set_value("cuda:0").run()
            assert not at.exception, at.exception
            sessions.append(at)
        sessions[0].toggle(key="memory.live").set_value(True).run()
        assert len(created) == 1, "each session built its own sampler"
        assert created[0].reads >= 1 and created[0].error is None
    finally:
        live_sampler.LiveSampler.__init__ = real_init
        for sampler in created:
            sampler.close()


# ------------------------------------------------------------------ Lesson links
def _open_link(params: dict[str, str]):
    """The page opened cold from a link, as a student clicking it would."""
    from tests.app.conftest import open_cold

    return _ok(open_cold(SLUG, params))


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _fragmentation_text(at) -> str:
    (text,) = [m.value for m in at.markdown if m.value.startswith("Reserved but unallocated")]
    return text


FRAGMENTATION_LINK = {
    "memory.sim_total": "8 GB",
    "memory.scenario": SCENARIOS["fragmentation"].name,
    "memory.allocator_tab": "Fragmentation",
    "memory.alloc_mode": "shape + dtype",
    "memory.shape": "3, 224, 224",
    "memory.dtype": "float16",
    "memory.notes_tab": "no_grad (004:49)",
    "memory.nograd_batch": "4",
}


def test_a_cold_link_computes_what_the_same_controls_compute(arrival):
    """A link sets the simulated GPU, runs its scenario on arrival (not the first one), opens
    its tabs and fills the allocation form: the allocator's numbers equal those of a session
    that set the same controls by hand and pressed the buttons."""
    by_hand = arrival
    by_hand.radio(key="memory.sim_total").set_value(8).run()
    by_hand.selectbox(key="memory.scenario").select("fragmentation").run()
    by_hand.button(key="memory.run_scenario").click().run()
    open_tab(by_hand, "memory.allocator_tab", "Fragmentation")
    by_hand.radio(key="memory.alloc_mode").set_value("shape + dtype").run()
    by_hand.text_input(key="memory.shape").input("3, 224, 224")
    by_hand.selectbox(key="memory.dtype").select("float16")
    open_tab(by_hand, "memory.notes_tab", "no_grad (004:49)")
    by_hand.slider(key="memory.nograd_batch").set_value(4).run()
    _ok(by_hand)

    linked = _open_link(FRAGMENTATION_LINK)
    assert not linked.toast, [t.value for t in linked.toast]
    assert linked.session_state["memory.scenario_run"].scenario.key == "fragmentation"
    assert linked.header[0].value == f"Guided scenario: {SCENARIOS['fragmentation'].title}"
    assert "Caught OutOfMemoryError at 'big'" in _errors(linked)
    assert _metrics(linked) == _metrics(by_hand)
    assert _metrics(linked)["reserved"] == "44.00 MiB"  # 8 GB simulator, after the retry
    assert _frame(linked, "lands in").equals(_frame(by_hand, "lands in"))
    assert _fragmentation_text(linked) == _fragmentation_text(by_hand)
    assert "(fragmentation 50%)" in _fragmentation_text(linked)
    column = "saved for backward per batch"
    assert _frame(linked, column).equals(_frame(by_hand, column))
    assert list(_frame(linked, column)[column])[0] == format_size(4 * 48 * 32 * 32 * 4 + 4 * 32 * 4)
    for at in (linked, by_hand):  # the form the link filled allocates what the hand one does
        at.button(key="memory.allocate").click().run()
        _ok(at)
        assert "asked for 294.00 KiB" in _success(at)  # 3 * 224 * 224 * 2 B (float16)
    assert _metrics(linked) == _metrics(by_hand)


#: (link, the text the page then shows that makes the lesson's point): Home's lessons.
LESSONS = [
    ({"memory.allocator_tab": "memory_stats"}, {"allocated": "512 bytes", "reserved": "2.00 MiB"}),
    (
        {
            "memory.scenario": SCENARIOS["fragmentation"].name,
            "memory.allocator_tab": "Fragmentation",
        },
        {"allocated": "36.00 MiB", "reserved": "44.00 MiB"},
    ),
    (
        {"memory.scenario": SCENARIOS["partial"].name, "memory.allocator_tab": "Fragmentation"},
        {"allocated": "512 bytes", "reserved": "2.00 MiB", "segments": "1"},
    ),
]


@pytest.mark.parametrize(("link", "shown"), LESSONS, ids=["tiny", "fragmentation", "partial"])
def test_lesson_links_show_their_point(link, shown):
    at = _open_link(link)
    assert not at.toast, [t.value for t in at.toast]
    metrics = _metrics(at)
    assert {label: metrics[label] for label in shown} == shown
    if link.get("memory.allocator_tab") == "memory_stats":  # the 4 bytes asked, 512 B given
        stats = _frame(at, "key").set_index("key")["value"]
        assert stats["requested_bytes.all.current"] == 4
        assert stats["allocated_bytes.all.current"] == 512
        assert stats["reserved_bytes.all.current"] == 2 * 1024 * 1024
    if "fragmentation" in link.get("memory.scenario", "").lower():
        assert "Caught OutOfMemoryError at 'big' (step 19)" in _errors(at)
        assert "largest free block is **4.00 MiB**" in _fragmentation_text(at)
    if link.get("memory.scenario") == SCENARIOS["partial"].name:  # b pins its 2 MiB segment
        reserved = list(_frame(at, "lands in")["reserved"])
        assert reserved[-2:] == ["22.00 MiB", "2.00 MiB"]


def _open_bound_tab(at, key: str, label: str):
    """A click on a tab bound to the URL: the browser updates the URL with the widget. AppTest
    has no browser: it sends back the URL the server last wrote (which, after a page switch,
    holds the restored tab), and a link's value wins over a session-state set; so set both."""
    at.query_params[key] = label
    return open_tab(at, key, label)


def test_controls_keep_their_values_across_a_page_switch(page):
    """persist_state keeps every section's controls across a page switch, lazy tabs included."""
    at = page
    at.radio(key="memory.sim_total").set_value(8).run()
    at.selectbox(key="memory.scenario").select("partial").run()
    at.radio(key="memory.alloc_mode").set_value("shape + dtype").run()
    at.text_input(key="memory.shape").input("2, 3").run()
    at.selectbox(key="memory.dtype").select("float16").run()
    at.slider(key="memory.interval").set_value(2.0).run()
    at.slider(key="memory.window").set_value(30).run()
    open_tab(at, "memory.allocator_tab", "memory_stats")
    at.checkbox(key="memory.stats_nonzero").uncheck().run()
    open_tab(at, "memory.notes_tab", "map_location (000:63)")
    at.slider(key="memory.load_world").set_value(2).run()
    open_tab(at, "memory.notes_tab", "no_grad (004:49)")
    at.slider(key="memory.nograd_batch").set_value(4).run()
    at.select_slider(key="memory.nograd_size").set_value(16).run()
    at.slider(key="memory.nograd_batches").set_value(2).run()
    _ok(at)

    switch_to(at, "home").run()
    _ok(at)
    switch_to(at, SLUG).run()
    _ok(at)
    assert at.radio(key="memory.sim_total").value == 8
    assert at.selectbox(key="memory.scenario").value == "partial"
    assert at.radio(key="memory.alloc_mode").value == "shape + dtype"
    assert at.text_input(key="memory.shape").value == "2, 3"
    assert at.selectbox(key="memory.dtype").value == "float16"
    assert at.slider(key="memory.interval").value == 2.0
    assert at.slider(key="memory.window").value == 30
    _open_bound_tab(at, "memory.allocator_tab", "memory_stats")
    assert at.checkbox(key="memory.stats_nonzero").value is False
    _open_bound_tab(at, "memory.notes_tab", "no_grad (004:49)")
    assert at.slider(key="memory.nograd_batch").value == 4
    assert at.select_slider(key="memory.nograd_size").value == 16
    assert at.slider(key="memory.nograd_batches").value == 2
    _open_bound_tab(at, "memory.notes_tab", "map_location (000:63)")
    assert at.slider(key="memory.load_world").value == 2
    assert not [w.value for w in at.warning if "Session State" in w.value]


def test_a_link_with_an_unusable_shape_names_it():
    at = _open_link({"memory.alloc_mode": "shape + dtype", "memory.shape": "ten, 3"})
    (notice,) = [t.value for t in at.toast]
    assert "`memory.shape`" in notice
    assert at.radio(key="memory.alloc_mode").value == "shape + dtype"


@pytest.mark.parametrize("shape", ["ten, 3", "7" * 10_000], ids=["unparsable", "too long"])
def test_a_link_with_an_unusable_shape_opens_at_the_default_shape(shape):
    at = _open_link({"memory.alloc_mode": "shape + dtype", "memory.shape": shape})
    assert at.text_input(key="memory.shape").value == "1024, 1024"


def test_every_scenario_link_is_short(page):
    """Every bound control away from its default, with the longest shape the field takes, for
    every scenario: the link stays under the 2,000 characters a chat app or browser keeps."""
    from urllib.parse import urlencode

    page.radio(key="memory.alloc_mode").set_value("shape + dtype").run()
    max_chars = page.text_input(key="memory.shape").proto.max_chars
    assert 0 < max_chars <= 500
    longest = {
        "memory.sim_total": "80 GB",
        "memory.alloc_mode": "shape + dtype",
        "memory.size": "1e+300",
        "memory.unit": "GB",
        "memory.shape": "9" * max_chars,
        "memory.dtype": "bfloat16",
        "memory.live": "true",
        "memory.interval": "4.5",
        "memory.window": "590",
        "memory.allocator_tab": "Processes (NVML)",
        "memory.stats_nonzero": "false",
        "memory.notes_tab": "cuDNN error (002:1360)",
        "memory.nograd_batch": "63",
        "memory.nograd_size": "128",
        "memory.nograd_batches": "7",
        "memory.load_world": "8",
        "sidebar.seed": "4294967295",
        "sidebar.cudnn_deterministic": "true",
    }
    for scenario in SCENARIOS.values():
        params = {**longest, "memory.scenario": scenario.name}
        link = f"http://localhost:8501/{SLUG}?{urlencode(params)}"
        assert len(link) < 2000, (scenario.key, len(link))


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize(("policy", "device"), [("shared", "cpu"), ("exclusive", "cuda:0")])
def test_no_grad_demo_runs_on_a_shared_gpu_only_when_exclusive(open_page, monkeypatch, policy,
                                                               device):
    # Its CUDA measurement resets the device's peak statistics for the whole process.
    from lessons.memory import eval_memory

    monkeypatch.setenv("TP_GPU_MEMORY", policy)
    devices: list[str] = []
    real = eval_memory.measure_eval_memory
    monkeypatch.setattr(eval_memory, "measure_eval_memory",
                        lambda *args: devices.append(args[3]) or real(*args))
    at = open_page("memory")
    at.session_state["sidebar.device"] = "cuda:0"
    at.run()
    open_tab(at, "memory.notes_tab", "no_grad (004:49)")
    _ok(at)
    assert devices and set(devices) == {device}
