"""How long the app takes to settle after a control changes, in a real browser.

Run: python benchmarks/interaction.py [--pages flow saliency] [--sessions 5] [--url URL]

Starts one ``streamlit run app.py`` of its own (or uses ``--url``), drives headless Chromium (the
system's, as the browser tests do) and prints two tables:

1. **Concurrent sessions** (run first, so the caches are cold): ``--sessions`` browser contexts
   open the page, then all press its heaviest control at once (saliency: the SmoothGrad method;
   flow: the largest size); each session's settle time is printed.
2. **Page by page**: every page is opened in a fresh context (load time printed) and driven
   through its main controls, one at a time; median and max settle time per page.

Settle time: from just before the action to ``[data-test-script-state='notRunning']`` on the
app after a rerun started (read from a MutationObserver's log with the page's own clock). A rerun
chained within 300 ms (``st.rerun``, a fragment) is waited for too. Controls are found by widget
key (``.st-key-<key>``); a control that is not on the page is printed as "missing" and skipped,
one in a closed tab or expander is revealed first. Nothing is asserted: timings depend on the
machine and its load (the load average is printed before and after).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import (  # noqa: E402
    CHROMIUM_FLAGS,
    chromium_path,
    start_server,
    stop_server,
)
from ui.registry import available_pages  # noqa: E402

IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
LOAD_TIMEOUT_MS = 240_000
QUIET_MS = 300
START_TIMEOUT_MS = 5_000  # no rerun started within this: the action changed nothing

#: (widget key, action, argument). Actions: "select" (argument: option index or text),
#: "slider" (a key to press on the thumb), "toggle", "radio" (option index or text), "button",
#: "number" / "text" (a value typed, then Enter). Pairs put a control back to its default.
Action = tuple[str, str, object]
PLANS: dict[str, list[Action]] = {
    "home": [
        ("sidebar.cudnn_deterministic", "toggle", None),
        ("sidebar.cudnn_deterministic", "toggle", None),
        ("sidebar.seed", "number", "1"),
        ("sidebar.seed", "number", "0"),
    ],
    "indexing": [
        ("indexing.op", "select", "scatter"),
        ("indexing.reduce", "select", 1),
        ("indexing.reduce", "select", 0),
        ("indexing.op", "select", "gather"),
        ("indexing.random", "button", None),
        ("indexing.reload", "button", None),
        ("indexing.preset", "select", 1),
        ("indexing.preset", "select", 0),
        ("indexing.index_preset", "select", 1),
        ("indexing.index_preset", "select", 0),
    ],
    "batchnorm": [
        ("batchnorm.train", "button", None),
        ("batchnorm.step", "button", None),
        ("batchnorm.momentum", "slider", "ArrowRight"),
        ("batchnorm.momentum", "slider", "ArrowLeft"),
        ("batchnorm.track", "toggle", None),
        ("batchnorm.track", "toggle", None),
        ("batchnorm.affine", "toggle", None),
        ("batchnorm.affine", "toggle", None),
        ("batchnorm.layout", "radio", 0),
        ("batchnorm.layout", "radio", 2),
        ("batchnorm.channel", "select", 1),
        ("batchnorm.channel", "select", 0),
        ("batchnorm.reset", "button", None),
    ],
    "warp": [
        ("warp.angle", "slider", "ArrowRight"),
        ("warp.angle", "slider", "ArrowLeft"),
        ("warp.scale", "slider", "ArrowRight"),
        ("warp.scale", "slider", "ArrowLeft"),
        ("warp.shear_x", "slider", "ArrowRight"),
        ("warp.shear_x", "slider", "ArrowLeft"),
        ("warp.mode", "select", 1),
        ("warp.mode", "select", 0),
        ("warp.padding", "select", 1),
        ("warp.padding", "select", 0),
        ("warp.align_corners", "toggle", None),
        ("warp.align_corners", "toggle", None),
        ("warp.notes", "toggle", None),
        ("warp.notes", "toggle", None),
    ],
    "saliency": [
        ("saliency.alpha", "slider", "ArrowRight"),
        ("saliency.alpha", "slider", "ArrowLeft"),
        ("saliency.colormap", "select", 1),
        ("saliency.colormap", "select", 0),
        ("saliency.percentile", "slider", "ArrowLeft"),
        ("saliency.percentile", "slider", "ArrowRight"),
        ("saliency.objective", "radio", 1),
        ("saliency.objective", "radio", 0),
        ("saliency.reduce", "radio", 1),
        ("saliency.reduce", "radio", 0),
        ("saliency.target_mode", "radio", 1),
        ("saliency.target_mode", "radio", 0),
        ("saliency.method", "select", "SmoothGrad"),
        ("saliency.method", "select", 0),
    ],
    "flow": [
        ("flow.field", "select", 0),
        ("flow.field", "select", 1),
        ("flow.noise", "slider", "ArrowRight"),
        ("flow.noise", "slider", "ArrowLeft"),
        ("flow.mask", "select", 1),
        ("flow.mask", "select", 0),
        ("flow.fraction", "slider", "ArrowRight"),
        ("flow.fraction", "slider", "ArrowLeft"),
        ("flow.max_window", "slider", "ArrowLeft"),
        ("flow.max_window", "slider", "ArrowRight"),
        ("flow.per_scale", "toggle", None),
        ("flow.per_scale", "toggle", None),
        ("flow.notes", "toggle", None),
        ("flow.notes", "toggle", None),
    ],
    "memory": [
        ("memory.scenario", "select", 1),
        ("memory.run_scenario", "button", None),
        ("memory.scenario", "select", 0),
        ("memory.run_scenario", "button", None),
        ("memory.allocate", "button", None),
        ("memory.free_all", "button", None),
        ("memory.sim_total", "radio", 0),
        ("memory.sim_total", "radio", 1),
        ("memory.live", "toggle", None),
        ("memory.live", "toggle", None),
    ],
}

#: The heaviest control of a page, pressed by every concurrent session at once.
HEAVIEST: dict[str, Action] = {
    "saliency": ("saliency.method", "select", "SmoothGrad"),
    "flow": ("flow.size", "select", "720"),
}

_RUNLOG_SCRIPT = """
window.__runlog = [];
new MutationObserver((records) => {
  for (const r of records) {
    if (r.target.getAttribute && r.target.getAttribute('data-testid') === 'stApp') {
      window.__runlog.push([performance.now(), r.target.getAttribute('data-test-script-state')]);
    }
  }
}).observe(document, {attributes: true, subtree: true,
                      attributeFilter: ['data-test-script-state']});
