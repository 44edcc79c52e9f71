"""The error doctor in a real browser: paste a traceback, see its entry; open an entry's link cold.

Run against the shared server; screenshots go to ``screenshots/`` (a teacher's 1280x720 and a
student's phone), to be looked at.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from lessons.errors.catalogue import entry_by_key
from lessons.errors.view import ENTRY, QUERY, TOP_KEY
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.test_browser import assert_rendered, page_url
from tests.e2e.test_notes_screens import wait_for_script

pytestmark = pytest.mark.e2e

TEACHER = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/home/ana/gan/train.py", line 88, in <module>\n'
    "    loss = F.cross_entropy(logits, labels)\n"
    '  File "/opt/conda/lib/python3.11/site-packages/torch/nn/functional.py", line 3494, in '
    "cross_entropy\n"
    "    return torch._C._nn.cross_entropy_loss(\n"
    "IndexError: Target 12 is out of bounds.\n"
)


def _top(page):
    return page.locator(f".st-key-{TOP_KEY}")


def test_paste_a_traceback_and_see_its_entry(browser, server):
    context = browser.new_context(viewport=TEACHER)
    page = context.new_page()
    page.goto(page_url(server.url, "errors"))
    wait_for_script(page)
    box = page.locator(f".st-key-{QUERY.replace('.', '-')} textarea")
    box.fill(TRACEBACK)
    box.press("Control+Enter")  # Streamlit's "apply" for a text area
    wait_for_script(page)
    assert_rendered(page, "errors")
    top = _top(page)
    top.wait_for()
    text = top.inner_text()
    assert "device-side assert" in text.lower() or "Target" in text, text[:400]
    assert entry_by_key("device-side-assert").today in text  # its own program, run just now
    assert QUERY in page.url  # the pasted text is in the link
    page.screenshot(path=str(SCREENSHOTS / "errors-teacher-pasted.png"))
    context.close()


def test_an_entry_link_opens_cold_on_a_phone(browser, server):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(page_url(server.url, "errors") + "?" + urlencode({QUERY: "", ENTRY: "batch-of-one"}))
    wait_for_script(page)
    assert_rendered(page, "errors")
    text = _top(page).inner_text()
    assert "Expected more than 1 value per channel when training" in text
    assert "it runs. It printed:" in text  # the fixed program, run live
    width = page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollWidth")
    assert width <= PHONE["width"], f"the page is {width} px wide on a {PHONE['width']} px phone"
    page.screenshot(path=str(SCREENSHOTS / "errors-phone-entry.png"), full_page=True)
    context.close()


def test_pasted_markup_is_shown_as_text(browser, server):
    context = browser.new_context(viewport=TEACHER)
    page = context.new_page()
    hostile = ("<img src=x onerror=alert(1)> **RuntimeError**: Trying to backward through the "
               "graph a second time")  # fmt: skip
    page.goto(page_url(server.url, "errors") + "?" + urlencode({QUERY: hostile}))
    wait_for_script(page)
    assert_rendered(page, "errors")
    assert page.locator("img[src='x']").count() == 0
    assert "<img src=x onerror=alert(1)>" in _top(page).inner_text()
    context.close()
