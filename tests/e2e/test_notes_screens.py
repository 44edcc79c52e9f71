"""The notes' lessons in a real browser: the y2 preset and "notes say / today" callouts.

Screenshots (git-ignored, under screenshots/) are for a person to open: the indexing page on the
notes' y2 example, and two callouts, at a teacher's 1280x720 and a student's 390x844.
"""

from __future__ import annotations

import pytest

from lessons.indexing import presets as ix
from lessons.registry import all_callouts
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.test_browser import IDLE, SCRIPT_TIMEOUT_MS, assert_rendered, page_url

pytestmark = pytest.mark.e2e

VIEWPORTS = {"teacher": {"width": 1280, "height": 720}, "phone": {"width": 390, "height": 844}}


def wait_for_script(page) -> None:
    """Like test_browser's wait, but a phone's collapsed sidebar only has to exist, not show."""
    page.wait_for_selector("[data-testid='stSidebar']", state="attached", timeout=SCRIPT_TIMEOUT_MS)
    page.wait_for_selector("h1", timeout=SCRIPT_TIMEOUT_MS)
    for _ in range(2):
        page.wait_for_selector(IDLE, timeout=SCRIPT_TIMEOUT_MS)
        page.wait_for_timeout(500)


def _save_whole(page, name: str, width: int) -> None:
    """Streamlit scrolls inside its main block: grow the viewport to the content, same width."""
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=stMain]')]"
        ".map(e => e.scrollHeight), 800)"
    )
    page.set_viewport_size({"width": width, "height": min(int(height) + 40, 8000)})
    page.wait_for_timeout(300)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def choose(page, key: str, option_text: str) -> None:
    """Pick the option containing ``option_text`` in the selectbox with widget key ``key``."""
    box = page.locator(f".st-key-{key.replace('.', '-')} [role='combobox']")
    box.click()
    # Type to filter: on a phone the list shows only the options that fit on screen.
    box.fill(option_text)
    page.locator("[role='option']", has_text=option_text).first.click()
    wait_for_script(page)


@pytest.mark.parametrize("who", list(VIEWPORTS))
def test_indexing_y2_from_the_notes(server, browser, who):
    context = browser.new_context(viewport=VIEWPORTS[who])
    page = context.new_page()
    try:
        page.goto(page_url(server.url, "indexing"))
        wait_for_script(page)
        y2 = ix.PRESETS_BY_KEY["scatter_y2"]
        choose(page, "indexing.preset", y2.ref)
        assert_rendered(page, "indexing")
        main = page.locator("[data-testid='stMain']")
        text = main.inner_text()
        # The page cites the notes' line and says the traced result matches what they print.
        assert f"notes {y2.ref}" in text
        assert "Matches the documented output" in text
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"notes-indexing-y2-{who}.png"))
        _save_whole(page, f"notes-indexing-y2-{who}-full", VIEWPORTS[who]["width"])
    finally:
        context.close()


#: (page, callout key, how to reach it): two callouts from different pages, one English quote
#: (the notes copied old docs) and one Chinese.
CALLOUTS = [
    ("indexing", "gather_unique_rows", None),
    ("memory", "memory_pool_threshold", None),
]


@pytest.mark.parametrize(("slug", "key", "_"), CALLOUTS, ids=[c[1] for c in CALLOUTS])
@pytest.mark.parametrize("who", list(VIEWPORTS))
def test_callout_renders_quote_and_today(server, browser, who, slug, key, _):
    callout = {c.key: c for c in all_callouts()}[key]
    context = browser.new_context(viewport=VIEWPORTS[who])
    page = context.new_page()
    try:
        page.goto(page_url(server.url, slug))
        wait_for_script(page)
        box = page.locator(f".st-key-notes_callout-{key}")
        box.first.wait_for(timeout=SCRIPT_TIMEOUT_MS)
        box.first.scroll_into_view_if_needed()
        text = box.first.inner_text()
        assert "The notes say" in text and "does" in text, text
        # The quote is shown as it is in the notes, and today's sentence from the live run.
        assert callout.quote_display in text and callout.today_text in text, text
        SCREENSHOTS.mkdir(exist_ok=True)
        # A callout is taller than a phone's screen: grow the viewport (same width) so the
        # element shot holds the whole box, title included, instead of the scrolled part.
        _save_whole(page, f"notes-callout-{key}-{who}-page", VIEWPORTS[who]["width"])
        box.first.screenshot(path=str(SCREENSHOTS / f"notes-callout-{key}-{who}.png"))
    finally:
        context.close()
