"""The error doctor and the lessons that teach an error link to each other, both ways.

An entry's ``lesson`` opens that lesson on the view that teaches the error, and that view links
back to the entry (``errors?errors.entry=KEY``, a link relative to the page); the text is in one
place only.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

import pytest

from lessons.errors.catalogue import entries, entry_by_key
from tests.app.conftest import open_cold
from tests.sources import ROOT

BACK_LINK = re.compile(r"errors\?errors\.entry=([a-z0-9-]+)")
LINKED = [entry for entry in entries() if entry.lesson]


def _back_links() -> dict[str, str]:
    """``{entry key: lesson slug}`` for every link to the doctor in another lesson's modules."""
    found = {}
    for path in (ROOT / "lessons").glob("*/*.py"):
        slug = path.parent.name
        if slug != "errors":
            for key in BACK_LINK.findall(path.read_text(encoding="utf-8")):
                found[key] = slug
    return found


def test_every_link_to_the_doctor_is_answered_by_a_link_back():
    back = _back_links()
    assert len(back) >= 3, back
    for key, slug in back.items():
        entry = entry_by_key(key)
        assert entry.lesson is not None, f"{key}: the {slug} lesson links to it, not it to {slug}"
        assert entry.lesson[0].split("?")[0] == slug, (key, entry.lesson)
    assert sorted(back) == sorted(entry.key for entry in LINKED)


@pytest.mark.parametrize("entry", LINKED, ids=lambda entry: entry.key)
def test_an_entrys_lesson_link_opens_the_view_that_links_back(entry):
    slug, _sep, query = entry.lesson[0].partition("?")
    at = open_cold(slug, dict(parse_qsl(query)))
    assert not at.exception, at.exception
    shown = [caption.value for caption in at.caption]
    assert any(f"errors?errors.entry={entry.key}" in text for text in shown), shown[-5:]
