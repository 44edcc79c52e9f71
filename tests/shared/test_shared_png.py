"""ui.pictures: pictures go to st.image as PNG bytes made once, exact and at the width shown."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
import streamlit as st

from ui.pictures import digest, show_image


class _Where:
    """Records what a page would hand to ``st.image``."""

    def __init__(self) -> None:
        self.calls: list[tuple[object, dict]] = []

    def image(self, image, **kwargs) -> None:
        self.calls.append((image, kwargs))


@pytest.fixture(autouse=True)
def _fresh_cache():
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def _decode(png: bytes) -> np.ndarray:
    return cv2.cvtColor(cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR),
                        cv2.COLOR_BGR2RGB)  # fmt: skip


def test_a_picture_is_sent_as_lossless_png():
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (30, 40, 3), dtype=np.uint8)
    where = _Where()
    show_image(rgb, where=where, caption="c", width="stretch")
    png, kwargs = where.calls[0]
    assert kwargs == {"output_format": "PNG", "caption": "c", "width": "stretch"}
    assert np.array_equal(_decode(png), rgb)  # exact: not Streamlit's default JPEG


def test_an_integer_width_is_the_png_width():
    rgb = np.full((300, 451, 3), 128, np.uint8)
    where = _Where()
    show_image(rgb, where=where, width=360)
    png, _kwargs = where.calls[0]
    assert _decode(png).shape == (round(300 * 360 / 451), 360, 3)


def test_the_key_names_the_picture_once_for_every_session():
    first, second = np.zeros((4, 4, 3), np.uint8), np.full((4, 4, 3), 255, np.uint8)
    where = _Where()
    show_image(first, ("case", "warped"), where=where)
    show_image(second, ("case", "warped"), where=where)  # same key: the first one's PNG
    show_image(second, where=where)  # named by its digest
    assert where.calls[0][0] is where.calls[1][0]
    assert np.array_equal(_decode(where.calls[2][0]), second)
    assert digest(first) != digest(second)


def test_other_arrays_go_to_st_image_as_they_are():
    floats = np.zeros((4, 4, 3), np.float32)
    where = _Where()
    show_image(floats, where=where, caption="f")
    assert where.calls[0][0] is floats and where.calls[0][1] == {"caption": "f"}
