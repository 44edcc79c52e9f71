"""The lesson layout in a real browser: the picture on arrival, above the fold, legible, uncut.

On a teacher's 1280x720 projector each lesson page, opened cold (the first visit to that page in
a freshly started server), shows its main figure with its top above 720 px and data in it; no
widget label, tab, metric label, button or page link is cut by an ellipsis at 1280x720 or on a
student's 1366x768 laptop (every page, Home included); chart text is at least 14 px.
Screenshots for a person to open, under ``screenshots/``:

- ``fold-<slug>-1280x720.png``: the projector's first screen (viewport only, what the room sees);
- ``phone-<slug>.png``: a 390x844 phone's first screen, and ``phone-<slug>-full.png``: the whole
  page at that width.

One server serves this module. Each page is measured once per viewport (cached), and the cold
1280x720 visit of every lesson happens in the first test, before any other visit of that page.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from lessons.registry import available_lessons, available_pages
from testing.servers import StreamlitServer, start_server, stop_server
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.layout_checks import (
    FigureBox,
    chart_font_sizes,
    truncated_texts,
    wait_for_figure,
)
from tests.e2e.test_browser import IDLE, SCRIPT_TIMEOUT_MS, page_url

pytestmark = pytest.mark.e2e

LESSONS = available_lessons()
PAGES = available_pages()
PROJECTOR = {"width": 1280, "height": 720}
LAPTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
MIN_CHART_PX = 14.0
MIN_FIGURE_HEIGHT_PX = 120  # a picture, not a collapsed or empty frame


@dataclass
class Visit:
    """What one page showed on arrival at one viewport."""

    slug: str
    viewport: dict
    cold: bool
    figure: FigureBox | None
    truncated: list[dict]
    fonts: list[dict]
    exceptions: list[str]


def wait_for_script(page) -> None:
    """The app frame exists and the script has finished (twice, to ride over reruns). On a phone
    the sidebar is collapsed, so it only has to be attached."""
    page.wait_for_selector("[data-testid='stSidebar']", state="attached", timeout=SCRIPT_TIMEOUT_MS)
    page.wait_for_selector("h1", timeout=SCRIPT_TIMEOUT_MS)
    for _ in range(2):
        page.wait_for_selector(IDLE, timeout=SCRIPT_TIMEOUT_MS)
        page.wait_for_timeout(500)


def save_whole_page(page, path, width: int) -> None:
    """Streamlit scrolls inside its main block: grow the viewport to the content, same width."""
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=stMain]')]"
        ".map(e => e.scrollHeight), 800)"
    )
    page.set_viewport_size({"width": width, "height": min(int(height) + 40, 12000)})
    page.wait_for_timeout(400)
    page.screenshot(path=str(path), full_page=True)


class Visitor:
    """Visits each (page, viewport) once in this module's server and remembers what it saw."""

    def __init__(self, server: StreamlitServer, browser) -> None:
        self.server = server
        self.browser = browser
        self.visits: dict[tuple[str, int, int], Visit] = {}
        self.seen: set[str] = set()

    def visit(self, slug: str, viewport: dict) -> Visit:
        key = (slug, viewport["width"], viewport["height"])
        if key in self.visits:
            return self.visits[key]
        cold = slug not in self.seen
        self.seen.add(slug)
        context = self.browser.new_context(viewport=viewport)
        page = context.new_page()
        try:
            page.goto(page_url(self.server.url, slug))
            wait_for_script(page)
            figure = wait_for_figure(page) if slug != "home" else None
            page.wait_for_timeout(300)  # let the last chart finish laying out its text
            exceptions = [
                e.inner_text()[:300] for e in page.locator("[data-testid='stException']").all()
            ]
            visit = Visit(
                slug=slug,
                viewport=viewport,
                cold=cold,
                figure=figure,
                truncated=truncated_texts(page),
                fonts=chart_font_sizes(page),
                exceptions=exceptions,
            )
            SCREENSHOTS.mkdir(exist_ok=True)
            if viewport == PROJECTOR:
                page.screenshot(path=str(SCREENSHOTS / f"fold-{slug}-1280x720.png"))
            elif viewport == PHONE:
                page.screenshot(path=str(SCREENSHOTS / f"phone-{slug}.png"))
                save_whole_page(page, SCREENSHOTS / f"phone-{slug}-full.png", PHONE["width"])
        finally:
            context.close()
        self.visits[key] = visit
        return visit


