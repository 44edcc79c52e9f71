"""AppTest for the Flow hole-filling page: default view, controls, every bad input, lesson links."""

from __future__ import annotations

import html
import io
import re

import cv2
import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from core.figure_style import decode_data_uri
from lessons.flow.fill import (
    METHOD_CV2,
    NOTES_NUMPY_MAX_HOLES,
    NOTES_NUMPY_METHOD,
    NOTES_TORCH_METHOD,
    FlowSpec,
    build_flow,
    run_method,
)
from lessons.flow.flow_files import save_flo
from lessons.flow.notes_checks import NOTES_CLAIM_ZH
from lessons.flow.sources import synthetic_flow
from testing.apptest import switch_to
from tests.app.conftest import APP, FIRST_RUN_TIMEOUT, RUN_TIMEOUT, open_tab

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(autouse=True)
def _budget_beyond_the_machine(monkeypatch):
    """These tests are about the lesson; how busy the machine is must not decide whether the
    comparison waits for a click (the page's measured times set its estimates). The click is
    tested in tests/app/test_heavy_links_saliency_flow.py."""
    monkeypatch.setenv("TP_HEAVY_BUDGET_S", "600")


def _errors(at) -> str:
    return " ".join(e.value for e in at.error)


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return buf.getvalue()


def _png(h: int, w: int) -> bytes:
    img = (np.random.default_rng(0).random((h, w, 3)) * 255).astype(np.uint8)
    ok, enc = cv2.imencode(".png", img)
    assert ok
    return enc.tobytes()


def _block_keys(at) -> set[str]:
    """Keys of the keyed containers on the page (Streamlit ends a keyed block's id with its key,
    "$$ID-<hash>-<key>")."""
    keys, todo = set(), [at.main]
    while todo:
        node = todo.pop()
        block_id = getattr(getattr(node, "proto", None), "id", "") or ""
        if block_id.startswith("$$ID-"):
            keys.add(block_id.split("-", 2)[2])
        todo.extend(getattr(node, "children", {}).values())
    return keys


TABS = "flow.details_tab"
WINDOWS, ACCURACY, NUMPY = "Window sizes", "Accuracy and speed", "The notes' NumPy loop"


def _compare(at):
    """Open the lazy 'Accuracy and speed' tab: the other methods run and their table shows."""
    return open_tab(at, TABS, ACCURACY)


@pytest.fixture
def flow_page(open_page):
    at = open_page("flow")
    assert not at.exception, at.exception
    return at


def test_default_view(flow_page):
    at = flow_page
    assert at.title[0].value == "Flow hole filling"
    assert not at.error
    text = " ".join(m.value for m in at.markdown)
    assert "`33x33`" in text and "stayed NaN" in text
    # on arrival: the picture and the window sizes; the other methods wait in their lazy tab
    assert at.session_state[TABS] == WINDOWS and not at.dataframe
    _compare(at)
    text = " ".join(m.value for m in at.markdown)
    assert "faster" in text  # timing explanation tied to live numbers
    assert len(at.dataframe) == 1
    table = at.dataframe[0].value
    assert len(table) == 6
    diffs = table["max |diff| vs notes"].iloc[:2]
    assert (diffs <= 1e-5).all()
    assert any("gradual_mean_fill" in c.value for c in at.code)
    # the notes' NumPy loop is offered, not run by default (it is a per-pixel Python loop)
    assert NOTES_NUMPY_METHOD not in list(table["method"])
    # the notes' "3 ms" beside the measured time of the vectorised version, with the device
    texts = " ".join(t.value for t in at.text)
    quotes = " ".join(html.unescape(h.value) for h in at.html if 'lang="zh-CN"' in h.value)
    assert NOTES_CLAIM_ZH in quotes
    texts += " " + " ".join(html.unescape(h.value) for h in at.html)  # quoted notes code too
    assert "flow.three_ms" in _block_keys(at)
    measured = table.loc[table["method"] == NOTES_TORCH_METHOD, "time (ms)"].iloc[0]
    metric = next(m for m in at.metric if m.label == "avg_pool2d version, this flow")
    assert abs(float(metric.value.removesuffix(" ms")) - measured) <= 0.051
    assert f"took {metric.value} for this 240x320 flow on CPU (" in texts
    if not torch.cuda.is_available():
        assert "no GPU on this machine" in texts
    # the callouts: the notes' window check and the 3 ms claim, each from a live run
    keys = _block_keys(at)
    assert {"notes_callout-flow_max_window_not_aligned", "notes_callout-flow_three_ms"} <= keys
    assert "if window_sizes[-1] != max_window_size:" in texts
    assert "still only warns ('max_window_size 32 is not aligned with max filter size 17')" \
        in texts
    assert "neither the frame size nor the device" in texts
    # the title's '2**k + 1' is shown as written, not turned into bold by st.markdown
    assert any(r"not 2\*\*k + 1" in m.value for m in at.markdown)
    open_tab(at, TABS, NUMPY)
    assert any("Run the notes' original NumPy loop" in i.value for i in at.info)


