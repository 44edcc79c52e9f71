"""What a link can make the server do: CPU-seconds, wall time and peak memory of opening a page
cold from a hostile (but valid) link, each in a fresh process.

Run: ``python -m benchmarks.heavy_links [--only NAME ...] [--timeout S]``. The links are the
ones a visitor could write by hand: the heaviest views found by trying the app as an attacker
would, and for every page each numeric control at its maximum with every switch on. A page that
keeps a link within the heavy-work budget (``ui.heavy``) settles in a few CPU-seconds and shows
a button for the rest. Prints one row per link; no pass/fail (timings are machine-dependent).
Uses AppTest (the real app.py and page, no browser), so the figures are the script's own work.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: name -> (page slug, query parameters)
LINKS: dict[str, tuple[str, dict[str, str]]] = {
    "saliency IG 128 + sanity 21": ("saliency", {
        "saliency.method": "Integrated Gradients", "saliency.steps": "128",
        "saliency.sanity": "true", "saliency.sanity_layers": "21"}),
    "flow 720x1280, window 129, accuracy": ("flow", {
        "flow.size": "720x1280", "flow.max_window": "129", "flow.notes": "true",
        "flow.details_tab": "Accuracy and speed"}),
    "warp custom 4096, bicubic, notes": ("warp", {
        "warp.size_mode": "Custom", "warp.out_w": "4096", "warp.out_h": "4096",
        "warp.notes": "true", "warp.mode": "bicubic"}),
    "batchnorm 2000 steps of 100000 values": ("batchnorm", {
        "batchnorm.steps": "2000", "batchnorm.spatial": "100000", "batchnorm.batch_size": "256"}),
    "saliency SmoothGrad at its maximum": ("saliency", {
        "saliency.method": "SmoothGrad", "saliency.n": "50"}),
    "warp custom 2048, bicubic, notes": ("warp", {
        "warp.size_mode": "Custom", "warp.out_w": "2048", "warp.out_h": "2048",
        "warp.notes": "true", "warp.mode": "bicubic"}),
}  # fmt: skip
MAXED = ("home", "indexing", "batchnorm", "warp", "saliency", "flow", "memory")

CHILD = r"""
import json, resource, time
from streamlit.testing.v1 import AppTest
from testing.apptest import switch_to
slug, params, timeout, maxed = {slug!r}, {params!r}, {timeout!r}, {maxed!r}
app = {root!r} + "/app.py"

def open_page(query):
    at = AppTest.from_file(app, default_timeout=timeout)
    at.query_params.update(query)
    if slug != "home":
        switch_to(at, slug)
    at.run(timeout=timeout)
    return at

def maxed_params(at):
    found = {{}}
    for kind in ("slider", "number_input"):
        for w in getattr(at, kind):
            top = getattr(w, "max", None)
            if w.key and w.key.startswith(slug + ".") and top is not None:
                whole = isinstance(w.value, int) and float(top).is_integer()
                found[w.key] = str(int(top)) if whole else str(top)
    for w in at.select_slider:
        if w.key and w.key.startswith(slug + "."):
            found[w.key] = str(w.options[-1])
    for kind in ("toggle", "checkbox"):
        for w in getattr(at, kind):
            if w.key and w.key.startswith(slug + "."):
                found[w.key] = "true"
    return found

warm = open_page({{}})  # imports, models and the default view: not the link's cost
if maxed:
    params = maxed_params(warm)
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
cpu0, wall0 = time.process_time(), time.perf_counter()
error = ""
try:
    at = open_page(params)
    if at.exception:
        error = str(at.exception[0].value)[:80]
    buttons = [b.key for b in at.button if b.key and b.key.endswith(".run")]
    buttons += ["error: " + e.value.splitlines()[0][:70] for e in at.error][:1]
except Exception as exc:  # a run past the timeout: report it
    error, buttons = type(exc).__name__ + ": " + str(exc)[:60], []
print(json.dumps({{
    "cpu_s": time.process_time() - cpu0, "wall_s": time.perf_counter() - wall0,
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "warm_peak_mb": rss0,
    "buttons": buttons, "error": error, "params": len(params)}}))
"""


def run_link(slug: str, params: dict[str, str], *, maxed: bool, timeout: float) -> dict:
    code = CHILD.format(root=str(ROOT), slug=slug, params=params, timeout=timeout, maxed=maxed)
    try:  # `python -c` puts its working directory, the repository root, first on sys.path
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout + 120, cwd=ROOT)  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"error": f"not settled in {timeout + 120:.0f} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {"error": done.stderr.strip()[-120:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", nargs="*", help="names (or page slugs for the maxed links)")
    parser.add_argument("--timeout", type=float, default=150.0, help="seconds for one run")
    args = parser.parse_args()
    jobs = [(name, slug, params, False) for name, (slug, params) in LINKS.items()]
    jobs += [(f"{slug}: every number at its max", slug, {}, True) for slug in MAXED]
    if args.only:
        jobs = [job for job in jobs if job[0] in args.only or (job[3] and job[1] in args.only)]
    print(f"{'link':42} {'CPU-s':>7} {'wall s':>7} {'peak MB':>8} {'warm MB':>8}  "
          "buttons, or the first error shown")
    for name, slug, params, maxed in jobs:
        started = time.perf_counter()
        row = run_link(slug, params, maxed=maxed, timeout=args.timeout)
        if "cpu_s" not in row:
            print(f"{name:42} {'-':>7} {time.perf_counter() - started:7.1f} {'-':>8} {'-':>8}  "
                  f"{row['error']}")
            continue
        note = ", ".join(row["buttons"]) or "-"
        if row["error"]:
            note += f"; {row['error']}"
        print(f"{name:42} {row['cpu_s']:7.1f} {row['wall_s']:7.1f} {row['peak_mb']:8.0f} "
              f"{row['warm_peak_mb']:8.0f}  {note}")


if __name__ == "__main__":
    main()
