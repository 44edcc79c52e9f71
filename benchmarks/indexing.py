"""How much the indexing page's tracing costs next to the bare torch call.

Run: ``python -m benchmarks.indexing``. Prints the median time of each step at the page's
largest sizes (2-D 6x8, 3-D 3x4x4) and the ratio traced / bare torch call.
"""

from __future__ import annotations

import statistics
import time

import torch

from lessons.indexing import cases, presets, tracing
from lessons.indexing.figures import trace_figures


def median_ms(fn, repeat: int = 30) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    rows = []
    for shape, dim in (((6, 8), 1), ((3, 4, 4), 0)):
        x = torch.randint(0, 10, shape)
        index = torch.randint(0, shape[dim], shape)
        src = torch.randint(0, 10, shape)
        bare_g = median_ms(lambda x=x, d=dim, i=index: torch.gather(x, d, i))
        traced_g = median_ms(lambda x=x, d=dim, i=index: tracing.trace_gather(x, d, i))
        bare_s = median_ms(lambda x=x, d=dim, i=index, s=src: x.clone().scatter_(d, i, s))
        traced_s = median_ms(lambda x=x, d=dim, i=index, s=src: tracing.trace_scatter(x, d, i, s))
        items = (slice(None), torch.tensor([0, 2, 1, 0]))
        bare_i = median_ms(lambda x=x, it=items: x[it])
        traced_i = median_ms(lambda x=x, it=items: tracing.trace_index(x, it))
        trace = tracing.trace_scatter(x, dim, index, src)
        figs = median_ms(lambda t=trace: trace_figures(t), repeat=5)
        name = "x".join(map(str, shape))
        rows += [
            (f"gather {name}", bare_g, traced_g),
            (f"scatter_ {name}", bare_s, traced_s),
            (f"x[:, [0,2,1,0]] {name}", bare_i, traced_i),
            (f"figures (4 charts) {name}", None, figs),
        ]
    page = median_ms(
        lambda: cases.run_case(
            "scatter", presets.PRESETS[1].first, presets.PRESETS[1].index, presets.PRESETS[1].src, 0
        ),
        repeat=20,
    )
    rows.append(("run_case (parse+trace+snippet) y2", None, page))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread, CPU")
    print(f"{'step':38s} {'bare torch ms':>14s} {'traced ms':>10s} {'ratio':>7s}")
    for name, bare, traced in rows:
        ratio = f"{traced / bare:7.1f}" if bare else "      -"
        bare_s = f"{bare:14.4f}" if bare else f"{'-':>14s}"
        print(f"{name:38s} {bare_s} {traced:10.3f} {ratio}")


if __name__ == "__main__":
    main()