def test_window_controls(flow_page):
    at = flow_page
    at.toggle(key="flow.notes").set_value(False).run()
    at.select_slider(key="flow.max_window").set_value(3).run()
    assert not at.exception
    assert "`3x3`" in " ".join(m.value for m in at.markdown)
    at.toggle(key="flow.per_scale").set_value(True)
    at.select_slider(key="flow.max_window").set_value(129).run()
    assert not at.exception and not at.error
    windows = [t.label for t in at.tabs if re.fullmatch(r"\d+x\d+", t.label)]
    assert len(windows) == 7  # one tab per window 3 ... 129


def test_large_holes_report_unfilled(flow_page):
    at = flow_page
    at.toggle(key="flow.notes").set_value(False).run()
    at.selectbox(key="flow.mask").select("border").run()
    at.slider(key="flow.hole_size").set_value(60)
    at.select_slider(key="flow.max_window").set_value(9).run()
    assert not at.exception
    assert any("still NaN" in w.value for w in at.warning)


def test_real_stereo_with_fb_mask(flow_page):
    at = flow_page
    at.toggle(key="flow.notes").set_value(False).run()
    at.selectbox(key="flow.source").select("stereo").run()
    assert "Forward-backward check" in at.selectbox(key="flow.mask").options  # images only
    at.selectbox(key="flow.mask").select("fb").run()
    assert not at.exception and not at.error
    _compare(at)
    assert "pre-mask flow" in " ".join(m.value for m in at.markdown)


def test_fb_mask_not_offered_for_synthetic(flow_page):
    assert "Forward-backward check" not in flow_page.selectbox(key="flow.mask").options


def test_upload_good_flo(flow_page):
    at = flow_page
    at.toggle(key="flow.notes").set_value(False).run()
    at.selectbox(key="flow.source").select("upload_flow").run()
    flow = synthetic_flow("vortex", 40, 60)[0]
    at.file_uploader(key="flow.file").upload("good.flo", save_flo(flow)).run()
    assert not at.exception and not at.error
    assert len(_compare(at).dataframe) == 1


def test_upload_flow_with_own_holes(flow_page):
    at = flow_page
    at.toggle(key="flow.notes").set_value(False).run()
    at.selectbox(key="flow.source").select("upload_flow").run()
    flow = synthetic_flow("zoom", 30, 40)[0]
    flow[5:9, 5:12] = np.nan
    at.file_uploader(key="flow.file").upload("holes.npy", _npy(flow)).run()
    assert not at.exception and not at.error
    _compare(at)
    assert any("nothing to compare" in i.value for i in at.info)


