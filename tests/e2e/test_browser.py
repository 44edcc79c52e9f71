"""End to end: every registered page in headless Chromium against a real `streamlit run` server."""

from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from lessons.registry import available_pages
from testing.servers import ARTIFACTS, start_server, stop_server
from tests.e2e.conftest import SCREENSHOTS

pytestmark = pytest.mark.e2e

PAGES = available_pages()
SCRIPT_TIMEOUT_MS = 180_000
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"


def page_url(base: str, slug: str) -> str:
    return base + "/" if slug == "home" else f"{base}/{slug}"


def wait_for_script(page) -> None:
    """Wait until the app frame exists and the script has finished (twice, to ride over reruns)."""
    page.wait_for_selector("[data-testid='stSidebar']", timeout=SCRIPT_TIMEOUT_MS)
    page.wait_for_selector("h1", timeout=SCRIPT_TIMEOUT_MS)
    for _ in range(2):
        page.wait_for_selector(IDLE, timeout=SCRIPT_TIMEOUT_MS)
        page.wait_for_timeout(500)


def assert_rendered(page, slug: str) -> None:
    exceptions = page.locator("[data-testid='stException']")
    assert exceptions.count() == 0, f"{slug}: exception box shown:\n{exceptions.first.inner_text()}"
    assert page.locator("h1").first.is_visible(), f"{slug}: page title not visible"


def save_whole_page(page, name: str) -> None:
    """Streamlit scrolls inside its main block, so grow the viewport to the content first."""
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=stMain], section.main')]"
        ".map(e => e.scrollHeight), 800)"
    )
    page.set_viewport_size({"width": 1400, "height": min(int(height) + 40, 8000)})
    page.wait_for_timeout(300)
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("spec", PAGES, ids=[spec.slug for spec in PAGES])
def test_page_renders(server, page, spec):
    page.goto(page_url(server.url, spec.slug))
    wait_for_script(page)
    assert_rendered(page, spec.slug)
    save_whole_page(page, spec.slug)


@pytest.mark.parametrize("spec", PAGES, ids=[spec.slug for spec in PAGES])
def test_deep_link_on_cold_server(page, spec):
    """A freshly started server must route a deep link through st.navigation, not legacy pages/."""
    cold = start_server(f"cold-{spec.slug}")
    try:
        started = time.monotonic()
        page.goto(page_url(cold.url, spec.slug))
        wait_for_script(page)
        elapsed = time.monotonic() - started
        assert_rendered(page, spec.slug)
        # The shared sidebar (our device selector) only exists when app.py's router ran.
        assert page.locator(".st-key-sidebar-device").count() == 1, "shared sidebar missing"
        if len(PAGES) > 1:  # Streamlit hides the navigation menu when there is only one page
            nav_labels = page.locator("[data-testid='stSidebarNav']").inner_text()
            assert spec.title in nav_labels, f"navigation lacks {spec.title!r}: {nav_labels!r}"
        with (ARTIFACTS / "cold-start-times.txt").open("a") as out:
            out.write(f"{spec.slug}\t{elapsed:.1f} s to a finished first render\n")
    finally:
        stop_server(cold)


def _png_bytes(width: int, height: int) -> bytes:
    ramp = np.linspace(0, 255, width, dtype=np.uint8)
    rgb = np.stack([np.tile(ramp, (height, 1))] * 3, axis=-1)
    rgb[..., 2] = 255 - rgb[..., 2]
    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format="PNG")
    return buffer.getvalue()


def upload_home_png(page, tmp_path: Path) -> None:
    """On the open Home page: switch the image input to Upload, choose a 173x91 PNG through the
    file chooser, and check it was decoded and drawn."""
    png = tmp_path / "ramp.png"
    png.write_bytes(_png_bytes(173, 91))
    page.locator(".st-key-home-image-source").get_by_text("Upload a file").click()
    wait_for_script(page)
    page.locator(".st-key-home-image-upload input[type='file']").set_input_files(str(png))
    page.wait_for_selector("text=173x91 RGB", timeout=SCRIPT_TIMEOUT_MS)
    wait_for_script(page)
    assert_rendered(page, "home after an upload")
    assert page.locator("[data-testid='stImage'] img").first.is_visible()


def test_upload_png_through_file_chooser(server, page, tmp_path):
    page.goto(page_url(server.url, "home"))
    wait_for_script(page)
    upload_home_png(page, tmp_path)
    save_whole_page(page, "home-upload")


LIVE_POINTS_JS = """() => {
  const plot = document.querySelector("[class*='st-key-memory-live_chart'] .js-plotly-plot");
  return plot && plot.data ? Math.max(...plot.data.map(t => (t.x || []).length)) : -1;
}"""


def test_memory_live_chart_updates(server, page):
    """The live chart's fragment reruns on its own (run_every): the plotted history grows."""
    if "memory" not in [spec.slug for spec in PAGES]:
        pytest.skip("memory page not registered")
    page.goto(page_url(server.url, "memory"))
    wait_for_script(page)
    page.wait_for_function(f"({LIVE_POINTS_JS})() > 0", timeout=SCRIPT_TIMEOUT_MS)
    # On the simulated GPU "Live" is off by default: no timer reruns, the history stands still
    idle = page.evaluate(LIVE_POINTS_JS)
    page.wait_for_timeout(2_500)
    assert page.evaluate(LIVE_POINTS_JS) == idle
    page.get_by_text("Live chart settings").click()
    page.locator(".st-key-memory-live label").first.click()
    wait_for_script(page)
    first = page.evaluate(LIVE_POINTS_JS)
    counts = [first]
    for _ in range(2):  # two further refreshes at the default 1 s interval
        page.wait_for_function(
            f"({LIVE_POINTS_JS})() > {counts[-1]}", timeout=30_000
        )
        counts.append(page.evaluate(LIVE_POINTS_JS))
    assert counts[2] > counts[1] > counts[0], counts
    assert_rendered(page, "memory")

    # A hidden tab stops costing the server: no fragment reruns while hidden, back when shown.
    set_tab_hidden(page, True)
    page.wait_for_timeout(1_500)  # the rerun that drops the timer, and one in flight
    hidden_at = page.evaluate(LIVE_POINTS_JS)
    page.wait_for_timeout(3_000)
    assert page.evaluate(LIVE_POINTS_JS) == hidden_at, "the chart kept refreshing while hidden"
    set_tab_hidden(page, False)
    page.wait_for_function(f"({LIVE_POINTS_JS})() > {hidden_at}", timeout=30_000)


def set_tab_hidden(page, hidden: bool) -> None:
    """What the browser does when a tab goes to the background (or comes back): the Page
    Visibility API's document.hidden changes and 'visibilitychange' fires."""
    page.evaluate(
        """hidden => {
          Object.defineProperty(document, "hidden", {value: hidden, configurable: true});
          Object.defineProperty(document, "visibilityState",
                                {value: hidden ? "hidden" : "visible", configurable: true});
          document.dispatchEvent(new Event("visibilitychange"));
        }""",
        hidden,
    )
