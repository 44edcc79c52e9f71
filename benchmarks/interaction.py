"""How long the app takes to settle after a control changes, in a real browser.

Run: python -m benchmarks.interaction [--pages flow saliency] [--sessions 5] [--url URL]

Starts one ``streamlit run app.py`` of its own (or uses ``--url``), drives headless Chromium (the
system's, as the browser tests do) and prints two tables:

1. **Concurrent sessions** (run first, so the caches are cold): ``--sessions`` browser contexts
   open the page, then all press its heaviest control at once (saliency: the SmoothGrad method,
   then its "Compute" button if the page asks first; flow: the 720x1280 size, then the notes'
   reference); each session's settle time is printed.
2. **Page by page**: every page is opened in a fresh context (load time printed) and driven
   through its main controls, one at a time; median and max settle time per page.

Settle time: from the input event that commits the change, as the page's own clock saw it
arrive (the click on a dropdown's option, not the click that opens it; Enter after typing a
number; the key press on a slider; Playwright's checks before a click are not counted) to
``[data-test-script-state='notRunning']`` on the app after a rerun started (read from a
MutationObserver's log with the page's own clock). A rerun chained within 300 ms (``st.rerun``,
a fragment) is waited for too. Controls are found by widget key (``.st-key-<key>``); a control
that is not on the page is printed as "missing" and skipped, one in a closed tab or expander is
revealed first. Nothing is asserted: timings depend on the
machine and its load (the load average is printed before and after).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import time
from dataclasses import dataclass, field

from lessons.registry import available_pages
from testing.browser import launch_options
from testing.servers import start_server, stop_server

IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
LOAD_TIMEOUT_MS = 240_000
QUIET_MS = 300
START_TIMEOUT_MS = 20_000  # no rerun started within this: the action changed nothing

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
        ("batchnorm.momentum", "number", "0.2"),
        ("batchnorm.momentum", "number", "0.1"),
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
        ("saliency.compute", "button", None),  # only there when the run asks first
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
    ],
}

#: The heaviest control of a page, pressed by every concurrent session at once; each step in
#: turn (a long run may first ask for a click on its "Compute" button: that is the next step,
#: and "missing" when the page ran it without asking).
HEAVIEST: dict[str, list[Action]] = {
    "saliency": [
        ("saliency.method", "select", "SmoothGrad"),
        ("saliency.compute", "button", None),
    ],
    "flow": [
        ("flow.size", "select", "720"),
        ("flow.notes", "toggle", None),  # the notes' avg_pool2d reference at 720p
    ],
}

_RUNLOG_SCRIPT = """
window.__runlog = [];
window.__inputlog = [];
for (const type of ['click', 'keydown']) {
  // capture phase: the page's clock when the browser delivered the user's input event
  window.addEventListener(type, (e) => window.__inputlog.push(e.timeStamp), true);
}
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
# Page time of the last input event (click, key) at or after t0 and before run i started.
_INPUT_AT = """([t0, i]) => {
  const started = window.__runlog[i][0];
  const inputs = (window.__inputlog || []).filter(t => t >= t0 && t <= started);
  return inputs.length ? inputs[inputs.length - 1] : t0;
}"""
# Time of the first 'notRunning' after entry i, or null.
_RUN_ENDED = """([i]) => {
  const log = window.__runlog || [];
  for (let j = i + 1; j < log.length; j++) if (log[j][1] === 'notRunning') return log[j][0];
  return null;
}"""

# Marks the closed tab or expander that holds ``el`` (the outermost first), for a real click:
# Streamlit 1.67's tabs are react-aria (div[role=tab]) and keep inactive panels as
# div[data-testid=stTabPanel] without role=tabpanel. Returns whether it marked one.
_MARK_REVEAL = """(el) => {
  const hiders = [];
  for (let e = el; e; e = e.parentElement) {
    if (e.getAttribute('data-testid') === 'stTabPanel') hiders.push(e);
    if (e.tagName === 'DETAILS' && !e.open) hiders.push(e);
  }
  for (const h of hiders.reverse()) {
    if (h.tagName === 'DETAILS') {
      h.querySelector('summary').setAttribute('data-bench-reveal', '1');
      return true;
    }
    const tabs = h.closest("[data-testid='stTabs']");
    const panels = [...h.parentElement.children]
      .filter(c => c.getAttribute('data-testid') === 'stTabPanel');
    const own = [...tabs.querySelectorAll("[role='tab']")]
      .filter(t => t.closest("[data-testid='stTabs']") === tabs);
    const tab = own[panels.indexOf(h)];
    if (tab && tab.getAttribute('aria-selected') !== 'true') {
      tab.setAttribute('data-bench-reveal', '1');
      return true;
    }
  }
  return false;
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
    await page.goto(page_url(base, slug), timeout=LOAD_TIMEOUT_MS, wait_until="domcontentloaded")
    await wait_ready(page)
    return page, time.monotonic() - started


async def locate(page, key: str):
    """The control's locator and None, or None and why it cannot be used."""
    root = page.locator(selector(key))
    if await root.count() == 0:
        return None, "missing"
    root = root.first
    for _ in range(3):  # a tab inside an expander inside a tab, at most
        if await root.is_visible() or not await root.evaluate(_MARK_REVEAL):
            break
        marked = page.locator("[data-bench-reveal='1']").first
        await marked.click()
        await marked.evaluate("(e) => e.removeAttribute('data-bench-reveal')")
        await page.wait_for_timeout(300)
    if not await root.is_visible():
        return None, "hidden"
    return root, ""