"""

# Index of the first run that started at or after t0, or -1.
_RUN_STARTED = """([t0]) => {
  const log = window.__runlog || [];
  return log.findIndex(e => e[0] >= t0 && e[1] !== 'notRunning');
}"""
# Time of the first 'notRunning' after entry i, or null.
_RUN_ENDED = """([i]) => {
  const log = window.__runlog || [];
  for (let j = i + 1; j < log.length; j++) if (log[j][1] === 'notRunning') return log[j][0];
  return null;
}"""

_REVEAL = """(el) => {
  const panel = el.closest("[role='tabpanel']");
  if (panel && panel.getAttribute('aria-labelledby')) {
    const tab = document.getElementById(panel.getAttribute('aria-labelledby'));
    if (tab) tab.click();
  } else if (panel) {  // the panel's index among its siblings is its tab's
    const tabs = panel.closest("[data-testid='stTabs']")?.querySelectorAll("button[role='tab']");
    const panels = [...panel.parentElement.children]
      .filter(c => c.getAttribute('role') === 'tabpanel');
    const i = panels.indexOf(panel);
    if (tabs && tabs[i]) tabs[i].click();
  }
  const details = el.closest('details');
  if (details && !details.open) details.querySelector('summary')?.click();
}"""


@dataclass
class Outcome:
    """One action's result: a settle time in seconds, or why there is none."""

    label: str
    seconds: float | None = None
    note: str = ""


@dataclass
class PageReport:
    slug: str
    load_s: float
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def times(self) -> list[float]:
        return [o.seconds for o in self.outcomes if o.seconds is not None]


def selector(key: str) -> str:
    """Streamlit's class for a widget key: every character outside [A-Za-z0-9_-] becomes '-'."""
    return ".st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key.strip())