@pytest.fixture(scope="module")
def layout_server() -> Iterator[StreamlitServer]:
    """A server of this module's own, so that the first visit of each lesson is a cold one."""
    running = start_server("layout")
    yield running
    stop_server(running)


@pytest.fixture(scope="module")
def visitor(layout_server, browser) -> Visitor:
    return Visitor(layout_server, browser)


# Defined first: pytest runs a module's tests in order, so these are each lesson's first visit.
@pytest.mark.parametrize("spec", LESSONS, ids=[spec.slug for spec in LESSONS])
def test_main_figure_above_the_fold_on_a_cold_visit(visitor, spec):
    visit = visitor.visit(spec.slug, PROJECTOR)
    assert visit.cold, f"{spec.slug} was visited before this test: not a cold visit"
    assert not visit.exceptions, f"{spec.slug}: exception shown: {visit.exceptions}"
    figure = visit.figure
    assert figure is not None, (
        f"{spec.slug}: no chart or image inside .st-key-lesson-figure (ui.lesson.lesson_layout's "
        "figure container must hold the main picture first)"
    )
    assert figure.top < PROJECTOR["height"], (
        f"{spec.slug}: main figure starts at y = {figure.top:.0f} px, below the 720 px fold"
    )
    assert figure.filled, f"{spec.slug}: main figure ({figure.kind}) is empty on arrival"
    assert figure.height >= MIN_FIGURE_HEIGHT_PX, (
        f"{spec.slug}: main figure is only {figure.height:.0f} px tall"
    )


@pytest.mark.parametrize("viewport", [PROJECTOR, LAPTOP], ids=["1280x720", "1366x768"])
@pytest.mark.parametrize("spec", PAGES, ids=[spec.slug for spec in PAGES])
def test_no_truncated_labels(visitor, spec, viewport):
    visit = visitor.visit(spec.slug, viewport)
    cut = [f"{t['selector']}: {t['text']!r} ({t['scroll']} > {t['client']} px)"
           for t in visit.truncated]  # fmt: skip
    assert not cut, (
        f"{spec.slug} at {viewport['width']}x{viewport['height']}: text cut off:\n" + "\n".join(cut)
    )


@pytest.mark.parametrize("spec", PAGES, ids=[spec.slug for spec in PAGES])
def test_chart_text_legible_on_a_projector(visitor, spec):
    visit = visitor.visit(spec.slug, PROJECTOR)
    small = [f for f in visit.fonts if f["size"] < MIN_CHART_PX - 0.05]
    listed = ", ".join(f"{f['text'][:30]!r} {f['size']:g} px" for f in small[:10])
    assert not small, f"{spec.slug}: {len(small)} chart text(s) under {MIN_CHART_PX:g} px: {listed}"


@pytest.mark.parametrize("spec", PAGES, ids=[spec.slug for spec in PAGES])
def test_phone_screenshots(visitor, spec):
    visit = visitor.visit(spec.slug, PHONE)
    assert not visit.exceptions, f"{spec.slug} on a phone: exception shown: {visit.exceptions}"
    assert (SCREENSHOTS / f"phone-{spec.slug}.png").is_file()
    assert (SCREENSHOTS / f"phone-{spec.slug}-full.png").is_file()
    visitor.visit(spec.slug, PROJECTOR)  # cached after the tests above; it saves the fold
    assert (SCREENSHOTS / f"fold-{spec.slug}-1280x720.png").is_file()
