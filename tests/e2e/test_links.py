"""Lesson links in a real browser: a view set through the UI is a URL that reproduces it.

For every page: set three controls the way a teacher would (click, keys, pick an option), read a
number the real operation computed and the URL, then open that URL in a new browser context on
a freshly started server (a student's first visit) and assert the same number. Then every
ready-made lesson link (lessons/<slug>/links.py) is opened cold and must show the number it is
about.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from lessons.registry import lesson_links
from testing.servers import start_server, stop_server
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.test_browser import assert_rendered, page_url
from tests.e2e.test_notes_screens import choose, wait_for_script
from ui.links import MAX_LINK_CHARS

LESSON_LINKS = lesson_links()

pytestmark = pytest.mark.e2e

TEACHER = {"width": 1280, "height": 720}
TOAST = "[data-testid='stToast']"


def _key(key: str) -> str:
    return f".st-key-{key.replace('.', '-')}"


def click_label(page, key: str, label: str) -> None:
    """Click the radio option (or toggle, checkbox) labelled ``label`` inside control ``key``."""
    page.locator(_key(key)).get_by_text(label, exact=True).first.click()
    wait_for_script(page)


def press_slider(page, key: str, key_name: str, times: int) -> None:
    """Move slider ``key`` with the keyboard, as a user tabbing through the page would."""
    handle = page.locator(f"{_key(key)} input[type='range']").first
    handle.focus()
    for _ in range(times):
        handle.press(key_name)
    page.wait_for_timeout(300)
    wait_for_script(page)


def type_number(page, key: str, value: str) -> None:
    """Type ``value`` into number input ``key`` and press Enter."""
    box = page.locator(f"{_key(key)} input").first
    box.fill(value)
    box.press("Enter")
    wait_for_script(page)


def click_tab(page, label: str) -> None:
    page.get_by_role("tab", name=label).first.click()
    wait_for_script(page)


def metric_value(page, label: str) -> str:
    exact = re.compile(f"^{re.escape(label)}$")
    metric = page.locator("[data-testid='stMetric']").filter(
        has=page.locator("[data-testid='stMetricLabel']", has_text=exact)
    )
    return metric.first.locator("[data-testid='stMetricValue']").inner_text().strip()


#: How long a value may take to appear once the script is idle (a busy 2-core CI machine draws
#: a page's later parts a few seconds after the run that computed them).
MATCH_WAIT_MS = 15_000


def main_match(page, pattern: str) -> str:
    for _ in range(MATCH_WAIT_MS // 250):
        found = re.search(pattern, page.locator("[data-testid='stMain']").inner_text())
        if found:
            return found.group(1)
        page.wait_for_timeout(250)
    raise AssertionError(f"{pattern!r} not on the page after {MATCH_WAIT_MS} ms")


@dataclass(frozen=True)
class ViewCheck:
    """Three controls set through the UI, and the computed number that must come back."""

    slug: str
    set_controls: Callable
    read_number: Callable
    name: str = ""  # the test id, where one page has two views

    @property
    def id(self) -> str:
        return self.name or self.slug


def _warp(page) -> None:
    click_label(page, "warp.notes", "Notes' theta")
    press_slider(page, "warp.scale", "ArrowRight", 6)
    choose(page, "warp.mode", "bicubic")


def _batchnorm(page) -> None:
    type_number(page, "batchnorm.steps", "10")
    type_number(page, "batchnorm.momentum", "0.3")
    choose(page, "batchnorm.channel", "1")


def _memory(page) -> None:
    click_label(page, "memory.sim_total", "8 GB")
    choose(page, "memory.scenario", "Fragmentation OOM and retry")
    page.locator(f"{_key('memory.run_scenario')} button").click()
    wait_for_script(page)
    click_tab(page, "Fragmentation")


def _saliency(page) -> None:
    choose(page, "saliency.method", "Gradient x input")
    click_label(page, "saliency.target_mode", "Any class")
    choose(page, "saliency.target_class", "292: tiger")


def _home(page) -> None:
    type_number(page, "sidebar.seed", "7")
    click_label(page, "sidebar.cudnn_deterministic", "cuDNN deterministic")
    choose(page, "home.image.sample", "coffee.png")


def _home_numbers(page) -> tuple[str, str]:
    """The chosen image's size as decoded, and cuDNN's flag as torch reports it now."""
    return (
        main_match(page, r"(\d+x\d+ RGB)"),
        main_match(page, r"Read now: (deterministic = \w+)"),
    )


def _indexing(page) -> None:
    choose(page, "indexing.preset", "y2: the same x")
    choose(page, "indexing.reduce", "prod")
    click_label(page, "indexing.include_self", "include_self")


def _flow(page) -> None:
    choose(page, "flow.mask", "Stripes")
    press_slider(page, "flow.hole_size", "ArrowRight", 28)
    press_slider(page, "flow.max_window", "ArrowLeft", 2)


def _flow_summary(page) -> str:
    return page.locator(_key("flow.windows_summary")).inner_text().strip()


def _flow_stereo(page) -> None:
    """A control the page suggests from another one: picking the stereo pair suggests the
    forward-backward mask; the visitor puts random pixels back and moves the fraction. A cold
    open of the link must not apply the suggestion again over what the link says."""
    choose(page, "flow.source", "Motorcycle stereo pair")
    choose(page, "flow.mask", "Random pixels")
    press_slider(page, "flow.fraction", "ArrowRight", 3)


def _flow_stereo_view(page) -> tuple[str, str, str]:
    return (
        _flow_summary(page),
        page.locator(_key("flow.source")).inner_text().strip(),
        page.locator(_key("flow.mask")).inner_text().strip(),
    )


VIEWS = [
    ViewCheck("home", _home, _home_numbers),
    ViewCheck("indexing", _indexing, lambda page: main_match(page, r"(out\[0\]\[0\] = [^\n]+)")),
    ViewCheck("flow", _flow, _flow_summary),
    ViewCheck("flow", _flow_stereo, _flow_stereo_view, name="flow-dependent-controls"),
    ViewCheck("batchnorm", _batchnorm, lambda page: metric_value(page, "eval() mean")),
    ViewCheck("warp", _warp, lambda page: metric_value(page, "Interior mean |Δ|")),
    ViewCheck("memory", _memory, lambda page: metric_value(page, "reserved")),
    ViewCheck(
        "saliency",
        _saliency,
        lambda page: main_match(page, r"they hold ([\d.]+% of the total saliency)"),
    ),
]


def _open(browser, url: str):
    context = browser.new_context(viewport=TEACHER)
    page = context.new_page()
    page.goto(url)
    wait_for_script(page)
    return context, page


@pytest.mark.parametrize("view", VIEWS, ids=[view.id for view in VIEWS])
def test_a_view_set_through_the_ui_reopens_on_a_fresh_server(server, browser, view):
    context, page = _open(browser, page_url(server.url, view.slug))
    try:
        default_number = view.read_number(page)
        view.set_controls(page)
        assert_rendered(page, view.slug)
        number = view.read_number(page)
        assert number != default_number, "the three controls did not change the computed number"
        url = page.url
        assert "?" in url and len(url) <= MAX_LINK_CHARS, url
        shown = page.locator("[data-testid='stSidebar'] [data-testid='stCode']").last.inner_text()
        assert shown.strip() == url, "the sidebar's link is not the page's URL"
    finally:
        context.close()
    fresh = start_server(f"link-{view.id}")
    try:
        context, page = _open(browser, url.replace(server.url, fresh.url))
        try:
            assert_rendered(page, view.slug)
            assert page.locator(TOAST).count() == 0, "a whole link showed a notice"
            assert view.read_number(page) == number
            SCREENSHOTS.mkdir(exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / f"link-{view.id}.png"))
        finally:
            context.close()
    finally:
        stop_server(fresh)


@pytest.fixture(scope="module")
def lesson_server():
    """A server no test has warmed: each lesson is a first visit."""
    running = start_server("lessons")
    yield running
    stop_server(running)


@pytest.mark.parametrize(
    "lesson", LESSON_LINKS, ids=[f"{n}-{lesson.slug}" for n, lesson in enumerate(LESSON_LINKS)]
)
def test_every_lesson_link_opens_cold_on_its_point(lesson_server, browser, lesson):
    context, page = _open(browser, lesson_server.url + lesson.path)
    try:
        assert_rendered(page, lesson.slug)
        assert page.locator(TOAST).count() == 0, page.locator(TOAST).first.inner_text()
        text = " ".join(page.locator("[data-testid='stMain']").inner_text().split())
        assert lesson.shows in text, f"{lesson.shows!r} not shown by {lesson.path}"
    finally:
        context.close()


def test_home_lists_every_lesson_as_a_link(server, browser):
    context, page = _open(browser, page_url(server.url, "home"))
    try:
        for lesson in LESSON_LINKS:
            link = page.get_by_role("link", name=lesson.title, exact=True)
            assert link.count() == 1, lesson.title
            assert link.get_attribute("href") == f"{lesson.slug}?{lesson.query}"
    finally:
        context.close()


def test_a_page_switch_carries_no_values_into_the_next_page(server, browser):
    """Parameter names are per page, and the query string goes with its page: after the
    navigation to another page the URL holds none of the first page's values."""
    context, page = _open(browser, page_url(server.url, "warp") + "?warp.angle=45&sidebar.seed=3")
    try:
        assert "warp.angle=45" in page.url
        page.locator("[data-testid='stSidebarNav'] a", has_text="BatchNorm").first.click()
        wait_for_script(page)
        assert "/batchnorm" in page.url and "warp.angle" not in page.url, page.url
        assert page.locator(f"{_key('sidebar.seed')} input").first.input_value() == "3"
    finally:
        context.close()