def page_url(base: str, slug: str) -> str:
    return base + "/" if slug == "home" else f"{base}/{slug}"


async def wait_ready(page) -> None:
    await page.wait_for_selector("[data-testid='stSidebar']", state="attached",
                                 timeout=LOAD_TIMEOUT_MS)  # fmt: skip
    await page.wait_for_selector("h1", timeout=LOAD_TIMEOUT_MS)
    for _ in range(2):
        await page.wait_for_selector(IDLE, timeout=LOAD_TIMEOUT_MS)
        await page.wait_for_timeout(400)


async def open_page(context, base: str, slug: str):
    page = await context.new_page()
    started = time.monotonic()
    await page.goto(page_url(base, slug))
    await wait_ready(page)
    return page, time.monotonic() - started


async def locate(page, key: str):
    """The control's locator and None, or None and why it cannot be used."""
    root = page.locator(selector(key))
    if await root.count() == 0:
        return None, "missing"
    root = root.first
    if not await root.is_visible():
        await root.evaluate(_REVEAL)
        await page.wait_for_timeout(300)
        if not await root.is_visible():
            return None, "hidden"
    return root, ""


async def perform(page, root, kind: str, arg: object) -> None:
    """Do one action on the control ``root``; raises if it cannot."""
    if kind == "select":
        await root.locator("[role='combobox']").first.click()
        options = page.locator("[role='option']")
        await options.first.wait_for(timeout=5_000)
        option = options.nth(arg) if isinstance(arg, int) else options.filter(has_text=str(arg))
        await option.first.click()
    elif kind == "slider":
        thumb = root.locator("[role='slider']").first
        await thumb.focus()
        await thumb.press(str(arg))
    elif kind == "toggle":
        await root.locator("label").first.click()
    elif kind == "radio":
        labels = root.locator("[role='radiogroup'] label")
        target = labels.nth(arg) if isinstance(arg, int) else labels.filter(has_text=str(arg))
        await target.first.click()
    elif kind == "button":
        await root.locator("button").first.click()
    elif kind in ("number", "text"):
        box = root.locator("input, textarea").first
        await box.fill(str(arg))
        await box.press("Enter")
    else:
        raise ValueError(f"unknown action {kind!r}")


async def settle(page, t0: float, timeout_s: float) -> float | None:
    """Seconds from page time ``t0`` to the end of the rerun the action started (and of reruns
    chained within QUIET_MS); None if no rerun started within START_TIMEOUT_MS."""
    deadline = time.monotonic() + START_TIMEOUT_MS / 1000
    index = -1
    while index < 0:
        index = await page.evaluate(_RUN_STARTED, [t0])
        if index < 0:
            if time.monotonic() > deadline:
                return None
            await page.wait_for_timeout(20)
    deadline = time.monotonic() + timeout_s
    while True:
        ended = await page.evaluate(_RUN_ENDED, [index])
        if ended is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"still running after {timeout_s:.0f} s")
            await page.wait_for_timeout(20)
            continue
        await page.wait_for_timeout(QUIET_MS)
        chained = await page.evaluate(_RUN_STARTED, [ended + 1e-3])
        if chained < 0:
            return (ended - t0) / 1000
        index = chained


async def timed_action(page, action: Action, timeout_s: float) -> Outcome:
    key, kind, arg = action
    label = f"{key} {kind}" + ("" if arg is None else f" {arg}")
    root, why = await locate(page, key)
    if root is None:
        return Outcome(label, note=why)
    if await root.locator("[disabled], [aria-disabled='true']").count() and kind != "select":
        return Outcome(label, note="disabled")
    try:
        t0 = await page.evaluate("performance.now()")
        await perform(page, root, kind, arg)
        seconds = await settle(page, t0, timeout_s)
    except Exception as error:  # a benchmark reports and goes on
        await page.keyboard.press("Escape")
        return Outcome(label, note=f"failed: {str(error).splitlines()[0][:80]}")
    if seconds is None:
        return Outcome(label, note="no rerun")
    if await page.locator("[data-testid='stException']").count():
        return Outcome(label, seconds, note="exception shown")
    return Outcome(label, seconds)


