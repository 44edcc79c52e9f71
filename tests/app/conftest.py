"""AppTest fixtures: run the real app.py (router + shared sidebar) and switch to one page."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from testing.apptest import switch_to

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
FIRST_RUN_TIMEOUT = 120  # the first run imports torch, cv2 and friends
RUN_TIMEOUT = 60


@pytest.fixture(autouse=True)
def _clear_streamlit_caches():
    """st.cache_* is process-wide and would leak between AppTests."""
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture
def sqlite_class(tmp_path, monkeypatch):
    """Sessions started in this test share a SQLite class store in ``tmp_path``."""
    monkeypatch.setenv("TP_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("TP_CLASS_STORE", raising=False)
    return tmp_path


@pytest.fixture
def open_page() -> Callable[[str], AppTest]:
    """Return a function that starts app.py, switches to ``lessons/<slug>/page.py`` and runs it."""

    def _open(slug: str) -> AppTest:
        at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT)
        at.run(timeout=FIRST_RUN_TIMEOUT)
        assert not at.exception, at.exception
        if slug != "home":
            switch_to(at, slug)
            at.run(timeout=FIRST_RUN_TIMEOUT)
        return at

    return _open


def open_cold(
    slug: str, params: dict[str, str] | None = None, *, locale: str | None = None
) -> AppTest:
    """Open page ``slug`` in a new session from a link with ``params`` (and a browser language
    ``locale``), as a student clicking it would: no state, the URL read on the first run."""
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT)
    at.query_params.update(params or {})
    if locale is not None:
        at.context["locale"] = locale
    if slug != "home":
        switch_to(at, slug)
    at.run(timeout=FIRST_RUN_TIMEOUT)
    return at


def open_tab(at: AppTest, key: str, label: str) -> AppTest:
    """Select tab ``label`` of the lazy ``st.tabs(key=key, on_change="rerun")`` and rerun, as a
    click on the tab would (only the open tab's content runs)."""
    at.session_state[key] = label
    at.run()
    assert not at.exception, at.exception
    return at


def open_expanders(at: AppTest, *keys: str) -> AppTest:
    """Open the lazy ``st.expander(key=..., on_change="rerun")`` sections ``keys`` and rerun, as
    clicks on them would (a lazy section's content runs only while it is open)."""
    for key in keys:
        at.session_state[key] = True
    at.run()
    assert not at.exception, at.exception
    return at


_QUOTE = re.compile(r'<blockquote lang="[^"]+" class="notes-quote"[^>]*>(.*)</blockquote>', re.S)


def notes_quotes(at: AppTest) -> list[str]:
    """The notes' quotes the page shows (``ui.notes_callout.notes_quote``: an ``st.html``
    blockquote marked with its language), as their text."""
    found = (_QUOTE.fullmatch(element.value) for element in at.html)
    return [html.unescape(match.group(1)) for match in found if match]
