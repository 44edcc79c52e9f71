"""中文 / English in a real browser: every page cold in Chinese (by link and by browser language)
while another visitor sees English at the same time, with screenshots.

A page whose translation is done (tests/app/test_i18n.TRANSLATED) must show a Chinese title and
a Chinese axis or chart title; every page must show the Chinese sidebar. Screenshots
go to screenshots/lang-<slug>-zh-*.png (teacher at 1280x720 and a phone).
"""

from __future__ import annotations

import re

import pytest

from tests.app.test_i18n import SLUGS, TRANSLATED
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.test_browser import assert_rendered, page_url
from tests.e2e.test_notes_screens import wait_for_script

pytestmark = pytest.mark.e2e

CJK = re.compile(r"[\u4e00-\u9fff]")
TEACHER = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}


def _open(browser, url: str, *, locale: str, viewport=TEACHER):
    context = browser.new_context(viewport=viewport, locale=locale)
    page = context.new_page()
    page.goto(url)
    wait_for_script(page)
    # The sanity check's cost is estimated from this server's measured time per image: on a
    # busy machine it can pass the heavy-work budget, and the page then asks for a click.
    ask = page.locator(".st-key-saliency-sanity-run button")
    if ask.count():
        ask.first.click()
        wait_for_script(page)
    return context, page


def _sidebar_headings(page) -> list[str]:
    """The sidebar's first two section headings: Class, then Settings."""
    headings = page.locator("[data-testid='stSidebar'] h3").all_inner_texts()
    return [text.strip() for text in headings[:2]]


#: A view of the page that has a chart (saliency shows images until its sanity check runs).
CHART_VIEW = {"saliency": "saliency.sanity=true"}
_CHART_TEXTS = ", ".join(
    f".js-plotly-plot {part}" for part in (".xtitle", ".ytitle", ".gtitle", ".annotation-text")
)


#: Pages whose charts are titled only with tensor names (input, index, out: code, kept): their
#: charts' text alternatives (aria-label) are checked instead.
NAMES_ONLY = ("indexing",)


def _chart_titles(page, slug: str) -> list[str]:
    """The axis, chart and subplot titles of the page's plotly charts (SVG text: textContent,
    not innerText), or for :data:`NAMES_ONLY` pages each chart's aria-label."""
    if slug in NAMES_ONLY:
        charts = page.locator("[data-testid='stPlotlyChart']").all()
        titles = [chart.get_attribute("aria-label") for chart in charts]
    else:
        titles = page.locator(_CHART_TEXTS).all_text_contents()
    return [title.strip() for title in titles if title and title.strip()]


def _check_chinese(page, slug: str) -> None:
    assert_rendered(page, slug)
    assert _sidebar_headings(page) == ["课堂", "设置"]
    if slug in TRANSLATED:
        # the page's title: its heading (Home's is the product's name, kept) and the tab's
        heading = page.locator("h1" if slug != "home" else "h2").first.inner_text()
        assert CJK.search(heading), f"the page title is not Chinese: {heading!r}"
        assert CJK.search(page.title()), f"the tab's title is not Chinese: {page.title()!r}"
        titles = _chart_titles(page, slug)
        if slug != "home":  # Home has tables, no chart
            assert any(CJK.search(title) for title in titles), f"no Chinese chart title: {titles}"


@pytest.mark.parametrize("slug", SLUGS)
def test_every_page_in_chinese_while_another_visitor_reads_english(server, browser, slug):
    url = page_url(server.url, slug) + (f"?{CHART_VIEW[slug]}" if slug in CHART_VIEW else "")
    joiner = "&" if "?" in url else "?"
    by_link, zh_page = _open(browser, f"{url}{joiner}lang=zh", locale="en-US")
    by_browser, browser_page = _open(browser, url, locale="zh-CN")
    english, en_page = _open(browser, url, locale="en-US")
    try:
        _check_chinese(zh_page, slug)
        _check_chinese(browser_page, slug)
        assert "lang=" not in browser_page.url, "a language from the browser is not in the URL"
        assert_rendered(en_page, slug)
        assert _sidebar_headings(en_page) == ["Class", "Settings"]
        assert not CJK.search(en_page.locator("h1").first.inner_text())
        SCREENSHOTS.mkdir(exist_ok=True)
        zh_page.screenshot(path=str(SCREENSHOTS / f"lang-{slug}-zh-1280x720.png"))
        zh_page.set_viewport_size(PHONE)
        zh_page.wait_for_timeout(500)
        zh_page.screenshot(path=str(SCREENSHOTS / f"lang-{slug}-zh-phone.png"), full_page=True)
    finally:
        for context in (by_link, by_browser, english):
            context.close()


def test_the_language_switch_keeps_the_view(server, browser):
    """Switching to 中文 in the sidebar keeps the controls and the computed number, and puts
    ?lang=zh into the URL (so "Link to this view" carries it)."""
    context, page = _open(browser, page_url(server.url, "warp") + "?warp.angle=45", locale="en-US")
    try:
        before = page.locator("[data-testid='stMetricValue']").first.inner_text()
        page.locator(".st-key-lang").get_by_text("中文", exact=True).click()
        wait_for_script(page)
        assert _sidebar_headings(page) == ["课堂", "设置"]
        assert "lang=zh" in page.url and "warp.angle=45" in page.url
        assert page.locator("[data-testid='stMetricValue']").first.inner_text() == before
    finally:
        context.close()