async def concurrent(browser, base: str, slug: str, sessions: int, timeout_s: float) -> None:
    action = HEAVIEST[slug]
    print(f"\n## {sessions} concurrent sessions on {slug}: {action[0]} -> {action[2]}")
    contexts = [await browser.new_context(viewport={"width": 1280, "height": 720})
                for _ in range(sessions)]  # fmt: skip
    try:
        for context in contexts:
            await context.add_init_script(_RUNLOG_SCRIPT)
        opened = await asyncio.gather(*(open_page(c, base, slug) for c in contexts))
        loads = ", ".join(f"{s:.1f}" for _, s in opened)
        print(f"pages loaded (s, together): {loads}")
        outcomes = await asyncio.gather(
            *(timed_action(page, action, timeout_s) for page, _ in opened)
        )
        print("| session | settle (s) | note |\n|---|---|---|")
        for i, o in enumerate(outcomes, 1):
            shown = "-" if o.seconds is None else f"{o.seconds:.2f}"
            print(f"| {i} | {shown} | {o.note} |")
        times = [o.seconds for o in outcomes if o.seconds is not None]
        if times:
            print(f"median {statistics.median(times):.2f} s, max {max(times):.2f} s")
    finally:
        for context in contexts:
            await context.close()


async def drive(browser, base: str, slug: str, timeout_s: float, verbose: bool) -> PageReport:
    context = await browser.new_context(viewport={"width": 1280, "height": 720})
    await context.add_init_script(_RUNLOG_SCRIPT)
    try:
        page, load_s = await open_page(context, base, slug)
        report = PageReport(slug, load_s)
        for action in PLANS.get(slug, []):
            outcome = await timed_action(page, action, timeout_s)
            report.outcomes.append(outcome)
            if verbose:
                shown = "" if outcome.seconds is None else f"{outcome.seconds:6.2f} s"
                print(f"  {slug:10s} {outcome.label:45s} {shown} {outcome.note}", flush=True)
        return report
    finally:
        await context.close()


def print_table(reports: list[PageReport]) -> None:
    print("\n## Page by page (1280x720, one session)")
    print("| page | load (s) | controls timed | median (s) | max (s) | slowest | not timed |")
    print("|---|---|---|---|---|---|---|")
    for r in reports:
        times = r.times
        slowest = max((o for o in r.outcomes if o.seconds is not None),
                      key=lambda o: o.seconds, default=None)  # fmt: skip
        skipped = "; ".join(f"{o.label}: {o.note}" for o in r.outcomes if o.seconds is None)
        median = f"{statistics.median(times):.2f}" if times else "-"
        worst = f"{max(times):.2f}" if times else "-"
        print(f"| {r.slug} | {r.load_s:.1f} | {len(times)}/{len(r.outcomes)} | {median} | "
              f"{worst} | {slowest.label if slowest else '-'} | {skipped or '-'} |")  # fmt: skip


async def main_async(args: argparse.Namespace) -> None:
    from playwright.async_api import async_playwright

    slugs = args.pages or [p.slug for p in available_pages()]
    server = None if args.url else start_server("interaction-benchmark")
    base = args.url or server.url
    print(f"server {base}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS
            )
            if args.sessions > 0:
                for slug in HEAVIEST:
                    if slug in slugs:
                        await concurrent(browser, base, slug, args.sessions, args.timeout)
            reports = []
            if not args.no_sequential:
                print("\n## Driving each page (per-action lines)")
                for slug in slugs:
                    reports.append(await drive(browser, base, slug, args.timeout, True))
                print_table(reports)
            await browser.close()
    finally:
        if server is not None:
            stop_server(server)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", nargs="*", help="slugs (default: every page)")
    parser.add_argument(
        "--sessions",
        type=int,
        default=5,
        help="concurrent sessions on the heaviest controls (0: skip)",
    )
    parser.add_argument("--no-sequential", action="store_true", help="only the concurrent part")
    parser.add_argument("--url", help="use a running server instead of starting one")
    parser.add_argument("--timeout", type=float, default=180.0, help="per action, seconds")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