@pytest.mark.parametrize(
    ("name", "payload", "expected"),
    [
        ("bad_magic.flo", b"XXXX" + save_flo(np.zeros((4, 4, 2), np.float32))[4:],
         "magic number"),
        ("short.flo", save_flo(np.zeros((8, 8, 2), np.float32))[:-20], "truncated"),
        ("objects.npy", _npy(np.array([{"u": 1}, None], dtype=object)), "object dtype"),
        ("wrong.npy", _npy(np.zeros((2, 16, 16), np.float32)), "shape (H, W, 2)"),
        ("allnan.npy", _npy(np.full((16, 16, 2), np.nan, np.float32)), "every pixel is NaN"),
    ],
)
def test_bad_flow_files(flow_page, name, payload, expected):
    at = flow_page
    at.selectbox(key="flow.source").select("upload_flow").run()
    at.file_uploader(key="flow.file").upload(name, payload).run()
    assert not at.exception
    assert expected in _errors(at), _errors(at)


def test_bad_image_pairs(flow_page):
    at = flow_page
    at.selectbox(key="flow.source").select("upload_pair").run()
    at.file_uploader(key="flow.image1").upload("a.png", _png(40, 50))
    at.file_uploader(key="flow.image2").upload("b.png", _png(40, 60)).run()
    assert not at.exception
    assert "same size" in _errors(at)
    at.file_uploader(key="flow.image2").upload("big.png", _png(8, 1100)).run()
    assert not at.exception
    assert "size cap" in _errors(at)


def _count_runs(monkeypatch) -> list[tuple[str, int]]:
    """Record every real fill (lessons.flow.fill.run_method) the page makes:
    (method, max_window)."""
    import lessons.flow.fill as ff

    calls: list[tuple[str, int]] = []
    real = ff.run_method

    def counting(case, name, **kwargs):
        calls.append((name, kwargs.get("max_window")))
        return real(case, name, **kwargs)

    monkeypatch.setattr(ff, "run_method", counting)
    return calls


def test_display_only_widgets_do_not_refill(flow_page, monkeypatch):
    # Picking which EPE map to show must not rerun any method (the notes' avg_pool2d
    # reference takes seconds on a small CPU); the page reuses the cached results.
    at = _compare(flow_page)
    calls = _count_runs(monkeypatch)
    at.select_slider(key="flow.max_window").set_value(9).run()
    # only the methods that depend on max_window are filled again
    assert sorted(calls) == sorted([("gradual mean (cv2 backend)", 9),
                                    ("gradual mean (torch backend)", 9),
                                    (NOTES_TORCH_METHOD, 9)])
    calls.clear()
    at.selectbox(key="flow.epe_method").select_index(3).run()
    assert not at.exception and calls == []
    at.select_slider(key="flow.max_window").set_value(17).run()
    assert {w for _, w in calls} == {17} and len(calls) == 3


def test_second_session_reuses_the_cached_fills(open_page, monkeypatch):
    # Five students opening the same view must not each fill it again: the cases and every
    # method's result are cached on the inputs, shared by all sessions, and the page says the
    # timings came from the cache.
    first = _compare(open_page("flow"))
    assert not first.exception and not first.error
    timed_first = list(first.dataframe[0].value["timed"])
    # the main fill was made on arrival (the run before the tab opened), the others just now
    assert timed_first[0] == "cache, <1 min ago" and set(timed_first[1:]) == {"this run"}
    calls = _count_runs(monkeypatch)
    second = _compare(open_page("flow"))
    assert not second.exception and not second.error
    assert calls == []
    table = second.dataframe[0].value
    assert all(t.startswith("cache") for t in table["timed"])
    assert list(table["time (ms)"]) == list(first.dataframe[0].value["time (ms)"])
    text = " ".join(m.value for m in second.markdown)
    assert "timings come from the cache" in text and "(from the cache)" in text


def test_all_nan_upload_gets_a_file_hint(flow_page):
    # An all-NaN file used to get "lower the hole fraction", a setting that cannot help.
    at = flow_page
    at.selectbox(key="flow.source").select("upload_flow").run()
    at.file_uploader(key="flow.file").upload(
        "allnan.npy", _npy(np.full((16, 16, 2), np.nan, np.float32))).run()
    assert not at.exception
    errors = _errors(at)
    assert "no valid flow" in errors and "finite values" in errors, errors
    assert "hole fraction" not in errors, errors


