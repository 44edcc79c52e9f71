"""What the error doctor shows for a query and a chosen entry: pure, no Streamlit.

An entry chosen by name is shown; otherwise a non-empty query is matched
(:func:`~lessons.errors.matching.find`) and its best entry is shown first, the other candidates
below; an empty query shows the catalogue grouped by kind. (The page forgets the chosen entry
when the query is edited, so a new paste is matched.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lessons.errors.catalogue import entries_of_kind, entry_by_key
from lessons.errors.entry import KINDS, Entry
from lessons.errors.matching import Match, Search, find

Mode = Literal["search", "entry", "catalogue"]

#: The page's controls (their keys are the link's parameters) and the best match's container.
QUERY, ENTRY = "errors.query", "errors.entry"
TOP_KEY = "errors-top"


@dataclass(frozen=True)
class DoctorView:
    """``mode``: what the page shows; ``top``: the entry shown first (None: nothing matched, or
    the catalogue); ``others``: the other candidates, best first; ``search``: what the matcher
    made of the query (None without a query)."""

    mode: Mode
    top: Entry | None
    others: tuple[Match, ...]
    search: Search | None


def doctor_view(query: str, chosen: str | None) -> DoctorView:
    """The view for ``query`` (the text area, any text) and ``chosen`` (an entry key or None).

    Raises ValueError naming ``chosen`` when no entry has that key."""
    if chosen:
        return DoctorView("entry", entry_by_key(chosen), (), None)
    if query.strip():
        search = find(query)
        top = entry_by_key(search.best) if search.best else None
        return DoctorView("search", top, search.matches[1:], search)
    return DoctorView("catalogue", None, (), None)


def catalogue_by_kind() -> tuple[tuple[str, tuple[Entry, ...]], ...]:
    """Every kind with its entries, in catalogue order: ``((kind, entries), ...)``."""
    return tuple((kind, entries_of_kind(kind)) for kind in KINDS)
