"""ui.navigation: the pages are made once, and every run gets its own copies."""

from __future__ import annotations

import ui.navigation


class _Page:
    """Stands in for st.Page: Page.run flips ``_can_be_called`` on the copy it runs."""

    def __init__(self, title: str) -> None:
        self.title = title
        self._can_be_called = False


def test_each_run_gets_its_own_copy(monkeypatch):
    """Two sessions running the same page at once each flip their own "may run" flag: with one
    shared object a class got "This page cannot be called directly" (benchmarks/classroom.py).
    """
    made = [_Page("Home"), _Page("Warp")]
    monkeypatch.setitem(ui.navigation._PAGES, "xx", made)
    first = ui.navigation.navigation_pages("xx")
    second = ui.navigation.navigation_pages("xx")
    first[1]._can_be_called = True
    assert [p.title for p in first] == [p.title for p in second] == ["Home", "Warp"]
    assert first[1] is not second[1] and first[1] is not made[1]
    assert not second[1]._can_be_called and not made[1]._can_be_called
