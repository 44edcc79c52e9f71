"""Browser-side checks shared by the layout/accessibility tests and the page check script.

Each takes a Playwright ``page`` already showing a finished Streamlit run:

- :func:`main_figure` -> where the lesson's main figure starts and whether it shows data;
- :func:`truncated_texts` -> widget labels, tabs, metric labels and buttons cut by ellipsis;
- :func:`chart_font_sizes` -> the smallest text size drawn in any Plotly chart;
- :func:`serious_violations` -> axe-core's critical and serious violations, minus known
  Streamlit ones matched by rule id *and* target selector;
- :func:`wait_for_figure` -> waits until the main figure has drawn its data.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

from axe_playwright_python.sync_playwright import Axe

#: Elements of the main figure container that count as "the picture".
FIGURE_SELECTOR = (
    ".st-key-lesson-figure :is([data-testid='stPlotlyChart'], [data-testid='stImage'], "
    "[data-testid='stVegaLiteChart'], [data-testid='stArrowVegaLiteChart'])"
)

_FIGURE_JS = """(selector) => {
  const el = document.querySelector(selector);
  if (!el) return null;
  const box = el.getBoundingClientRect();
  const main = document.querySelector("[data-testid='stMain']");
  const scroll = main ? main.scrollTop : 0;
  let filled = false;
  const plot = el.querySelector('.js-plotly-plot');
  // Data arrays may be plain or typed arrays, Plotly 6's base64 {bdata, dtype} objects, or an
  // image trace's `source` data URI.
  const nonEmpty = v => !!v && ((v.length > 0) ||
                                 (typeof v.bdata === 'string' && v.bdata.length > 0));
  if (plot && plot.data) {
    filled = plot.data.some(t => ['x', 'y', 'z', 'values', 'source'].some(k => nonEmpty(t[k])));
  }
  const img = el.querySelector('img');
  if (img) filled = img.complete && img.naturalWidth > 0;
  return {top: box.top + scroll, height: box.height, filled: filled,
          kind: el.getAttribute('data-testid')};
}"""

_TRUNCATED_JS = """() => {
  // Streamlit 1.67's tabs are react-aria div[role=tab], not buttons.
  const selectors = [
    "[data-testid='stWidgetLabel']", "[role='tab']", "[data-testid='stMetricLabel']",
    "button[data-testid^='stBaseButton']", "[data-testid='stPageLink']",
  ];
  const out = [];
  for (const sel of selectors) {
    for (const root of document.querySelectorAll(sel)) {
      if (!root.offsetParent) continue;  // hidden (inactive tab, collapsed expander)
      for (const el of [root, ...root.querySelectorAll('*')]) {
        if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1 &&
            getComputedStyle(el).overflow !== 'visible') {
          out.push({selector: sel, text: root.innerText.trim().slice(0, 80),
                    scroll: el.scrollWidth, client: el.clientWidth});
          break;
        }
      }
    }
  }
  return out;
}"""

_FONT_JS = """() => {
  const sizes = [...document.querySelectorAll('.js-plotly-plot svg text')]
    .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0)
    .map(t => ({size: parseFloat(getComputedStyle(t).fontSize), text: t.textContent.trim()}));
  return sizes;
}"""


@dataclass(frozen=True)
class FigureBox:
    """The main figure's top (page px, from the top of the app), height, and whether it has data."""

    top: float
    height: float
    filled: bool
    kind: str


def main_figure(page) -> FigureBox | None:
    """The first picture inside the lesson's figure container, or ``None`` if there is none."""
    found = page.evaluate(_FIGURE_JS, FIGURE_SELECTOR)
    return None if found is None else FigureBox(**found)


def truncated_texts(page) -> list[dict]:
    """Visible labels, tabs, metric labels and buttons whose text is cut
    (``scrollWidth > clientWidth``)."""
    return page.evaluate(_TRUNCATED_JS)


def chart_font_sizes(page) -> list[dict]:
    """Every visible text drawn in a Plotly chart, with its computed font size in px."""
    return page.evaluate(_FONT_JS)


def wait_for_figure(page, timeout_s: float = 15.0) -> FigureBox | None:
    """Poll :func:`main_figure` until it exists and is filled (Plotly draws after the script
    finishes); returns the last answer, filled or not, after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    found = main_figure(page)
    while (found is None or not found.filled) and time.monotonic() < deadline:
        page.wait_for_timeout(250)
        found = main_figure(page)
    return found


#: Appended to a node's target when the node sits in a widget whose control is disabled
#: (WCAG 1.4.3 sets no contrast minimum for inactive components; axe cannot tell, see
#: dequelabs/axe-core#1731), so a known entry can match disabled widgets only.
DISABLED_MARK = " :in-disabled-widget"

_DISABLED_JS = """(selector) => {
  let el = null;
  try { el = document.querySelector(selector); } catch (e) { return false; }
  const box = el && el.closest("[data-testid='stElementContainer']");
  return !!(box && box.querySelector(":disabled, [aria-disabled='true']"));
}"""


def _describe(page, node: dict) -> str:
    """The node's target selector, plus :data:`DISABLED_MARK` if it is in a disabled widget."""
    target = ", ".join(map(str, node["target"]))
    if len(node["target"]) == 1 and page.evaluate(_DISABLED_JS, str(node["target"][0])):
        target += DISABLED_MARK
    return target


def _is_known(rule: str, target: str, known: Mapping[tuple[str, str], str]) -> bool:
    return any(rule == k_rule and re.search(pattern, target) for k_rule, pattern in known)


def serious_violations(
    page,
    *,
    ignore: dict[str, str] | None = None,
    known: Mapping[tuple[str, str], str] | None = None,
) -> list[dict]:
    """axe-core violations of impact critical or serious.

    ``known`` maps ``(rule id, regex on the node's target selector, with DISABLED_MARK appended
    for a node inside a disabled widget)`` to the upstream Streamlit
    issue that explains why the app cannot fix it: only the nodes matching both are left out (a
    violation whose nodes are all known disappears). ``ignore`` drops whole rule ids; prefer
    ``known``. Each result has the rule id, impact, help, the number of nodes and up to five
    targets with a piece of their HTML.
    """
    response = Axe().run(page).response
    skipped = ignore or {}
    known = known or {}
    out = []
    for v in response["violations"]:
        if v["impact"] not in ("critical", "serious") or v["id"] in skipped:
            continue
        nodes = [n for n in v["nodes"] if not _is_known(v["id"], _describe(page, n), known)]
        if not nodes:
            continue
        out.append({
            "id": v["id"], "impact": v["impact"], "help": v["help"], "nodes": len(nodes),
            "targets": [
                f"{', '.join(map(str, n['target']))}  <- {n['html'][:120]}" for n in nodes[:5]
            ],
        })  # fmt: skip
    return out