def test_notes_reference_off_by_default_above_240x320(flow_page, monkeypatch):
    # 720x1280 with the reference on froze the page for 37 s: above 240x320 it starts off,
    # and the page says how long it would take before anyone runs it.
    at = _compare(flow_page)
    calls = _count_runs(monkeypatch)
    assert at.toggle(key="flow.notes").value is True  # small default flow: on
    at.selectbox(key="flow.size").select("480x640").run()
    assert not at.exception and not at.error
    assert at.toggle(key="flow.notes").value is False
    assert NOTES_TORCH_METHOD not in [name for name, _ in calls]
    assert NOTES_TORCH_METHOD not in list(at.dataframe[0].value["method"])
    text = " ".join(m.value for m in at.markdown)
    expected = r"Notes' version: about \*\*[0-9.]+ (s|ms)\*\* on `cpu` at 480x640"
    assert re.search(expected, text), text
    # switched on by hand it runs, with a status that names the expected time
    at.toggle(key="flow.notes").set_value(True)
    at.select_slider(key="flow.max_window").set_value(5).run()
    assert not at.exception and not at.error
    assert NOTES_TORCH_METHOD in list(at.dataframe[0].value["method"])
    # back at the small size the default is on again
    at.selectbox(key="flow.size").select("240x320").run()
    assert at.toggle(key="flow.notes").value is True


def _main_figure(at) -> dict:
    import json

    chart = next(c for c in at.get("plotly_chart") if "flow.main_figure" in c.proto.id)
    return json.loads(chart.proto.spec)


def test_mask_panel_is_visible_on_a_white_page(flow_page):
    # A mask drawn white would vanish on the white page (the border band most): the mask panel
    # draws valid flow pale blue and holes dark, so no part of it is page-white.
    at = flow_page
    at.toggle(key="flow.notes").set_value(False)
    at.selectbox(key="flow.mask").select("border").run()
    assert not at.exception and not at.error
    fig = _main_figure(at)
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert titles[:3] == ["Flow with holes (black)", "Holes (dark)", "Filled: gradual mean"]
    # panels are sent as lossless PNG data URIs (go.Image source), decoded back to pixels here
    assert "z" not in fig["data"][1]
    mask_img = decode_data_uri(fig["data"][1]["source"])
    assert mask_img.shape[2] == 3
    colours = {tuple(int(c) for c in px) for px in mask_img.reshape(-1, 3)}
    assert (255, 255, 255) not in colours  # nothing in the panel is page-white
    assert len(colours) == 2  # holes and valid flow, both visible
    assert at.get("plotly_chart")[0].proto.id.endswith("flow.main_figure")


def test_large_maps_are_sent_downsampled(flow_page):
    # A 720x1280 heat map is ~12 MB of plotly JSON per chart and rerun: the page sends the
    # scale-count and EPE maps at most HEAT_MAX_SIDE pixels a side.
    import json

    at = _compare(flow_page)
    at.selectbox(key="flow.size").select("720x1280").run()
    assert not at.exception and not at.error
    # the notes' reference (~20 s here at this size) is off by default, not left on
    assert at.toggle(key="flow.notes").value is False
    assert NOTES_TORCH_METHOD not in list(at.dataframe[0].value["method"])
    heat = []
    for tab in (ACCURACY, WINDOWS):  # the EPE map, then the scale-count map
        open_tab(at, TABS, tab)
        for chart in at.get("plotly_chart"):
            fig = json.loads(chart.proto.spec)
            for trace in fig["data"]:
                if trace.get("type") == "heatmap":
                    z = trace["z"]  # plotly >= 6 sends a typed array {"bdata", "shape": "H, W"}
                    shape = (tuple(int(v) for v in z["shape"].split(",")) if isinstance(z, dict)
                             else (len(z), len(z[0])))
                    heat.append(shape)
    assert len(heat) == 2, heat
    assert all(max(shape) <= 640 for shape in heat), heat
    assert any("every 2nd pixel" in c.value for c in at.caption)


