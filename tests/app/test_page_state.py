"""A page's controls survive a visit to another page (Streamlit alone would reset them)."""

from __future__ import annotations

import pytest

from testing.apptest import switch_to

# (page, widget kind, key, new value): one value widget per page is enough to prove the
# mechanism is wired in; each page lists all of its own keys.
CASES = [
    ("home", "selectbox", "home.image.sample", "coffee.png"),
    ("home", "radio", "home.image.source", "Upload a file"),
    ("batchnorm", "checkbox", "batchnorm.affine", False),
    ("warp", "slider", "warp.angle", -45.0),
    ("warp", "selectbox", "warp.mode", "nearest"),
    ("warp", "selectbox", "warp.image.sample", "coffee.png"),
    ("flow", "select_slider", "flow.max_window", 9),
    ("saliency", "slider", "saliency.alpha", 0.8),
    ("memory", "selectbox", "memory.unit", "MB"),
]


def _widget(at, kind: str, key: str):
    return getattr(at, kind)(key=key)


@pytest.mark.parametrize(("slug", "kind", "key", "value"), CASES, ids=[c[2] for c in CASES])
def test_controls_survive_a_page_switch(open_page, slug, kind, key, value):
    at = open_page(slug)
    widget = _widget(at, kind, key)
    (widget.select(value) if kind == "selectbox" else widget.set_value(value)).run()
    assert _widget(at, kind, key).value == value
    switch_to(at, "home" if slug != "home" else "indexing").run()
    assert not at.exception
    switch_to(at, slug).run()
    assert not at.exception, at.exception
    assert _widget(at, kind, key).value == value
