"""A link is user input: hostile query strings open every page at its defaults, with one notice.

The page's own bound controls are found in a default run, so a control added later is fed
hostile values too. Each page is then opened cold (as a student clicking the link) with a
wrong-type, not-an-option, out-of-range or unparsable value for every control, plus unknown
parameters, and must: raise nothing, show exactly one notice naming every control it reset,
and hold each control at its default.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import open_cold
from tests.shared.test_links import NOT_BOUND

SLUGS = ["home", "indexing", "batchnorm", "warp", "saliency", "flow", "memory"]
NUMERIC = ("slider", "number_input")
CHOICE = ("selectbox", "radio", "select_slider", "multiselect")
SWITCH = ("toggle", "checkbox")
TEXT = ("text_input", "text_area")
#: Controls without a range by design, with the reason; they are fed only the wrong-type value.
NO_RANGE = {
    "memory.size": "any size may be typed; Allocate refuses an impossible one with a message "
    "(with a maximum, the browser would silently replace a typed value)",
}
UNKNOWN = {"nope": "1", "<script>alert(1)</script>": "x", "../../etc/passwd": "y"}

#: (label, value by widget kind): each a different way a link can be wrong.
HOSTILE = {
    "wrong type": {"numeric": "abc", "choice": "no-such-option", "switch": "maybe",
                   "text": "[[1, 2,"},
    "out of range / too long": {"numeric": "1e300", "choice": "-999", "switch": "2",
                                "text": "7" * 10_000},
}  # fmt: skip


def _own_controls(at: AppTest, slug: str) -> dict[str, tuple[str, object]]:
    """key -> (kind, default value) for the page's and the sidebar's keyed value controls."""
    controls = {}
    for kind in (*NUMERIC, *CHOICE, *SWITCH, *TEXT):
        for widget in getattr(at, kind):
            key = widget.key or ""
            if key.startswith((f"{slug}.", "sidebar.")) and key not in NOT_BOUND:
                controls[key] = (kind, widget.value)
    return controls


def _value_for(kind: str, values: dict[str, str]) -> str:
    for group, kinds in (("numeric", NUMERIC), ("choice", CHOICE), ("switch", SWITCH)):
        if kind in kinds:
            return values[group]
    return values["text"]


@pytest.mark.parametrize("case", list(HOSTILE))
@pytest.mark.parametrize("slug", SLUGS)
def test_hostile_link_opens_the_page_at_defaults_with_one_notice(open_page, slug, case):
    controls = _own_controls(open_page(slug), slug)
    assert controls, f"no bound controls found on {slug}"
    if case != "wrong type":
        controls = {key: control for key, control in controls.items() if key not in NO_RANGE}
    params = {key: _value_for(kind, HOSTILE[case]) for key, (kind, _) in controls.items()}
    at = open_cold(slug, {**params, **UNKNOWN})

    assert not at.exception, at.exception
    assert len(at.toast) == 1, [t.value for t in at.toast]
    notice = at.toast[0].value
    assert f"{len(UNKNOWN)} unknown parameters ignored" in notice
    for key, (kind, default) in controls.items():
        assert f"`{key}`" in notice, (key, notice)
        assert getattr(at, kind)(key=key).value == default, key
    assert "<script>" not in notice and "passwd" not in notice


def test_a_link_that_is_whole_shows_no_notice():
    at = open_cold("warp", {"warp.angle": "45", "sidebar.seed": "3"})
    assert not at.exception, at.exception
    assert len(at.toast) == 0
    assert at.slider(key="warp.angle").value == 45.0
    assert at.number_input(key="sidebar.seed").value == 3


def test_a_link_at_the_defaults_shows_no_notice():
    """Streamlit leaves a default value out of the URL: that is not a dropped value."""
    at = open_cold("warp", {"warp.angle": "30", "sidebar.cudnn_deterministic": "false"})
    assert not at.exception, at.exception
    assert len(at.toast) == 0, [t.value for t in at.toast]


@pytest.mark.parametrize("slug", SLUGS)
def test_a_page_at_its_defaults_has_a_clean_url(slug):
    """A value at its default leaves the URL: a page opened plainly links to itself plainly."""
    at = open_cold(slug)
    assert not at.exception, at.exception
    assert dict(at.query_params) == {}