def test_notes_numpy_loop_in_the_comparison(flow_page, monkeypatch):
    import lessons.flow.fill as ff

    seen = {}
    real = ff.run_method

    def spy(case, name, **kwargs):
        seen[name] = kwargs
        return real(case, name, **kwargs)

    monkeypatch.setattr(ff, "run_method", spy)
    at = open_tab(flow_page, TABS, NUMPY)
    at.slider(key="flow.fraction").set_value(0.05)
    at.toggle(key="flow.notes_numpy").set_value(True).run()
    assert not at.exception and not at.error
    assert callable(seen[NOTES_NUMPY_METHOD]["progress"])  # the loop shows its progress
    text = " ".join(m.value for m in at.markdown)
    code = next(c.value for c in at.code if "notes_gradual_mean_numpy(flow, 32)" in c.value)
    table = _compare(at).dataframe[0].value  # the switch holds while its tab is closed
    assert len(table) == 7
    rows = table.set_index("method")
    numpy_epe = rows.loc[NOTES_NUMPY_METHOD, "mean EPE on holes (px)"]
    pool_epe = rows.loc[NOTES_TORCH_METHOD, "mean EPE on holes (px)"]
    assert numpy_epe > 3 * pool_epe, (numpy_epe, pool_epe)  # off-centre windows, zero border
    assert rows.loc[NOTES_NUMPY_METHOD, "device"] == "cpu"
    assert rows.loc[NOTES_NUMPY_METHOD, "time (ms)"] > 0
    assert f"**{numpy_epe:.3f} px**, against **{pool_epe:.3f} px**" in text
    assert f"**{numpy_epe / pool_epe:.1f}x** the error" in text
    assert "windows 32, 16, 8, 4, 2" in text
    # the snippet shown for it runs as-is and prints the same two errors
    printed: list[str] = []
    exec(compile(code, "<snippet>", "exec"),
         {"print": lambda *a, **k: printed.append(" ".join(map(str, a)))})
    assert f"notes' loop: mean EPE on the holes {numpy_epe:.3f} px" in printed
    assert f"avg_pool2d: mean EPE on the holes {pool_epe:.3f} px" in printed


def test_notes_numpy_loop_is_bounded(flow_page):
    at = open_tab(flow_page, TABS, NUMPY)
    at.toggle(key="flow.notes").set_value(False)
    at.selectbox(key="flow.size").select("480x640")
    at.toggle(key="flow.notes_numpy").set_value(True).run()
    assert not at.exception and not at.error
    warning = " ".join(w.value for w in at.warning)
    assert "NumPy loop is skipped" in warning and f"{NOTES_NUMPY_MAX_HOLES:,}" in warning
    assert NOTES_NUMPY_METHOD not in list(_compare(at).dataframe[0].value["method"])


def test_arrival_and_picture_controls_fill_once(open_page, monkeypatch):
    # Lazy tabs: with the comparison tab closed, opening the page and moving a picture
    # control run the main fill only, not the five other methods.
    calls = _count_runs(monkeypatch)
    at = open_page("flow")
    assert not at.exception and not at.error
    assert [name for name, _ in calls] == ["gradual mean (cv2 backend)"]
    at.slider(key="flow.noise").set_value(0.4).run()
    assert [name for name, _ in calls] == ["gradual mean (cv2 backend)"] * 2


def test_notes_switch_opens_the_comparison(flow_page):
    at = flow_page
    at.toggle(key="flow.notes").set_value(False).run()
    assert at.session_state[TABS] == WINDOWS
    at.toggle(key="flow.notes").set_value(True).run()
    assert not at.exception
    assert at.session_state[TABS] == ACCURACY
    assert NOTES_TORCH_METHOD in list(at.dataframe[0].value["method"])


# ---------------------------------------------------------------- Lesson links
# Every value control is bound to the URL: a link opens the view it names, and the controls
# keep their values across a visit to another page (ui/links.BOUND).

