"""A class opening the same link pays for one computation.

Two AppTests in one process are two students on one server. The second student to open a page
at its defaults must get every figure from the process-wide cache: no plotly figure is built
during their run (building one cost 20-80 ms of the GIL each, several per page, times the class).
"""

from __future__ import annotations

import pytest
from plotly.basedatatypes import BaseFigure

from lessons.registry import available_pages


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


@pytest.fixture
def count_encodes(monkeypatch):
    """Count images encoded while the test runs: by OpenCV (the pages' PNG bytes) or by PIL
    (``st.image`` given an array encodes it on every call)."""
    import cv2
    from PIL import Image

    encoded = []
    imencode, save = cv2.imencode, Image.Image.save

    def counting_imencode(ext, image, *args, **kwargs):
        encoded.append(("cv2", ext, image.shape))
        return imencode(ext, image, *args, **kwargs)

    def counting_save(self, *args, **kwargs):
        encoded.append(("PIL", self.size))
        return save(self, *args, **kwargs)

    monkeypatch.setattr(cv2, "imencode", counting_imencode)
    monkeypatch.setattr(Image.Image, "save", counting_save)
    return encoded


@pytest.mark.parametrize("slug", [page.slug for page in available_pages()])
def test_the_second_student_at_defaults_encodes_no_image(open_page, count_encodes, slug):
    """Pictures are encoded once per process too (saliency encoded five PNGs per run)."""
    open_page(slug)
    count_encodes.clear()
    second = open_page(slug)
    assert not second.exception, second.exception
    assert count_encodes == [], f"{len(count_encodes)} image(s) encoded for the second student"
