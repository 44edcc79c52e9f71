"""Ready inputs beyond the notes' presets: a seeded random gather/scatter case, and the
``x[...]`` tab's examples with the one a typed expression is.

Pure: no Streamlit.
"""

from __future__ import annotations

import torch

from core.text import N_, T
from lessons.indexing.parsing import PAGE_LIMITS, IndexingError, format_tensor


def random_case(op: str, ndim: int, seed: int) -> dict[str, str]:
    """A valid random example for ``op`` with ``ndim`` dims, reproducible from ``seed``.

    Returns the page texts ``{"first", "index", "src", "dim"}``; scatter indices are drawn with
    replacement, so duplicates (collisions) happen.
    """
    if ndim not in PAGE_LIMITS:
        raise IndexingError(
            T(
                "ndim must be 1, 2 or 3, got {ndim}",
                ndim=ndim,
            )
        )
    if op not in ("gather", "scatter"):
        raise IndexingError(
            T(
                "op must be 'gather' or 'scatter', got {op!r}",
                op=op,
            )
        )
    g = torch.Generator().manual_seed(int(seed))
    limit = PAGE_LIMITS[ndim]

    def randint(lo: int, hi: int) -> int:
        return int(torch.randint(lo, hi + 1, (1,), generator=g))

    shape = tuple(randint(2, min(m, 5)) for m in limit)
    dim = randint(0, ndim - 1)
    first = torch.randint(0, 10, shape, generator=g)
    ishape = tuple(randint(1, s) for s in shape)
    index = torch.randint(0, shape[dim], ishape, generator=g)
    texts = {"first": format_tensor(first), "index": format_tensor(index), "dim": str(dim)}
    if op == "scatter":
        texts["first"] = format_tensor(torch.zeros(shape, dtype=torch.int64))
        texts["src"] = format_tensor(torch.randint(1, 10, ishape, generator=g))
    else:
        texts["src"] = ""
    return texts


def random_values(op: str, ndim: int, seed: int) -> dict[str, str | int]:
    """What the page's Random button writes into its controls: :func:`random_case`'s texts,
    its dim as a number, and plain ``scatter_`` (reduce ``"none"``)."""
    texts = random_case(op, ndim, seed)
    return {**texts, "dim": int(texts["dim"]), "reduce": "none"}


# --------------------------------------------------------------------------------------------
# x[...] examples
# --------------------------------------------------------------------------------------------

INDEX_PRESETS: dict[str, str] = {
    N_("x[1:, ::2]  basic slicing (view)"): "1:, ::2",
    N_("x[:, [0, 2]]  integer list (copy)"): ":, [0, 2]",
    N_("x[[0, 2], [1, 3]]  pairs"): "[0, 2], [1, 3]",
    N_("x[[True, False, True]]  boolean mask"): "[True, False, True]",
    N_("x[1]  integer (view, one dim fewer)"): "1",
    N_("x[..., -1]  ellipsis + negative"): "..., -1",
    N_("x[None, 1:3]  new axis"): "None, 1:3",
    N_("x[[[0], [2]], [1, 3]]  broadcast pairs"): "[[0], [2]], [1, 3]",
}
INDEX_DEFAULT_X = "[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]"
#: The x[...] "Example" box says this when the typed expression is none of the examples.
CUSTOM_EXAMPLE = N_("your own expression (typed)")


def example_for_expression(expr: str) -> str:
    """The label of the example whose expression ``expr`` is (spacing aside), else
    :data:`CUSTOM_EXAMPLE`."""
    typed = " ".join(str(expr).split())
    return next(
        (label for label, known in INDEX_PRESETS.items() if " ".join(known.split()) == typed),
        CUSTOM_EXAMPLE,
    )