#: The border band is 40 px wide: at the default max_window 33 (reach 16 px) its inner part has
#: no valid sample within the largest window; 129 (reach 64 px) reaches every hole.
HOLE_LESSON = {"flow.mask": "Border band", "flow.hole_size": "40"}
#: Compared on the holes: what the fill produced, not how long it took.
RESULT_COLUMNS = ["method", "mean EPE on holes (px)", "median EPE on holes (px)", "NaN left"]


def _cold(params: dict[str, str]) -> AppTest:
    """Open the flow page in a fresh session from a link with ``params``, as a student would."""
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT)
    at.query_params.update(params)
    switch_to(at, "flow")
    at.run(timeout=FIRST_RUN_TIMEOUT)
    assert not at.exception, at.exception
    assert not at.error, _errors(at)
    return at


def _stayed_nan(at) -> int:
    """The number of hole values the page says stayed NaN (Window sizes tab)."""
    assert "flow.windows_summary" in _block_keys(at)  # where a browser test reads it
    text = " ".join(m.value for m in at.markdown)
    found = re.search(r"\*\*([\d,]+) hole values stayed NaN\*\*", text)
    assert found, text
    return int(found.group(1).replace(",", ""))


def test_cold_link_shows_what_the_widgets_compute(open_page):
    link = {**HOLE_LESSON, "flow.max_window": "17", "flow.notes": "false",
            "flow.details_tab": ACCURACY}
    cold = _cold(link)
    assert cold.session_state[TABS] == ACCURACY  # the tab from the link, not the first one
    assert dict(cold.query_params) == link  # every value was used, and kept in the URL
    assert not cold.toast
    linked = cold.dataframe[0].value[RESULT_COLUMNS]
    # the same view set by hand, through the widgets, in a normal session
    at = open_page("flow")
    at.toggle(key="flow.notes").set_value(False)
    at.selectbox(key="flow.mask").select("border").run()
    at.slider(key="flow.hole_size").set_value(40)
    at.select_slider(key="flow.max_window").set_value(17).run()
    by_hand = _compare(at).dataframe[0].value[RESULT_COLUMNS]
    assert linked.equals(by_hand), (linked, by_hand)
    # and both are the real operation's numbers
    seed = int(cold.number_input(key="sidebar.seed").value)
    case = build_flow(FlowSpec(noise=0.2, mask="border", hole_size=40, seed=seed % 2**31))
    direct = run_method(case, METHOD_CV2, max_window=17)
    main = linked.iloc[0]
    assert main["method"] == METHOD_CV2 and main["NaN left"] == direct.unfilled > 0
    assert main["mean EPE on holes (px)"] == pytest.approx(direct.mean_epe, rel=1e-6)


@pytest.mark.parametrize(("max_window", "unfilled"), [(None, True), ("129", False)])
def test_lesson_hole_bigger_than_the_largest_window(max_window, unfilled):
    # Lesson: a 40 px border band; at max_window 33 its inner part stays NaN and the page counts
    # it; the same link with max_window=129 fills every hole.
    link = dict(HOLE_LESSON, **({"flow.max_window": max_window} if max_window else {}))
    at = _cold(link)
    seed = int(at.number_input(key="sidebar.seed").value)
    case = build_flow(FlowSpec(noise=0.2, mask="border", hole_size=40, seed=seed % 2**31))
    direct = run_method(case, METHOD_CV2, max_window=int(max_window or 33))
    assert f"{int(case.mask.sum()):,} holes" in " ".join(m.value for m in at.markdown)
    assert _stayed_nan(at) == direct.unfilled
    assert (direct.unfilled > 0) is unfilled
    assert any("still NaN" in w.value for w in at.warning) is unfilled