async def now(page) -> float:
    return await page.evaluate("performance.now()")


async def perform(page, root, kind: str, arg: object) -> tuple[float, str]:
    """Do one action on the control ``root``; raises if it cannot. Returns the page time just
    before the event that commits the change (the option's click, the key press, Enter; opening
    a dropdown or typing a number changes nothing yet) and a note ("" or what went
    differently)."""
    note = ""
    if kind == "select":
        box = root.locator("[role='combobox']").first
        for opener in ("click", "ArrowDown", "click"):  # a click on a busy page can be lost
            if opener == "click":
                await box.click()
            else:
                await box.press(opener)
            listbox = await box.get_attribute("aria-controls")
            scope = page.locator(f"[id='{listbox}']") if listbox else page
            options = scope.locator("[role='option']")
            try:
                await options.first.wait_for(timeout=5_000)
                break
            except Exception:  # try the next way of opening it
                note = "dropdown opened again"
        option = options.nth(arg) if isinstance(arg, int) else options.filter(has_text=str(arg))
        commit = await now(page)
        await option.first.click()
    elif kind == "slider":
        # baseweb sliders have a [role=slider] thumb; react-aria ones a hidden input[type=range]
        thumb = root.locator("[role='slider'], input[type='range']").first
        await thumb.focus()
        commit = await now(page)
        await thumb.press(str(arg))
    elif kind == "toggle":
        commit = await now(page)
        await root.locator("label").first.click()
    elif kind == "radio":
        labels = root.locator("[role='radiogroup'] label")
        target = labels.nth(arg) if isinstance(arg, int) else labels.filter(has_text=str(arg))
        commit = await now(page)
        await target.first.click()
    elif kind == "button":
        commit = await now(page)
        await root.locator("button").first.click()
    elif kind in ("number", "text"):
        box = root.locator("input, textarea").first
        await box.fill(str(arg))
        commit = await now(page)
        await box.press("Enter")
    else:
        raise ValueError(f"unknown action {kind!r}")
    return commit, note


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
    t0 = await page.evaluate(_INPUT_AT, [t0, index])
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
    # A number input's "-" button is disabled at its minimum: look at the control itself.
    disabled = {
        "number": "input:disabled",
        "text": "input:disabled, textarea:disabled",
        "button": "button:disabled",
    }.get(kind, ":disabled, [aria-disabled='true']")
    if await root.locator(disabled).count():
        return Outcome(label, note="disabled")
    try:
        t0, note = await perform(page, root, kind, arg)
        seconds = await settle(page, t0, timeout_s)
    except Exception as error:  # a benchmark reports and goes on
        await page.keyboard.press("Escape")
        return Outcome(label, note=f"failed: {str(error).splitlines()[0][:80]}")
    if seconds is None:
        return Outcome(label, note="no rerun")
    if await page.locator("[data-testid='stException']").count():
        return Outcome(label, seconds, note="exception shown")
    return Outcome(label, seconds, note)


async def concurrent(browser, base: str, slug: str, sessions: int, timeout_s: float) -> None:
    steps = HEAVIEST[slug]
    print(f"\n## {sessions} concurrent sessions on {slug} (1280x720)")
    contexts = [await browser.new_context(viewport={"width": 1280, "height": 720})
                for _ in range(sessions)]  # fmt: skip
    try:
        for context in contexts:
            await context.add_init_script(_RUNLOG_SCRIPT)
        opened = await asyncio.gather(*(open_page(c, base, slug) for c in contexts))
        loads = ", ".join(f"{s:.1f}" for _, s in opened)
        print(f"pages opened together, load times (s): {loads}")
        for key, kind, arg in steps:
            print(f"\n{key} {kind}" + ("" if arg is None else f" {arg}") + ", all at once:")
            outcomes = await asyncio.gather(
                *(timed_action(page, (key, kind, arg), timeout_s) for page, _ in opened)
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
            browser = await playwright.chromium.launch(**launch_options())
            if args.sessions > 0:
                for slug in HEAVIEST:
                    if slug in slugs:
                        try:
                            await concurrent(browser, base, slug, args.sessions, args.timeout)
                        except Exception as error:  # report and go on to the next part
                            print(f"{slug}: concurrent run failed: {str(error).splitlines()[0]}")
            reports = []
            if not args.no_sequential:
                print("\n## Driving each page (per-action lines)")
                for slug in slugs:
                    try:
                        reports.append(await drive(browser, base, slug, args.timeout, True))
                    except Exception as error:  # a page that does not open: say so, go on
                        print(f"  {slug}: could not be driven: {str(error).splitlines()[0]}")
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
