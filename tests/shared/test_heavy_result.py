"""ui.heavy.heavy_result: this session's last result, else the shared cache's without a click,
else a click above the budget, then the work once for the whole server (or for this session
alone); failures it is told to keep are kept like results."""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from ui import heavy
from ui.caching import NotCached

#: What the demo work did, across sessions (AppTests share this process, as students do).
CALLS: list[tuple[int, bool]] = []


@pytest.fixture(autouse=True)
def _fresh():
    st.cache_data.clear()
    st.cache_resource.clear()
    CALLS.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


def _script() -> None:
    import streamlit as st

    from tests.shared import test_heavy_result as here
    from ui.heavy import heavy_result

    params = st.query_params
    size, shared = int(params.get("size", "1")), params.get("shared", "yes") == "yes"

    def work() -> str:
        here.CALLS.append((size, shared))
        if params.get("fail"):
            raise (ValueError if params["fail"] == "kept" else KeyError)(f"no {size}")
        return f"made {size}"

    found = heavy_result("demo.work", ("size", size), float(params.get("seconds", "0.5")), work,
                         what=None if params.get("never_waits") else "the demo work",
                         label="Demo", shared=shared, errors=(ValueError,))  # fmt: skip
    if found is None:
        st.text("cheap view")
    else:
        st.text(f"{found.value} error={found.error} kept={found.kept} ran={found.ran}")


def _open(**params: str) -> AppTest:
    at = AppTest.from_function(_script, default_timeout=30)
    at.query_params.update(params)
    return at.run()


def test_cheap_work_runs_at_once_and_is_kept_for_the_session():
    at = _open()
    assert not at.exception and not at.button
    assert at.text[0].value == "made 1 error=None kept=False ran=True"
    at.run()
    assert at.text[0].value == "made 1 error=None kept=True ran=False"
    assert CALLS == [(1, True)]


def test_heavy_work_waits_for_its_click_then_runs_once_for_the_server():
    at = _open(seconds="12", size="7")
    assert at.text[0].value == "cheap view" and CALLS == []
    button = at.button(key="demo.work.run")
    assert button.label == "Run the demo work (about 12 s)"
    button.click().run()
    assert at.text[0].value == "made 7 error=None kept=False ran=True"
    other = _open(seconds="12", size="7")  # another student: the shared cache holds it
    assert not other.button
    assert other.text[0].value == "made 7 error=None kept=False ran=False"
    assert CALLS == [(7, True)]
    at.query_params["size"] = "8"  # other settings: their own click
    at.run()
    assert at.text[0].value == "cheap view"


def test_work_that_never_waits_runs_even_above_the_budget():
    at = _open(seconds="12", never_waits="1")
    assert not at.button and at.text[0].value.startswith("made 1")


def test_unshared_work_runs_for_each_session_and_is_not_asked_of_the_cache():
    first, second = _open(shared="no"), _open(shared="no")
    assert first.text[0].value == second.text[0].value == "made 1 error=None kept=False ran=True"
    assert CALLS == [(1, False), (1, False)]


def test_a_kept_failure_is_not_run_again_and_another_is_the_callers():
    at = _open(fail="kept")
    assert at.text[0].value == "None error=no 1 kept=False ran=True"
    at.run()
    assert at.text[0].value == "None error=no 1 kept=True ran=False"
    assert CALLS == [(1, True)]
    other = _open(fail="raised", size="2")
    assert other.exception and not other.text
    _open(fail="raised", size="2")
    assert CALLS == [(1, True), (2, True), (2, True)]  # not kept, not cached: run again


def test_marks_ask_the_cache_and_never_compute():
    marks = heavy.SharedWorkMarks()
    assert marks.held(("k",), lambda: "cached") == "cached"

    def miss() -> str:
        raise NotCached

    assert marks.held(("k",), miss) is None


def test_marks_skip_a_key_being_computed_and_forget_it_after_a_failure():
    marks, asked = heavy.SharedWorkMarks(), []
    with marks.marked(("k",)), marks.marked(("k",)):
        assert marks.held(("k",), lambda: asked.append(1)) is None
        assert marks.computing == {("k",): 2}
    assert asked == [] and marks.computing == {}
    assert marks.held(("other",), lambda: "asked") == "asked"
    with pytest.raises(ValueError), marks.marked(("k",)):
        raise ValueError("the work failed")
    assert marks.computing == {}


def test_shared_if_gives_the_cached_function_or_the_function_it_caches():
    @heavy.bounded_cache(max_entries=1, ttl=60)
    def double(x: int) -> int:
        return 2 * x

    assert heavy.shared_if(True, double) is double
    assert heavy.shared_if(False, double)(4) == 8 and heavy.shared_if(False, double) is not double