def test_lesson_large_windows_mix_motions():
    # Lesson: on the piecewise field, max_window 129 averages across the motion boundary, so the
    # gradual mean's error on the holes is about twice the default's.
    base = {"flow.field": "piecewise", "flow.notes": "false", "flow.details_tab": ACCURACY}
    epe = {}
    for window in ("33", "129"):
        at = _cold({**base, "flow.max_window": window} if window != "33" else base)
        epe[window] = at.dataframe[0].value["mean EPE on holes (px)"].iloc[0]
        assert "flow.epe_summary" in _block_keys(at)  # where a browser test reads it
        assert f"mean EPE on the holes is **{epe[window]:.3f} px**" in " ".join(
            m.value for m in at.markdown)
    assert epe["129"] > 1.5 * epe["33"], epe


def _open_tab_after_switch(at, label: str):
    """``open_tab`` for a session that came back from another page: Streamlit then writes the
    restored controls into the URL, and AppTest replays that URL as the page's link on every run
    (a browser updates its URL when a tab is clicked; AppTest does not), so the URL must say the
    new tab too or it wins over the session-state click."""
    at.query_params[TABS] = label
    return open_tab(at, TABS, label)


def test_controls_keep_their_values_across_a_page_switch(open_page):
    at = open_page("flow")
    # the picture's controls (synthetic source) and the Window sizes tab's switch
    at.toggle(key="flow.notes").set_value(False)
    at.selectbox(key="flow.field").select("zoom")
    at.slider(key="flow.noise").set_value(0.4)
    at.selectbox(key="flow.mask").select("blobs").run()
    at.slider(key="flow.fraction").set_value(0.2)
    at.slider(key="flow.hole_size").set_value(20)
    at.select_slider(key="flow.max_window").set_value(17)
    at.toggle(key="flow.per_scale").set_value(True).run()
    assert not at.exception and not at.error
    before = _stayed_nan(at), len(at.tabs)
    # the NumPy loop tab's switch, then the Accuracy tab's EPE map choice
    open_tab(at, TABS, NUMPY)
    at.toggle(key="flow.notes_numpy").set_value(True).run()
    _compare(at)
    at.selectbox(key="flow.epe_method").select("nearest valid").run()
    table = at.dataframe[0].value[RESULT_COLUMNS]
    switch_to(at, "home").run()
    assert not at.exception
    switch_to(at, "flow").run()
    assert not at.exception and not at.error
    assert at.session_state[TABS] == ACCURACY
    assert at.selectbox(key="flow.epe_method").value == "nearest valid"
    assert at.toggle(key="flow.notes").value is False
    assert at.selectbox(key="flow.field").value == "zoom"
    assert at.slider(key="flow.noise").value == 0.4
    assert at.selectbox(key="flow.mask").value == "blobs"
    assert at.slider(key="flow.fraction").value == 0.2
    assert at.slider(key="flow.hole_size").value == 20
    assert at.select_slider(key="flow.max_window").value == 17
    # same computed numbers, the NumPy loop's row included (its switch held while hidden)
    assert at.dataframe[0].value[RESULT_COLUMNS].equals(table)
    assert NOTES_NUMPY_METHOD in list(table["method"])
    _open_tab_after_switch(at, NUMPY)
    assert at.toggle(key="flow.notes_numpy").value is True
    _open_tab_after_switch(at, WINDOWS)
    assert at.toggle(key="flow.per_scale").value is True
    assert (_stayed_nan(at), len(at.tabs)) == before


def test_image_source_controls_keep_their_values_across_a_page_switch(open_page):
    at = open_page("flow")
    at.selectbox(key="flow.source").select("stereo").run()
    at.selectbox(key="flow.mask").select("fb").run()  # the picked mask stays across sources
    at.slider(key="flow.fb_threshold").set_value(2.0).run()
    assert not at.exception and not at.error
    summary = next(m.value for m in at.markdown if "holes (" in m.value)
    switch_to(at, "home").run()
    switch_to(at, "flow").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="flow.source").value == "stereo"
    assert at.selectbox(key="flow.mask").value == "fb"
    assert at.slider(key="flow.fb_threshold").value == 2.0
    assert next(m.value for m in at.markdown if "holes (" in m.value) == summary


