"""One case of the page, from its texts to what it shows: parsed, traced, with its snippet.

- :func:`run_case`: a gather or scatter from the page's three tensor texts, dim and reduce;
- :func:`run_index_case`: ``x[expr]`` from the typed ``x`` and expression, refused when the
  result is too big to draw (:func:`check_drawable`);
- :func:`group_means_for`: the group means a scatter-add into zeros stands for (the notes'
  002:204-211 recipe), with :data:`GROUP_MEANS_SNIPPET` and :func:`group_means_table`.

Each run returns ``(trace, error, snippet)``: parse and shape errors come back with no snippet,
torch's own refusal with a snippet that reproduces it. Pure: no Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from core.text import N_, T
from lessons.indexing.parsing import (
    IndexingError,
    Scalar,
    format_value,
    parse_index_expression,
    parse_src,
    parse_tensor,
)
from lessons.indexing.snippets import case_snippet, index_snippet
from lessons.indexing.tracing import SCATTER_ADD, Trace, trace_gather, trace_index, trace_scatter

# --------------------------------------------------------------------------------------------
# gather / scatter
# --------------------------------------------------------------------------------------------

#: (op, first, index, src texts, dim, reduce, include_self, device): :func:`run_case`'s
#: arguments, the key of the page's cached run.
Case = tuple[str, str, str, str, int, str | None, bool, str]


def promote_pair(a: torch.Tensor, b: torch.Tensor | Scalar) -> tuple[torch.Tensor, Any]:
    """Give ``a`` and a tensor ``b`` one dtype (float32 if either is floating) for scatter_.

    A float scalar ``b`` turns an integer ``a`` into float32 too: scatter_ would otherwise
    truncate it silently (1.23 written into an int64 tensor becomes 1).
    """
    if isinstance(b, float) and not a.dtype.is_floating_point:
        return a.to(torch.float32), b
    if (
        isinstance(b, torch.Tensor)
        and a.dtype != b.dtype
        and (a.dtype.is_floating_point or b.dtype.is_floating_point)
    ):
        return a.to(torch.float32), b.to(torch.float32)
    return a, b


def build_operands(
    op: str, first_text: str, index_text: str, src_text: str, device: str = "cpu"
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | Scalar | None]:
    """Parse the page's texts into (input/dest, index, src) for ``op``, with dtypes aligned,
    placed on ``device``."""
    if op not in ("gather", "scatter"):
        raise IndexingError(
            T(
                "op must be 'gather' or 'scatter', got {op!r}",
                op=op,
            )
        )
    first = parse_tensor(first_text, "input" if op == "gather" else "dest").to(device)
    index = parse_tensor(index_text, "index", kind="index").to(device)
    if op == "gather":
        return first, index, None
    src = parse_src(src_text)
    first, src = promote_pair(first, src)
    if isinstance(src, torch.Tensor):
        src = src.to(device)
    return first, index, src


def run_case(
    op: str,
    first_text: str,
    index_text: str,
    src_text: str,
    dim: int,
    reduce: str | None = None,
    include_self: bool = True,
    device: str = "cpu",
) -> tuple[Trace | None, IndexingError | None, str]:
    """Parse, trace and build the snippet in one go: ``(trace, error, snippet)``.

    Parse/shape errors give ``(None, error, "")``; torch's own refusal gives a snippet that
    reproduces the error (its ``error`` variable holds torch's text). The snippet runs on the
    CPU whatever ``device`` the trace used.
    """
    try:
        first, index, src = build_operands(op, first_text, index_text, src_text, device)
    except IndexingError as err:
        return None, err, ""
    try:
        if op == "gather":
            trace = trace_gather(first, dim, index)
        else:
            trace = trace_scatter(first, dim, index, src, reduce, include_self=include_self)
    except IndexingError as err:
        if err.torch_error is None:
            return None, err, ""
        snippet = case_snippet(op, first, dim, index, src, reduce, include_self, error=True)
        return None, err, snippet
    return trace, None, case_snippet(op, first, dim, index, src, reduce, include_self, error=False)


# --------------------------------------------------------------------------------------------
# x[...]
# --------------------------------------------------------------------------------------------


#: Largest x[...] result the page draws (the expression can grow the result beyond x).
MAX_DRAWN_CELLS = 128


def check_drawable(result: torch.Tensor) -> None:
    """Raise if an ``x[...]`` result has more than 3 dims or :data:`MAX_DRAWN_CELLS` cells."""
    shape = tuple(result.shape)
    if result.dim() > 3:
        raise IndexingError(
            T(
                "x[...] gave a {ndim}-D result of shape {shape}; the page draws up to 3 dims: "
                "use fewer None entries or fewer index lists",
                ndim=result.dim(),
                shape=shape,
            )
        )
    if result.numel() > MAX_DRAWN_CELLS:
        raise IndexingError(
            T(
                "x[...] gave {numel} elements (shape {shape}); the page draws up to "
                "{MAX_DRAWN_CELLS}: use shorter index lists",
                numel=result.numel(),
                shape=shape,
                MAX_DRAWN_CELLS=MAX_DRAWN_CELLS,
            )
        )


def run_index_case(x_text: str, expr: str) -> tuple[Trace | None, IndexingError | None, str]:
    """Parse ``x`` and the expression, trace ``x[expr]``; ``(trace, error, snippet)``."""
    try:
        x = parse_tensor(x_text, "x")
        items = parse_index_expression(expr)
    except IndexingError as err:
        return None, err, ""
    try:
        trace = trace_index(x, items)
    except IndexingError as err:
        if err.torch_error is None:
            return None, err, ""
        return None, err, index_snippet(x, items, error=True)
    try:
        check_drawable(trace.result)
    except IndexingError as err:
        return None, err, index_snippet(x, items)
    return trace, None, index_snippet(x, items)


# --------------------------------------------------------------------------------------------
# Group means (the notes' scatter_add recipe)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupMeans:
    """Group means of ``x`` by ``idx`` two ways: scatter_add / unique counts, and scatter_reduce."""

    groups: torch.Tensor
    counts: torch.Tensor
    sums: torch.Tensor
    means: torch.Tensor
    means_reduce: torch.Tensor
    agree: bool


def group_means(x: torch.Tensor, idx: torch.Tensor) -> GroupMeans:
    """Average 1-D float ``x`` by 1-D int64 group ids ``idx`` (same length, values >= 0).

    ``sums = zeros(G).scatter_add_(0, idx, x)``; counts from ``torch.unique(idx,
    return_counts=True)``; compared with ``scatter_reduce_(..., "mean", include_self=False)``.
    Groups with no member keep a count of 0 and a mean of 0.
    """
    if x.dim() != 1 or idx.dim() != 1 or x.shape != idx.shape:
        raise IndexingError(
            T(
                "group means need 1-D x and idx of the same length, got {x_shape} and {idx_shape}",
                x_shape=tuple(x.shape),
                idx_shape=tuple(idx.shape),
            )
        )
    if idx.dtype != torch.int64 or (idx.numel() and int(idx.min()) < 0):
        raise IndexingError(N_("group ids must be non-negative whole numbers"))
    x, idx = x.detach().cpu().to(torch.float32), idx.cpu()
    n_groups = int(idx.max()) + 1
    sums = torch.zeros(n_groups).scatter_add_(0, idx, x)
    groups, counts_present = torch.unique(idx, return_counts=True)
    counts = torch.zeros(n_groups, dtype=torch.int64)
    counts[groups] = counts_present
    means = sums / counts.clamp(min=1)
    means_reduce = torch.zeros(n_groups).scatter_reduce_(0, idx, x, "mean", include_self=False)
    return GroupMeans(
        groups, counts, sums, means, means_reduce, bool(torch.allclose(means, means_reduce))
    )


def group_means_for(trace: Trace) -> GroupMeans | None:
    """The group means a scatter-add trace stands for, or ``None`` when it is not one.

    Applies to ``scatter_add_`` (or the deprecated ``reduce="add"``) of a tensor ``src`` shaped
    like ``index`` into an all-zero 1-D ``dest``: only then is ``out[g]`` the plain sum of group
    ``g`` (a non-zero ``dest`` would be added in, and :data:`GROUP_MEANS_SNIPPET` divides
    ``out`` by the counts).
    """
    if trace.op != "scatter" or trace.reduce not in ("add", SCATTER_ADD) or trace.scalar_src:
        return None
    dest, index, src = (trace.operands[k] for k in ("dest", "index", "src"))
    if dest.dim() != 1 or src.shape != index.shape or bool(dest.count_nonzero()):
        return None
    return group_means(src, index)


#: Appended to a scatter-add snippet whose trace has :func:`group_means_for`; ``means`` holds the
#: means of the groups present in ``index`` (absent groups have no mean to print).
GROUP_MEANS_SNIPPET = """
groups, counts = torch.unique(index, return_counts=True)
means = out[groups] / counts         # dest started at zeros, so out[g] is the sum of group g
print(groups, means)
# the same in one call:
means_reduce = torch.zeros(len(out)).scatter_reduce_(
    0, index, src.float(), "mean", include_self=False)
print(means_reduce[groups])
"""


def group_means_table(group: GroupMeans) -> dict[str, list[Any]]:
    """The page's table of ``group``: one row per group id, columns keyed by marked headers."""
    return {
        N_("group"): list(range(len(group.sums))),
        N_("sum (scatter_add_)"): [format_value(v) for v in group.sums],
        N_("count (unique)"): group.counts.tolist(),
        N_("mean"): [format_value(v) for v in group.means],
        N_("scatter_reduce mean"): [format_value(v) for v in group.means_reduce],
    }
