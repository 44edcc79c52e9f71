"""Browser-side checks shared by the layout/accessibility tests and the page check script.

Each takes a Playwright ``page`` already showing a finished Streamlit run:

- :func:`main_figure` -> where the lesson's main figure starts and whether it shows data;
- :func:`truncated_texts` -> widget labels, tabs, metric labels and buttons cut by ellipsis;
- :func:`chart_font_sizes` -> the smallest text size drawn in any Plotly chart;
- :func:`serious_violations` -> axe-core's critical and serious violations.
"""

from __future__ import annotations

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
  if (plot && plot.data) {
    filled = plot.data.some(t => ['x', 'y', 'z', 'values'].some(
      k => t[k] && (t[k].length > 0)));
  }
  const img = el.querySelector('img');
  if (img) filled = img.complete && img.naturalWidth > 0;
  return {top: box.top + scroll, height: box.height, filled: filled,
          kind: el.getAttribute('data-testid')};
}"""

_TRUNCATED_JS = """() => {
  const selectors = [
    "[data-testid='stWidgetLabel']", "button[role='tab']", "[data-testid='stMetricLabel']",
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


def serious_violations(page, *, ignore: dict[str, str] | None = None) -> list[dict]:
    """axe-core violations of impact critical or serious, minus rule ids in ``ignore``.

    ``ignore`` maps a rule id to the reason (an upstream Streamlit issue) it cannot be fixed here.
    """
    response = Axe().run(page).response
    skipped = ignore or {}
    return [
        {"id": v["id"], "impact": v["impact"], "help": v["help"],
         "targets": [", ".join(n["target"]) for n in v["nodes"]][:5]}
        for v in response["violations"]
        if v["impact"] in ("critical", "serious") and v["id"] not in skipped
    ]
