"""Results are shared between sessions only when their inputs are the same.

Two AppTests in one process are two browser sessions sharing one server's caches. Each uploads
its own file; each must see results for its own file, before and after the other one ran.
"""

from __future__ import annotations

import io

import numpy as np

from lessons.flow.flow_files import save_flo
from lessons.flow.sources import synthetic_flow
from tests.lessons.saliency.test_page import _sample_bytes


def _flow_session(open_page, name: str, data: bytes):
    at = open_page("flow")
    at.selectbox(key="flow.source").select("upload_flow").run()
    at.file_uploader(key="flow.file").upload(name, data).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def _pixels_line(at) -> str:
    return next(m.value for m in at.markdown if " pixels, " in m.value and "holes" in m.value)


def test_two_sessions_uploading_different_flows_see_their_own(open_page):
    first = _flow_session(open_page, "a.flo", save_flo(synthetic_flow("vortex", 40, 60)[0]))
    buf = io.BytesIO()
    np.save(buf, synthetic_flow("zoom", 30, 50)[0])
    second = _flow_session(open_page, "b.npy", buf.getvalue())
    assert "2,400 pixels" in _pixels_line(first)
    assert "1,500 pixels" in _pixels_line(second)
    first.select_slider(key="flow.max_window").set_value(9).run()  # rerun after the other
    assert "2,400 pixels" in _pixels_line(first)


def _saliency_session(open_page, sample: str):
    at = open_page("saliency")
    at.radio(key="saliency.image.source").set_value("Upload a file").run()
    at.file_uploader(key="saliency.image.upload").set_value(
        (sample, _sample_bytes(sample), "image/png")
    ).run()
    assert not at.exception and not at.error
    return at


def _explained(at) -> str:
    return next(c.value for c in at.caption if c.value.startswith("Explaining class"))


def test_two_sessions_uploading_different_images_see_their_own_maps(open_page):
    coffee = _saliency_session(open_page, "coffee.png")
    cat = _saliency_session(open_page, "chelsea.png")
    assert _explained(coffee) == "Explaining class 967: **espresso**"
    assert "967" not in _explained(cat)
    assert coffee.dataframe[0].value["class"].iloc[0] == 967
    assert cat.dataframe[0].value["class"].iloc[0] != 967
    coffee.run()  # the coffee session again, after the cat's map went into the shared cache
    assert _explained(coffee) == "Explaining class 967: **espresso**"
