"""What a class shares: the teacher's view (a page and its link's parameters), as store state.

A view is the same thing a lesson link carries: the page's URL slug and the bound controls'
query parameters (``{"warp.angle": ["30"]}``; a control at its default is not there). The
teacher's session publishes it to the class store (``core.class_store``) as two strings, and a
following student opens it the way a browser opens that link. The parameters that say who is
in a class (``class``, ``seat``, ``teacher``) and the visitor's own language are never part of
a view: each session keeps its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode

#: Query parameters of class membership: the class code, a student's seat, and the teacher key
#: a teacher link carries (read once, then removed from the address bar).
CLASS_PARAM = "class"
SEAT_PARAM = "seat"
TEACHER_PARAM = "teacher"
CLASS_PARAMS: tuple[str, ...] = (CLASS_PARAM, SEAT_PARAM, TEACHER_PARAM)
#: The state's two fields: the page's slug and its parameters as a URL query string.
PAGE_FIELD = "page"
QUERY_FIELD = "query"


@dataclass(frozen=True)
class View:
    """One page with its controls: ``slug`` and ``params`` (name -> the URL's values, in the
    order a link holds them). Two views are equal when a link to each would show the same."""

    slug: str
    params: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def query(self) -> str:
        """The parameters as a URL query string (``"warp.angle=30&warp.scale=2"``)."""
        return urlencode([(key, value) for key, values in self.params for value in values])

    def as_dict(self) -> dict[str, list[str]]:
        """The parameters as ``st.query_params.from_dict`` takes them."""
        return {key: list(values) for key, values in self.params}


def view_of(slug: str, params: Mapping[str, list[str]], own: tuple[str, ...] = ()) -> View:
    """The view of page ``slug`` with URL ``params``, leaving out class membership and the
    names in ``own`` (the visitor's language). Parameters are sorted by name, so the order the
    browser happened to write them in does not make two views differ.

    >>> view_of("warp", {"warp.angle": ["30"], "class": ["HJK234"], "lang": ["zh"]}, ("lang",))
    View(slug='warp', params=(('warp.angle', ('30',)),))
    """
    if not isinstance(slug, str) or not slug:
        raise ValueError(f"a view needs a page slug, got {slug!r}")
    skipped = set(CLASS_PARAMS) | set(own)
    kept = sorted((key, tuple(values)) for key, values in params.items() if key not in skipped)
    return View(slug, tuple(kept))


def view_state(view: View) -> dict[str, str]:
    """``view`` as the class store keeps it: ``{"page": slug, "query": query string}``."""
    return {PAGE_FIELD: view.slug, QUERY_FIELD: view.query}


def view_from_state(state: Mapping[str, str], own: tuple[str, ...] = ()) -> View | None:
    """The view a class state holds, or ``None`` when the teacher has published none yet.
    Raises ``ValueError`` naming the field when the state is not one ``view_state`` wrote."""
    if not state:
        return None
    slug, query = state.get(PAGE_FIELD), state.get(QUERY_FIELD, "")
    if not isinstance(slug, str) or not slug or not isinstance(query, str):
        raise ValueError(f"a class state has a page and a query, got fields {sorted(state)}")
    return view_of(slug, parse_qs(query, keep_blank_values=True), own)


def translated(view: View, table: Mapping[str, str]) -> View:
    """``view`` with every value that is a whole text of ``table`` replaced by its translation:
    a menu's value is the label the teacher's page showed, in the teacher's language."""
    params = tuple(
        (key, tuple(table.get(value, value) for value in values)) for key, values in view.params
    )
    return View(view.slug, params)