def test_link_turns_the_notes_reference_on_at_a_large_size():
    # The switch's default depends on the size (off above 240x320); a link that asks for it on
    # at 720x1280 is obeyed, not reset to the size's default on arrival.
    at = _cold({"flow.size": "720x1280", "flow.notes": "true", "flow.max_window": "3"})
    assert at.toggle(key="flow.notes").value is True
    assert "flow.notes" in at.query_params
    # a size picked afterwards still resets it to that size's default
    at.selectbox(key="flow.size").select("480x640").run()
    assert at.toggle(key="flow.notes").value is False


@pytest.mark.parametrize(
    ("params", "dropped"),
    [
        ({"flow.max_window": "8", "flow.source": "nope", "flow.noise": "5",
          "flow.details_tab": "Nope", "flow.notes": "maybe"},
         ["flow.max_window", "flow.source", "flow.noise", "flow.details_tab", "flow.notes"]),
        ({"flow.mask": "Forward-backward check", "flow.hole_size": "x" * 10_000},
         ["flow.mask"]),  # fb needs an image source; hole_size is not on screen for that mask
    ],
)  # fmt: skip
def test_hostile_link_opens_the_defaults_with_a_notice(params, dropped):
    at = _cold(params)
    assert at.select_slider(key="flow.max_window").value == 33
    assert at.selectbox(key="flow.source").value == "synthetic"
    notice = " ".join(t.value for t in at.toast)
    assert all(f"`{key}`" in notice for key in dropped), notice
    assert _stayed_nan(at) == _stayed_nan(_cold({}))


# ---------------------------------------------------------------------------------- 中文
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"flow.details_tab": ACCURACY},
        {"flow.details_tab": NUMPY, "flow.notes_numpy": "true"},
        {"flow.per_scale": "true", "flow.mask": "Stripes", "flow.hole_size": "40",
         "flow.max_window": "9"},
        {"flow.source": "Motorcycle stereo pair", "flow.details_tab": ACCURACY},
    ],
    ids=["default", "accuracy", "numpy", "per_scale_unfilled", "stereo"],
)  # fmt: skip
def test_chinese_page_has_no_english_sentence(params):
    """Every text a visitor reads is Chinese, in each tab; a link's English labels still open
    the view it names (ui.links translates them)."""
    from tests.app.i18n_checks import untranslated, visible_texts

    at = _cold({"lang": "zh", **params})
    assert untranslated(visible_texts(at)) == []
    assert at.title[0].value == "光流空洞填充"


def test_chinese_link_keeps_the_english_values():
    at = _cold({"lang": "zh", "flow.mask": "Stripes", "flow.details_tab": ACCURACY})
    mask = at.selectbox(key="flow.mask")
    assert mask.value == "stripes" and "条纹" in mask.options
    assert at.session_state[TABS] == "精度与速度"
    assert list(at.dataframe[0].value.columns)[:2] == ["方法", "空洞上的平均 EPE（px）"]
    assert "渐进均值（cv2 后端）" in list(at.dataframe[0].value["方法"])
    # the same speed sentence, each part translated
    assert any("笔记没有给出这 3 ms 对应的光流尺寸和设备" in t.value for t in at.text)


def test_chinese_upload_errors_are_chinese():
    from tests.app.i18n_checks import english_sentences

    at = _cold({"lang": "zh"})
    at.selectbox(key="flow.source").select("upload_flow").run()
    bad = b"XXXX" + save_flo(np.zeros((4, 4, 2), np.float32))[4:]
    at.file_uploader(key="flow.file").upload("bad_magic.flo", bad).run()
    assert not at.exception
    assert "魔数" in _errors(at) and english_sentences(_errors(at)) == [], _errors(at)
    at.selectbox(key="flow.source").select("upload_pair").run()
    at.file_uploader(key="flow.image1").upload("a.png", _png(40, 50))
    at.file_uploader(key="flow.image2").upload("big.png", _png(8, 1100)).run()
    assert "第二张图像为 8x1100 像素" in _errors(at), _errors(at)
