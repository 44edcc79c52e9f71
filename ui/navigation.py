"""The ``st.Page`` objects of every available page, made once per process and language.

``st.Page`` resolves its script's path and checks the file on the disk each time it is made;
making the seven pages on every run of every session cost ~4 ms a run (``realpath``,
``stat``), a visible share of a class of 50 opening a link at once
(``benchmarks/classroom.py``). So the pages are made once, and every run gets shallow copies:
``st.navigation`` and ``Page.run`` flip a flag on the chosen page ("may run once"), and two
sessions running the same page at once must not share it.
"""

from __future__ import annotations

import copy
import threading

import streamlit as st
from streamlit.util import calc_hash

from lessons.registry import available_pages
from ui.i18n import _

_PAGES: dict[str, list[st.Page]] = {}
_LOCK = threading.Lock()  # two first visitors in one language make the list once


def navigation_pages(language: str) -> list[st.Page]:
    """Every available page as an ``st.Page`` titled in ``language`` (Home is the default).

    ``language`` must be the session's current language: titles are translated with ``_``,
    which reads it. Each call returns new copies of the process's pages (cheap: a few fields).
    """
    with _LOCK:
        if language not in _PAGES:
            _PAGES[language] = [
                st.Page(
                    page.relative_script,
                    title=_(page.title),
                    icon=page.icon,
                    url_path=page.slug,
                    default=page.slug == "home",
                )
                for page in available_pages()
            ]
        pages = _PAGES[language]
    return [copy.copy(page) for page in pages]


def page_hash_of(slug: str) -> str | None:
    """The script hash Streamlit gives page ``slug`` (``st.Page`` hashes its URL path), or
    ``None`` when no available page has that slug."""
    if slug not in {page.slug for page in available_pages()}:
        return None
    return calc_hash(slug)
