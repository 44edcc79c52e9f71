"""Opening a page of the app in Streamlit's AppTest the way a browser opens its URL."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from lessons.registry import HOME, LESSONS
from ui.navigation import page_hash_of


def page_path(slug: str) -> str:
    """The page script of ``slug``, relative to ``app.py`` (``lessons/<slug>/page.py``)."""
    specs = {spec.slug: spec for spec in (HOME, *LESSONS)}
    if slug not in specs:
        raise ValueError(f"no page has the slug {slug!r}; pages: {sorted(specs)}")
    return specs[slug].relative_script


def switch_to(at: AppTest, slug: str) -> AppTest:
    """Make ``at``'s next run show the page ``slug``, also before its first run (a cold link).

    Every page script is called ``page.py``, and before the app's first run ``st.navigation`` has
    registered nothing, so ``AppTest.switch_page`` alone would fall back to hashing the file's
    name. A browser opens a page by its URL path, and ``st.Page(url_path=slug)`` hashes that:
    so does this.
    """
    at.switch_page(page_path(slug))
    at._page_hash = page_hash_of(slug)
    return at


def stay_on_shown_page(at: AppTest) -> AppTest:
    """Make ``at``'s later runs ask for the page its last run showed, as a browser does.

    After :func:`switch_to`, AppTest asks for that page on every run; when the app itself moved
    the session to another page (``st.switch_page``, a class following its teacher), a browser
    would ask for the page it now shows.
    """
    at._page_hash = ""
    return at


def container_keys(at: AppTest) -> set[str]:
    """The keys of every block (``st.container(key=...)``, a keyed expander) the last run drew,
    sidebar included (a keyed block's id ends with ``-<key>``)."""
    keys: set[str] = set()
    stack = [at._tree]
    while stack:
        node = stack.pop()
        proto_id = getattr(getattr(node, "proto", None), "id", "") or ""
        if isinstance(node, Block) and proto_id.startswith("$$ID-") and proto_id.count("-") >= 2:
            keys.add(proto_id.split("-", 2)[2])
        stack.extend(getattr(node, "children", {}).values())
    return keys


_HIDDEN = re.compile(r"\.st-key-([a-z0-9_-]+) > \* \{ filter: blur")


def hidden_parts(at: AppTest) -> set[str]:
    """The container keys ``ui.question_view.hide_part`` blurs in the last run."""
    return {match for element in at.get("html") for match in _HIDDEN.findall(element.value)}
