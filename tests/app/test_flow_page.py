"""AppTest for the Flow hole-filling page: default view, controls, and every bad input."""

from __future__ import annotations

import io

import cv2
import numpy as np
import pytest
import torch

from core.flowfill import (
    NOTES_CLAIM_ZH,
    NOTES_NUMPY_MAX_HOLES,
    NOTES_NUMPY_METHOD,
    NOTES_TORCH_METHOD,
    save_flo,
    synthetic_flow,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


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
    assert "faster" in text  # timing explanation tied to live numbers
    assert len(at.dataframe) == 1
    table = at.dataframe[0].value
    assert len(table) == 6
    diffs = table["max |diff| vs notes"].iloc[:2]
    assert (diffs <= 1e-5).all()
    assert any("gradual_mean_fill" in c.value for c in at.code)
    # the notes' NumPy loop is offered, not run by default (it is a per-pixel Python loop)
    assert NOTES_NUMPY_METHOD not in list(table["method"])
    assert any("Run the notes' original NumPy loop" in i.value for i in at.info)
    # the notes' "3 ms" beside the measured time of the vectorised version, with the device
    texts = " ".join(t.value for t in at.text)
    assert NOTES_CLAIM_ZH in texts
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


def test_window_controls(flow_page):
    at = flow_page
    at.toggle(key="flow.notes").set_value(False).run()
    at.select_slider(key="flow.max_window").set_value(3).run()
    assert not at.exception
    assert "`3x3`" in " ".join(m.value for m in at.markdown)
    at.toggle(key="flow.per_scale").set_value(True)
    at.select_slider(key="flow.max_window").set_value(129).run()
    assert not at.exception and not at.error
    assert len(at.tabs) == 7  # one tab per window 3 ... 129


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
    assert len(at.dataframe) == 1


def test_upload_flow_with_own_holes(flow_page):
    at = flow_page
    at.toggle(key="flow.notes").set_value(False).run()
    at.selectbox(key="flow.source").select("upload_flow").run()
    flow = synthetic_flow("zoom", 30, 40)[0]
    flow[5:9, 5:12] = np.nan
    at.file_uploader(key="flow.file").upload("holes.npy", _npy(flow)).run()
    assert not at.exception and not at.error
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


def test_display_only_widgets_do_not_refill(flow_page, monkeypatch):
    # Picking which EPE map to show must not rerun every method (the notes' avg_pool2d
    # reference takes seconds on a small CPU); the page reuses the comparison it already has.
    import core.flowfill as ff

    calls = []
    real = ff.compare_methods

    def counting(*args, **kwargs):
        calls.append(kwargs.get("max_window"))
        return real(*args, **kwargs)

    monkeypatch.setattr(ff, "compare_methods", counting)
    at = flow_page
    at.select_slider(key="flow.max_window").set_value(9).run()
    assert calls == [9]
    at.selectbox(key="flow.epe_method").select_index(3).run()
    assert not at.exception and calls == [9]
    at.select_slider(key="flow.max_window").set_value(17).run()
    assert calls == [9, 17]


def test_large_maps_are_sent_downsampled(flow_page):
    # A 720x1280 heat map is ~12 MB of plotly JSON per chart and rerun: the page sends the
    # scale-count and EPE maps at most HEAT_MAX_SIDE pixels a side.
    import json

    at = flow_page
    at.toggle(key="flow.notes").set_value(False)
    at.selectbox(key="flow.size").select("720x1280").run()
    assert not at.exception and not at.error
    heat = []
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
    import core.flowfill as ff

    seen = []
    real = ff.compare_methods

    def spy(*args, **kwargs):
        seen.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(ff, "compare_methods", spy)
    at = flow_page
    at.slider(key="flow.fraction").set_value(0.05)
    at.toggle(key="flow.notes_numpy").set_value(True).run()
    assert not at.exception and not at.error
    assert seen[-1]["with_notes_numpy"] is True and callable(seen[-1]["progress"])
    table = at.dataframe[0].value
    assert len(table) == 7
    rows = table.set_index("method")
    numpy_epe = rows.loc[NOTES_NUMPY_METHOD, "mean EPE on holes (px)"]
    pool_epe = rows.loc[NOTES_TORCH_METHOD, "mean EPE on holes (px)"]
    assert numpy_epe > 3 * pool_epe, (numpy_epe, pool_epe)  # off-centre windows, zero border
    assert rows.loc[NOTES_NUMPY_METHOD, "device"] == "cpu"
    assert rows.loc[NOTES_NUMPY_METHOD, "time (ms)"] > 0
    text = " ".join(m.value for m in at.markdown)
    assert f"**{numpy_epe:.3f} px**, against **{pool_epe:.3f} px**" in text
    assert f"**{numpy_epe / pool_epe:.1f}x** the error" in text
    assert "windows 32, 16, 8, 4, 2" in text
    # the snippet shown for it runs as-is and prints the same two errors
    code = next(c.value for c in at.code if "notes_gradual_mean_numpy(flow, 32)" in c.value)
    printed: list[str] = []
    exec(compile(code, "<snippet>", "exec"),
         {"print": lambda *a, **k: printed.append(" ".join(map(str, a)))})
    assert f"notes' loop: mean EPE on the holes {numpy_epe:.3f} px" in printed
    assert f"avg_pool2d: mean EPE on the holes {pool_epe:.3f} px" in printed


def test_notes_numpy_loop_is_bounded(flow_page):
    at = flow_page
    at.toggle(key="flow.notes").set_value(False)
    at.selectbox(key="flow.size").select("480x640")
    at.toggle(key="flow.notes_numpy").set_value(True).run()
    assert not at.exception and not at.error
    warning = " ".join(w.value for w in at.warning)
    assert "NumPy loop is skipped" in warning and f"{NOTES_NUMPY_MAX_HOLES:,}" in warning
    assert NOTES_NUMPY_METHOD not in list(at.dataframe[0].value["method"])
