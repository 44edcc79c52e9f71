"""Issue 13: a class opening the same link pays for one computation.

Two AppTests in one process are two students on one server. The second student to open a page
at its defaults must get every figure from the process-wide cache: no plotly figure is built
during their run (building one cost 20-80 ms of the GIL each, several per page, times the class).
"""

from __future__ import annotations

import pytest
from plotly.basedatatypes import BaseFigure

from ui.registry import available_pages


@pytest.fixture
def count_figures(monkeypatch):
    """Count plotly figures constructed while the test runs."""
    built = []
    original = BaseFigure.__init__

    def counting_init(self, *args, **kwargs):
        built.append(type(self).__name__)
        original(self, *args, **kwargs)

    monkeypatch.setattr(BaseFigure, "__init__", counting_init)
    return built


@pytest.mark.parametrize("slug", [page.slug for page in available_pages()])
def test_the_second_student_at_defaults_builds_no_figure(open_page, count_figures, slug):
    open_page(slug)  # the first student fills the caches
    count_figures.clear()
    second = open_page(slug)
    assert not second.exception, second.exception
    assert count_figures == [], (
        f"{len(count_figures)} figure(s) built for the second student on {slug}"
    )
