"""Python code that reproduces what the page shows, runnable as-is on the CPU.

Each snippet rebuilds the operands exactly (:func:`~lessons.indexing.parsing.tensor_code`), runs
the same call as the trace and defines ``out`` (or ``error``, with torch's message, when the
call fails); a test executes every snippet and compares it with the trace. Pure: no Streamlit.
"""

from __future__ import annotations

from typing import Any

import torch

from lessons.indexing.parsing import Scalar, tensor_code
from lessons.indexing.tracing import format_index_items, normalize_items, scatter_call


def gather_snippet(
    input: torch.Tensor, dim: int, index: torch.Tensor, *, error: bool = False
) -> str:
    """Python code that reproduces the gather view; defines ``out`` (or ``error`` when it fails)."""
    lines = [
        "import torch",
        "",
        f"input = {tensor_code(input)}",
        f"index = {tensor_code(index)}",
    ]
    lines += _call_lines(f"torch.gather(input, {dim}, index)", error)
    return "\n".join(lines) + "\n"


def scatter_snippet(
    dest: torch.Tensor,
    dim: int,
    index: torch.Tensor,
    src: torch.Tensor | Scalar,
    reduce: str | None = None,
    *,
    include_self: bool = True,
    error: bool = False,
) -> str:
    """Code that reproduces the scatter view; defines ``out`` (or ``error``)."""
    lines = ["import torch", "", f"dest = {tensor_code(dest)}", f"index = {tensor_code(index)}"]
    if isinstance(src, torch.Tensor):
        lines.append(f"src = {tensor_code(src)}")
        src_text = "src"
    else:
        src_text = repr(src)
    lines += _call_lines(scatter_call(dim, src_text, reduce, include_self), error)
    return "\n".join(lines) + "\n"


def index_snippet(x: torch.Tensor, indices: Any, *, error: bool = False) -> str:
    """Code that reproduces the ``x[...]`` view; defines ``out``, ``is_view`` (or ``error``)."""
    items = normalize_items(indices)
    lines = ["import torch", "", f"x = {tensor_code(x)}"]
    lines += _call_lines(f"x[{format_index_items(items)}]", error)
    if not error:
        lines += [
            "# a view shares x's storage; a copy has its own",
            "is_view = out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()",
            "print('view' if is_view else 'copy', 'storage_offset =', out.storage_offset())",
        ]
    return "\n".join(lines) + "\n"


def _call_lines(call: str, error: bool) -> list[str]:
    if error:
        return [
            "try:",
            f"    out = {call}",
            "except (RuntimeError, IndexError) as exc:",
            "    error = str(exc)",
            "    print(error)",
        ]
    return [f"out = {call}", "print(out)"]


def case_snippet(
    op: str,
    first: torch.Tensor,
    dim: int,
    index: torch.Tensor,
    src: torch.Tensor | Scalar | None,
    reduce: str | None,
    include_self: bool,
    *,
    error: bool,
) -> str:
    """The gather (``op == "gather"``) or scatter snippet of a page case, on the CPU whatever
    device its tensors are on."""
    first, index = first.cpu(), index.cpu()
    src = src.cpu() if isinstance(src, torch.Tensor) else src
    if op == "gather":
        return gather_snippet(first, dim, index, error=error)
    assert src is not None, "a scatter case has a src"
    return scatter_snippet(first, dim, index, src, reduce, include_self=include_self, error=error)
