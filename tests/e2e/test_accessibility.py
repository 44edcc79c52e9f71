"""axe-core on every page in its default state at 1280x720: no critical or serious violation.

axe-core runs inside the page through ``axe-playwright-python`` (its bundled axe.min.js; no
download). A violation that Streamlit itself produces and the app cannot fix is listed in
:data:`KNOWN_STREAMLIT`, keyed by rule id *and* a regex on the offending node's target selector,
with the upstream issue; only nodes matching both are left out. Everything else fails the test,
with the rule, the node count and the first targets in the message.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from lessons.registry import available_pages
from testing.servers import StreamlitServer, start_server, stop_server
from tests.e2e.layout_checks import DISABLED_MARK, serious_violations
from tests.e2e.test_browser import page_url
from tests.e2e.test_layout import PROJECTOR, wait_for_script

pytestmark = pytest.mark.e2e

PAGES = available_pages()

#: (axe rule id, regex on the node's target selector) -> the upstream Streamlit issue.
#: Keep each entry as narrow as the node Streamlit draws; never a whole rule.
KNOWN_STREAMLIT: dict[tuple[str, str], str] = {
    # A disabled widget's label: Streamlit greys it (#a0a0a0 on white, 2.6:1) since
    # streamlit/streamlit#4154; WCAG 1.4.3 sets no minimum for inactive components, but axe cannot
    # link Streamlit's label (a <p> in stWidgetLabel, no <label for>) to the disabled control
    # (dequelabs/axe-core#1731). Only labels inside a disabled widget match (DISABLED_MARK).
    ("color-contrast", r'\[data-testid="stWidgetLabel"\].*' + re.escape(DISABLED_MARK) + "$"): (
        "https://github.com/streamlit/streamlit/pull/4154, "
        "https://github.com/dequelabs/axe-core/issues/1731"
    ),
}


@pytest.fixture(scope="module")
def audit_server() -> Iterator[StreamlitServer]:
    running = start_server("accessibility")
    yield running
    stop_server(running)


@pytest.mark.parametrize("spec", PAGES, ids=[spec.slug for spec in PAGES])
def test_no_critical_or_serious_axe_violations(audit_server, browser, spec):
    context = browser.new_context(viewport=PROJECTOR)
    page = context.new_page()
    try:
        page.goto(page_url(audit_server.url, spec.slug))
        wait_for_script(page)
        page.wait_for_timeout(500)  # charts and images finish drawing after the script
        found = serious_violations(page, known=KNOWN_STREAMLIT)
    finally:
        context.close()
    report = "\n".join(
        f"- {v['impact']} {v['id']} ({v['help']}), {v['nodes']} node(s):\n    "
        + "\n    ".join(v["targets"])
        for v in found
    )
    assert not found, f"{spec.slug}: axe-core critical/serious violations:\n{report}"


def test_known_streamlit_entries_are_narrow():
    """Each exclusion names a rule and a target pattern (not '.*') and cites an upstream issue."""
    for (rule, pattern), upstream in KNOWN_STREAMLIT.items():
        assert rule and pattern.strip(".*^$") != "", f"{rule}: pattern {pattern!r} is not narrow"
        assert "streamlit" in upstream or upstream.startswith("#"), upstream


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_notes_quotes_carry_their_language(audit_server, browser, lang):
    """WCAG 3.1.2 (Language of Parts): the notes' Chinese words are marked lang="zh-CN" on either
    page, so a screen reader reads them with Chinese rules; an English visitor gets the English
    gloss beside them, a Chinese visitor does not; axe's language rules pass."""
    context = browser.new_context(viewport=PROJECTOR, locale="zh-CN" if lang == "zh" else "en-US")
    page = context.new_page()
    try:
        page.goto(page_url(audit_server.url, "memory") + f"?lang={lang}")
        wait_for_script(page)
        quotes = page.locator('blockquote.notes-quote[lang="zh-CN"]')
        assert quotes.count() >= 1, "no notes quote marked lang=zh-CN on /memory"
        assert "剩余的 1.5 MB" in " ".join(quotes.all_inner_texts())
        glosses = page.get_by_text("In English:", exact=False).count()
        assert (glosses >= 1) if lang == "en" else (glosses == 0), glosses
        found = serious_violations(page, known=KNOWN_STREAMLIT)
    finally:
        context.close()
    lang_rules = [v for v in found if v["id"] in ("valid-lang", "html-lang-valid")]
    assert not lang_rules, lang_rules
