"""AppTest for the Flow hole-filling page: default view, controls, and every bad input."""

from __future__ import annotations

import io

import cv2
import numpy as np
import pytest

from core.flowfill import save_flo, synthetic_flow

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
