"""Fixtures for the browser suite: a real `streamlit run` server and headless Debian Chromium.

The server, browser and nginx helpers live in ``testing/`` (the benchmarks use them too); this
file holds the fixtures and where the suite's screenshots go.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testing.browser import launch_options
from testing.servers import ROOT, StreamlitServer, start_server, stop_server

SCREENSHOTS = ROOT / "screenshots"


def installed(find_tool) -> object:
    """``find_tool()``, or this test failed with its install hint when the tool is missing."""
    try:
        return find_tool()
    except FileNotFoundError as missing:
        pytest.fail(str(missing))


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    options = installed(launch_options)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**options)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def server() -> Iterator[StreamlitServer]:
    """One warm server shared by the page-by-page tests."""
    running = start_server("shared")
    yield running
    stop_server(running)


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()
