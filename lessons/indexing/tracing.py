"""Index arithmetic made visible: which input cell feeds every output cell.

Three tracers run the *real* torch call and report, next to its result, one link per
element (``links``), the collisions of duplicate scatter writes and, for ``x[...]``,
whether the result is a view or a copy (measured on the storages, not guessed):

- :func:`trace_gather`  -> ``torch.gather(input, dim, index)``
- :func:`trace_scatter` -> ``dest.clone().scatter_(...)`` / ``scatter_reduce_(...)``
- :func:`trace_index`   -> ``x[indices]`` (slices, ints, integer tensors, boolean masks)

Around them: text parsing for the page's editable tensors (:func:`parse_tensor`,
:func:`parse_src`, :func:`parse_index_expression`), the formula for one clicked element
(:func:`explain_element`), snippet builders whose code a test executes
(:func:`gather_snippet`, :func:`scatter_snippet`, :func:`index_snippet`), the presets
from the notes (:data:`PRESETS`, :func:`run_preset`) and the eight pitfall demos
(:func:`run_pitfall`). Pure: no Streamlit.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch

from core.notes import LiveRun, NotesCallout, NotesRef, cite, run_live, verdict_if
from core.text import N_, T

Pos = tuple[int, ...]
Scalar = int | float
IndexItem = Any  # int | slice | None | Ellipsis | bool | torch.Tensor (int64 or bool)

#: Largest tensors the page accepts, by number of dims (3-D tensors are shown as slices).
#: 2-D allows 10 columns so that the notes' one-hot example (4 labels, class_num 10, 002:997) fits.
PAGE_LIMITS: dict[int, tuple[int, ...]] = {1: (8,), 2: (6, 10), 3: (3, 4, 4)}
#: Longest integer list / mask allowed inside an ``x[...]`` expression on the page.
MAX_INDEX_LIST = 64

SCATTER_REDUCES: tuple[str | None, ...] = (
    None,
    "scatter_add",
    "add",
    "multiply",
    "sum",
    "prod",
    "mean",
    "amax",
    "amin",
)
_LEGACY_REDUCES = ("add", "multiply")
_REDUCE_MODES = ("sum", "prod", "mean", "amax", "amin")
#: ``scatter_add_``: the sum that is not deprecated (the notes' group means use it, 002:210).
_SCATTER_ADD = "scatter_add"

UNSPECIFIED_WINNER_NOTE = N_(
    "Several index entries write to the same cell. With plain scatter_ (no reduce) the winner "
    "among these duplicate writes is unspecified: the CPU usually keeps the last one, but on "
    "CUDA it may differ from run to run (and the gradient flows to every duplicate)."
)


class IndexingError(ValueError):
    """A bad input, with a message written for a person.

    ``torch_error`` holds torch's own error text when torch itself refused the call
    (``None`` when the input was stopped by our checks before calling torch); ``hint`` then
    holds the advice after it (a :class:`core.text.T` or a marked string, so that a page can
    translate the message around torch's own words, which stay as torch wrote them).
    """

    def __init__(
        self, message: str, torch_error: str | None = None, hint: str | None = None
    ) -> None:
        super().__init__(message)
        self.torch_error = torch_error
        self.hint = hint


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StorageReport:
    """Storage facts that prove view vs copy: both data pointers and the result's layout."""

    source_ptr: int
    result_ptr: int
    source_offset: int
    result_offset: int
    result_stride: tuple[int, ...]

    @property
    def same_storage(self) -> bool:
        return self.source_ptr == self.result_ptr


@dataclass(frozen=True)
class Trace:
    """One traced torch call.

    Attributes:
        op: ``"gather"``, ``"scatter"`` or ``"index"``.
        call: the Python expression that produced ``result`` (used by the snippets).
        operands: named input tensors, e.g. ``{"input", "index"}``, ``{"dest", "index", "src"}``
            or ``{"x"}``; a scalar ``src`` is stored as a 0-d tensor.
        result: what torch returned (gather/index) or the scattered clone of ``dest``.
        links: gather/index: ``(out_pos, in_pos)`` per result element; scatter:
            ``(src_pos, dest_pos)`` per element of ``index`` (for a scalar ``src`` the
            src_pos is the index position: the scalar acts like ``full(index.shape, value)``).
        collisions: scatter only: dest position written more than once -> its src positions.
        winners: scatter with ``reduce=None`` only: collided dest position -> the src position
            whose value ended up in ``result`` (absent when several candidates hold that value).
        is_view: index only: ``True`` when ``result`` shares ``x``'s storage.
        storage: index only: the pointers and offsets behind ``is_view``.
        dim: the non-negative dim used (gather/scatter).
        warnings: warnings torch emitted during the call (e.g. deprecations).
    """

    op: Literal["gather", "scatter", "index"]
    call: str
    operands: dict[str, torch.Tensor]
    result: torch.Tensor
    links: list[tuple[Pos, Pos]]
    collisions: dict[Pos, tuple[Pos, ...]] = field(default_factory=dict)
    winners: dict[Pos, Pos] = field(default_factory=dict)
    is_view: bool | None = None
    storage: StorageReport | None = None
    dim: int | None = None
    reduce: str | None = None
    include_self: bool = True
    scalar_src: bool = False
    index_text: str = ""
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Explanation:
    """The story of one output element: a formula with real numbers and the cells to highlight.

    ``sources`` maps operand names (``"input"``, ``"index"``, ``"src"``, ``"dest"``, ``"x"``)
    to the positions that fed ``out_pos``.
    """

    out_pos: Pos
    formula: str
    note: str
    sources: dict[str, tuple[Pos, ...]]


# --------------------------------------------------------------------------------------------
# Small formatting helpers
# --------------------------------------------------------------------------------------------


def format_pos(pos: Sequence[int]) -> str:
    """``(1, 0)`` -> ``"[1][0]"``; the empty position of a 0-d tensor -> ``""``."""
    return "".join(f"[{int(p)}]" for p in pos)


def format_value(value: Any) -> str:
    """One tensor element as the page prints it: ints as ints, floats with 4 significant digits."""
    if isinstance(value, torch.Tensor):
        value = value.item()
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        return str(value)
    text = f"{value:.4g}"
    if "e" not in text and "." not in text:
        text += ".0" if abs(value) < 1e4 else ""
    return text


def _literal_number(value: Any, dtype: torch.dtype) -> str:
    """Exact, round-tripping literal for one element of a tensor of ``dtype``."""
    if dtype == torch.bool:
        return str(bool(value))
    if dtype.is_floating_point:
        v = float(value)
        if math.isnan(v) or math.isinf(v):
            return f"float('{v}')"
        if dtype == torch.float64:
            return repr(v)
        return np.format_float_positional(np.float32(v), unique=True, trim="0")
    return str(int(value))


def tensor_literal(t: torch.Tensor) -> str:
    """A nested list literal of ``t`` (no ``torch.tensor`` around it), exact for its dtype."""
    if t.dim() == 0:
        return _literal_number(t.item(), t.dtype)

    def rec(sub: torch.Tensor) -> str:
        if sub.dim() == 1:
            return "[" + ", ".join(_literal_number(v, t.dtype) for v in sub.tolist()) + "]"
        return "[" + ", ".join(rec(s) for s in sub) + "]"

    return rec(t)


def tensor_code(t: torch.Tensor) -> str:
    """``torch.tensor(...)`` source that rebuilds ``t`` exactly (values, shape and dtype)."""
    t = t.detach().cpu()
    lit = tensor_literal(t)
    if t.dtype in (torch.int64, torch.bool):
        if t.numel() == 0:
            return f"torch.tensor({lit}, dtype={t.dtype}).reshape({tuple(t.shape)})"
        return f"torch.tensor({lit})"
    text = f"torch.tensor({lit}, dtype={t.dtype})"
    if t.numel() == 0:
        text += f".reshape({tuple(t.shape)})"
    return text


# --------------------------------------------------------------------------------------------
# Parsing the page's text / grid input
# --------------------------------------------------------------------------------------------

_INT64_MIN, _INT64_MAX = torch.iinfo(torch.int64).min, torch.iinfo(torch.int64).max
_FLOAT32_MAX = float(torch.finfo(torch.float32).max)
_TOKEN = re.compile(r"\s*(\[|\]|,|[^\[\],]+)")


def parse_cells(text: str, name: str) -> Any:
    """Split a nested-list literal into nested lists of *cell strings* (no conversion yet).

    ``"[[1, 2], [3, x]]"`` -> ``[["1", "2"], ["3", "x"]]``; a bare ``"6"`` -> ``"6"``.

    Raises:
        IndexingError: unbalanced brackets or stray commas, with the place named.
    """
    text = (text or "").strip()
    if not text:
        raise IndexingError(
            T(
                "{name} is empty: type a value or a nested list like [[1, 2], [3, 4]]",
                name=name,
            )
        )
    if not text.startswith("["):
        if "]" in text or "," in text:
            raise IndexingError(
                T(
                    "{name}: {text!r} must start with '[' (or be a single number)",
                    name=name,
                    text=text,
                )
            )
        return text
    tokens = [m.group(1).strip() for m in _TOKEN.finditer(text)]
    if "".join(tokens).replace(" ", "") != re.sub(r"\s+", "", text):
        raise IndexingError(
            T(
                "{name}: could not read {text!r}",
                name=name,
                text=text,
            )
        )
    stack: list[list[Any]] = []
    root: list[Any] | None = None
    expect_item = True
    for tok in tokens:
        if tok == "[":
            if root is not None and not stack:
                raise IndexingError(
                    T(
                        "{name}: extra text after the closing ']' in {text!r}",
                        name=name,
                        text=text,
                    )
                )
            new: list[Any] = []
            if stack:
                if not expect_item:
                    raise IndexingError(
                        T(
                            "{name}: missing ',' before '[' in {text!r}",
                            name=name,
                            text=text,
                        )
                    )
                stack[-1].append(new)
            else:
                root = new
            stack.append(new)
            expect_item = True
        elif tok == "]":
            if not stack:
                raise IndexingError(
                    T(
                        "{name}: unbalanced ']' in {text!r}",
                        name=name,
                        text=text,
                    )
                )
            stack.pop()
            expect_item = False
        elif tok == ",":
            if expect_item or not stack:
                raise IndexingError(
                    T(
                        "{name}: stray ',' in {text!r}",
                        name=name,
                        text=text,
                    )
                )
            expect_item = True
        else:
            if not stack:
                raise IndexingError(
                    T(
                        "{name}: extra text {tok!r} outside the brackets",
                        name=name,
                        tok=tok,
                    )
                )
            if not expect_item:
                raise IndexingError(
                    T(
                        "{name}: missing ',' before {tok!r}",
                        name=name,
                        tok=tok,
                    )
                )
            stack[-1].append(tok)
            expect_item = False
    if stack:
        raise IndexingError(
            T(
                "{name}: missing ']' at the end of {text!r}",
                name=name,
                text=text,
            )
        )
    return root


def _cell_number(cell: str, name: str, pos: Pos) -> int | float | bool:
    s = cell.strip()
    if s in ("True", "False", "true", "false"):
        return s.lower() == "true"
    try:
        i = int(s)
    except ValueError:
        pass
    else:
        if not _INT64_MIN <= i <= _INT64_MAX:
            raise IndexingError(
                T(
                    "{name}{pos} = {s}: whole numbers must fit in int64 ({_INT64_MIN} to "
                    "{_INT64_MAX}); write a large value as a float such as 1e20",
                    name=name,
                    pos=format_pos(pos),
                    s=s,
                    _INT64_MIN=_INT64_MIN,
                    _INT64_MAX=_INT64_MAX,
                )
            )
        return i
    try:
        v = float(s)
    except ValueError:
        raise IndexingError(
            T(
                "{name}{pos} = {s!r} is not a number: every cell must hold a number",
                name=name,
                pos=format_pos(pos),
                s=s,
            )
        ) from None
    if math.isnan(v) or math.isinf(v):
        raise IndexingError(
            T(
                "{name}{pos} = {s!r}: use finite numbers only",
                name=name,
                pos=format_pos(pos),
                s=s,
            )
        )
    if abs(v) > _FLOAT32_MAX:
        raise IndexingError(
            T(
                "{name}{pos} = {s!r} is too large for float32 (the page's float dtype, largest "
                "{_FLOAT32_MAX:.4g}): use a smaller number",
                name=name,
                pos=format_pos(pos),
                s=s,
                _FLOAT32_MAX=_FLOAT32_MAX,
            )
        )
    return v


def cells_shape(cells: Any, name: str) -> tuple[int, ...]:
    """Shape of nested cell lists; raises IndexingError when ragged."""
    if not isinstance(cells, list):
        return ()
    if len(cells) == 0:
        return (0,)
    shapes = {cells_shape(c, name) for c in cells}
    if len(shapes) != 1:
        raise IndexingError(
            T(
                "{name} is ragged: its rows have different lengths or depths; every row along a "
                "dim must have the same length",
                name=name,
            )
        )
    return (len(cells), *shapes.pop())


def check_page_limits(shape: Sequence[int], name: str) -> None:
    """Raise if ``shape`` is empty or larger than the page shows (see :data:`PAGE_LIMITS`)."""
    shape = tuple(int(s) for s in shape)
    if len(shape) == 0:
        raise IndexingError(
            T(
                "{name} must be a list (1 to 3 dims), got a single number",
                name=name,
            )
        )
    if len(shape) not in PAGE_LIMITS:
        raise IndexingError(
            T(
                "{name} has {ndim} dims; the page shows 1 to 3 dims",
                name=name,
                ndim=len(shape),
            )
        )
    if 0 in shape:
        raise IndexingError(
            T(
                "{name} is empty (shape {shape}): give every dim at least one value",
                name=name,
                shape=shape,
            )
        )
    limit = PAGE_LIMITS[len(shape)]
    if any(s > m for s, m in zip(shape, limit, strict=True)):
        lim = "x".join(map(str, limit))
        raise IndexingError(
            T(
                "{name} has shape {shape}, over the page limit of {lim} for {ndim}-D tensors: "
                "use fewer rows or columns",
                name=name,
                shape="x".join(map(str, shape)),
                lim=lim,
                ndim=len(shape),
            )
        )


def tensor_from_cells(
    cells: Any, name: str, *, kind: Literal["values", "index", "mask"] = "values"
) -> torch.Tensor:
    """Convert nested cell strings to a tensor and check the page limits.

    Args:
        cells: nested lists of strings, as :func:`parse_cells` returns.
        name: operand name used in messages (``"index"``, ``"input"`` ...).
        kind: ``"values"`` -> int64 when every cell is an integer, else float32;
            ``"index"`` -> int64 (float cells are refused); ``"mask"`` -> bool.

    Returns:
        A tensor with 1 to 3 dims within :data:`PAGE_LIMITS`.
    """
    shape = cells_shape(cells, name)
    check_page_limits(shape, name)
    flat: list[int | float | bool] = []
    for pos in itertools.product(*(range(s) for s in shape)):
        c: Any = cells
        for p in pos:
            c = c[p]
        flat.append(_cell_number(c, name, pos))
    if kind == "index":
        for pos, v in zip(itertools.product(*(range(s) for s in shape)), flat, strict=True):
            if isinstance(v, (float, bool)):
                raise IndexingError(
                    T(
                        "{name}{pos} = {v!r}: an index must hold whole numbers (torch needs an "
                        "int64 index tensor); write 2, not 2.0 or True",
                        name=name,
                        pos=format_pos(pos),
                        v=v,
                    )
                )
        return torch.tensor(flat, dtype=torch.int64).reshape(shape)
    if kind == "mask":
        return torch.tensor([bool(v) for v in flat], dtype=torch.bool).reshape(shape)
    if any(isinstance(v, float) for v in flat):
        return torch.tensor([float(v) for v in flat], dtype=torch.float32).reshape(shape)
    return torch.tensor([int(v) for v in flat], dtype=torch.int64).reshape(shape)


def parse_tensor(
    text: str, name: str, *, kind: Literal["values", "index", "mask"] = "values"
) -> torch.Tensor:
    """Parse a nested list like ``"[[1, 2], [3, 4]]"`` into a tensor (:func:`tensor_from_cells`).

    >>> parse_tensor("[[0, 0], [2, 0]]", "index", kind="index").shape
    torch.Size([2, 2])
    """
    cells = parse_cells(text, name)
    if not isinstance(cells, list):
        raise IndexingError(
            T(
                "{name} must be a list such as [[0, 1], [2, 0]], got the single value {cells!r}",
                name=name,
                cells=cells,
            )
        )
    return tensor_from_cells(cells, name, kind=kind)


def parse_src(text: str) -> torch.Tensor | int | float:
    """``src`` of a scatter: a bare number (scalar, e.g. ``6`` or ``1.23``) or a nested list."""
    cells = parse_cells(text, "src")
    if isinstance(cells, list):
        return tensor_from_cells(cells, "src")
    v = _cell_number(cells, "src", ())
    return int(v) if isinstance(v, bool) else v


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


def format_tensor(t: torch.Tensor) -> str:
    """The page's editable text for a tensor: a nested list literal."""
    return tensor_literal(t)


_GRID_JUNK = re.compile(r"[\[\],]")


def cells_to_tables(cells: Any) -> list[list[list[str]]] | None:
    """2-D string tables for the page's grid editors: 1-D -> one row, 2-D -> itself,
    3-D -> one table per slice along dim 0. ``None`` when ``cells`` is no 1-3-D nested list."""
    if not isinstance(cells, list) or not cells:
        return None
    try:
        shape = cells_shape(cells, "tensor")
    except IndexingError:
        return None
    if 0 in shape:
        return None
    if len(shape) == 1:
        return [[[str(c) for c in cells]]]
    if len(shape) == 2:
        return [[[str(c) for c in row] for row in cells]]
    if len(shape) == 3:
        return [[[str(c) for c in row] for row in sl] for sl in cells]
    return None


def apply_grid_edits(
    text: str, name: str, table: int, edited_rows: dict[Any, dict[Any, Any]]
) -> str:
    """Apply a ``st.data_editor`` edit (``edited_rows``: row -> {column: value}) made on grid
    ``table`` of the tensor whose text is ``text``; returns the new text.

    Brackets and commas typed into a cell are dropped and an emptied cell becomes ``"?"``, so the
    text stays a well-formed nested list and the bad cell is reported by :func:`parse_tensor`.
    """
    cells = parse_cells(text, name)
    tables = cells_to_tables(cells)
    if tables is None or not 0 <= table < len(tables):
        return text
    depth = len(cells_shape(cells, name))
    grid = tables[table]
    for row, changes in edited_rows.items():
        for col, value in changes.items():
            r, c = int(row), int(col)
            if 0 <= r < len(grid) and 0 <= c < len(grid[r]):
                cleaned = _GRID_JUNK.sub(" ", "" if value is None else str(value)).strip()
                grid[r][c] = cleaned or "?"
    new: Any = tables[0][0] if depth == 1 else (tables[0] if depth == 2 else tables)
    return cells_to_text(new)


def cells_to_text(cells: Any) -> str:
    """Inverse of :func:`parse_cells`: nested lists of cell strings -> nested list text."""
    if not isinstance(cells, list):
        return str(cells).strip()
    return "[" + ", ".join(cells_to_text(c) for c in cells) + "]"


# --------------------------------------------------------------------------------------------
# Validation shared by gather / scatter
# --------------------------------------------------------------------------------------------


def _check_tensor(t: Any, name: str) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise IndexingError(
            T(
                "{name} must be a torch.Tensor, got {type}",
                name=name,
                type=type(t).__name__,
            )
        )
    return t


def normalize_dim(dim: int, ndim: int, name: str = "input") -> int:
    """``dim`` in ``[-ndim, ndim)`` -> its non-negative form, else a helpful error."""
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise IndexingError(
            T(
                "dim must be an integer, got {dim!r}",
                dim=dim,
            )
        )
    dim = int(dim)
    if ndim == 0:
        raise IndexingError(
            T(
                "{name} is 0-d: there is no dim to index along",
                name=name,
            )
        )
    if not -ndim <= dim < ndim:
        raise IndexingError(
            T(
                "dim={dim} is out of range for the {ndim}-D {name}: choose a dim between {low} "
                "and {high}",
                dim=dim,
                ndim=ndim,
                name=name,
                low=-ndim,
                high=ndim - 1,
            )
        )
    return dim % ndim


def _check_index_tensor(index: Any, ref: torch.Tensor, ref_name: str, dim: int) -> torch.Tensor:
    index = _check_tensor(index, "index")
    if index.dtype != torch.int64:
        kind = "float" if index.dtype.is_floating_point else str(index.dtype)
        raise IndexingError(
            T(
                "index has dtype {dtype} ({kind}); gather/scatter need an int64 index of whole "
                "numbers (index.long() converts it)",
                dtype=index.dtype,
                kind=kind,
            )
        )
    if index.dim() != ref.dim():
        raise IndexingError(
            T(
                "index has {index_ndim} dim(s) but {ref_name} has {ref_ndim}: gather/scatter "
                "need an index with the same number of dims (torch does not broadcast it); e.g. "
                "[[0], [2]] instead of [0, 2] for a 2-D {ref_name}",
                index_ndim=index.dim(),
                ref_name=ref_name,
                ref_ndim=ref.dim(),
            )
        )
    for d in range(ref.dim()):
        if d != dim and index.shape[d] > ref.shape[d]:
            raise IndexingError(
                T(
                    "index.size({d}) = {index_size} is larger than {ref_name}.size({d}) = "
                    "{ref_size}: outside dim {dim} the index may not be bigger than {ref_name}",
                    d=d,
                    index_size=index.shape[d],
                    ref_name=ref_name,
                    ref_size=ref.shape[d],
                    dim=dim,
                )
            )
    return index


def _check_index_values(index: torch.Tensor, size: int, dim: int, ref_name: str) -> None:
    """Pre-check index values (used off-CPU, where torch's own check is a fatal device assert)."""
    if index.numel() == 0:
        return
    lo, hi = int(index.min()), int(index.max())
    if lo < 0 or hi >= size:
        bad = lo if lo < 0 else hi
        raise IndexingError(
            T(
                "index value {bad} is out of range for dim {dim} of {ref_name} (size {size}): "
                "gather/scatter accept 0 to {high}, negative indices are not allowed",
                bad=bad,
                dim=dim,
                ref_name=ref_name,
                size=size,
                high=size - 1,
            )
        )


def _torch_failure(err: Exception, hint: str) -> IndexingError:
    text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return IndexingError(
        T(
            "torch refused: {text}. {hint}",
            text=text,
            hint=hint,
        ),
        torch_error=text,
        hint=hint,
    )


def _dest_pos(pos: Pos, dim: int, value: int) -> Pos:
    return pos[:dim] + (value,) + pos[dim + 1 :]


def positions(shape: Sequence[int]) -> itertools.product:
    """Every position of ``shape`` in row-major order (one empty tuple for a 0-d shape)."""
    return itertools.product(*(range(int(s)) for s in shape))


# --------------------------------------------------------------------------------------------
# gather
# --------------------------------------------------------------------------------------------


def trace_gather(input: torch.Tensor, dim: int, index: torch.Tensor) -> Trace:
    """Run ``torch.gather(input, dim, index)`` and link every output element to its source.

    ``out[p] = input[p with p[dim] replaced by index[p]]``.

    Args:
        input: (any shape, >= 1 dim) tensor of any dtype.
        dim: the dim along which ``index`` picks, ``-input.dim() <= dim < input.dim()``.
        index: int64 tensor with ``input``'s number of dims and
            ``index.size(d) <= input.size(d)`` for ``d != dim``; values in
            ``[0, input.size(dim))`` (checked by torch).

    Returns:
        Trace with ``result`` (index's shape, input's dtype) and ``links`` = ``(out_pos, in_pos)``.

    Raises:
        IndexingError (a ValueError): bad shapes, dtype or dim (before torch), or torch's own
            error text for out-of-range values (``torch_error`` set).

    >>> t = trace_gather(torch.tensor([[1, 2, 3], [4, 5, 6]]), 1, torch.tensor([[0, 0], [2, 0]]))
    >>> t.result.tolist(), t.links[2]
    ([[1, 1], [6, 4]], ((1, 0), (1, 2)))
    """
    input = _check_tensor(input, "input")
    d = normalize_dim(dim, input.dim(), "input")
    index = _check_index_tensor(index, input, "input", d)
    if input.device.type != "cpu":
        _check_index_values(index, input.shape[d], d, "input")
    try:
        result = torch.gather(input, d, index)
    except (RuntimeError, IndexError) as err:
        raise _torch_failure(
            err,
            T(
                "gather picks along dim {d}, so every index value must lie in 0..{high} (no "
                "negative values).",
                d=d,
                high=input.shape[d] - 1,
            ),
        ) from err
    idx = index.cpu()
    links = [(pos, _dest_pos(pos, d, int(idx[pos]))) for pos in positions(index.shape)]
    return Trace(
        op="gather",
        call=f"torch.gather(input, {dim}, index)",
        operands={"input": input, "index": index},
        result=result,
        links=links,
        dim=d,
    )


# --------------------------------------------------------------------------------------------
# scatter
# --------------------------------------------------------------------------------------------


def scatter_call(dim: int, src_text: str, reduce: str | None, include_self: bool) -> str:
    """The Python expression :func:`trace_scatter` runs, with ``dest``/``index`` names."""
    if reduce is None:
        return f"dest.clone().scatter_({dim}, index, {src_text})"
    if reduce == _SCATTER_ADD:
        return f"dest.clone().scatter_add_({dim}, index, {src_text})"
    if reduce in _LEGACY_REDUCES:
        return f"dest.clone().scatter_({dim}, index, {src_text}, reduce={reduce!r})"
    return (
        f"dest.clone().scatter_reduce_({dim}, index, {src_text}, {reduce!r}, "
        f"include_self={include_self})"
    )


def trace_scatter(
    dest: torch.Tensor,
    dim: int,
    index: torch.Tensor,
    src: torch.Tensor | Scalar,
    reduce: str | None = None,
    *,
    include_self: bool = True,
) -> Trace:
    """Run the real scatter on a clone of ``dest`` and link every ``index`` element to its target.

    ``out[p with p[dim] replaced by index[p]] (op)= src[p]`` for every position ``p`` of index.

    Args:
        dest: (any shape, >= 1 dim) tensor; it is cloned, never modified.
        dim: ``-dest.dim() <= dim < dest.dim()``.
        index: int64 tensor, same number of dims as ``dest``; ``index.size(d) <= src.size(d)``
            for all d and ``index.size(d) <= dest.size(d)`` for ``d != dim``.
        src: tensor with ``dest``'s dtype and number of dims, or a Python scalar.
        reduce: ``None`` (plain ``scatter_``), ``"scatter_add"`` (``scatter_add_``, tensor
            ``src`` only), ``"add"``/``"multiply"`` (deprecated ``scatter_(..., reduce=...)``)
            or a ``scatter_reduce_`` mode ``"sum"``, ``"prod"``, ``"mean"``,
            ``"amax"``, ``"amin"`` (tensor ``src`` only).
        include_self: for the ``scatter_reduce_`` modes: whether ``dest``'s own value joins the
            reduction.

    Returns:
        Trace with ``result`` (dest's shape and dtype), ``links`` = ``(src_pos, dest_pos)``,
        ``collisions`` and, for ``reduce=None``, ``winners``.

    Raises:
        IndexingError (a ValueError): bad shapes/dtypes/dim/reduce, or torch's error text.
    """
    dest = _check_tensor(dest, "dest")
    if reduce not in SCATTER_REDUCES:
        raise IndexingError(
            f"reduce={reduce!r} is not supported; use one of "
            + ", ".join(repr(r) for r in SCATTER_REDUCES)
        )
    d = normalize_dim(dim, dest.dim(), "dest")
    index = _check_index_tensor(index, dest, "dest", d)
    scalar = not isinstance(src, torch.Tensor)
    if scalar:
        if isinstance(src, bool) or not isinstance(src, (int, float, np.integer, np.floating)):
            raise IndexingError(
                T(
                    "src must be a tensor or a number, got {src!r}",
                    src=src,
                )
            )
        if reduce in _REDUCE_MODES:
            raise IndexingError(
                T(
                    "scatter_reduce_ (reduce={reduce!r}) needs a tensor src, got the scalar "
                    "{src}: type src as a list shaped like index, or use reduce='add'/'multiply'",
                    reduce=reduce,
                    src=src,
                )
            )
        if reduce == _SCATTER_ADD:
            raise IndexingError(
                T(
                    "scatter_add_ needs a tensor src, got the scalar {src}: type src as a list "
                    "shaped like index",
                    src=src,
                )
            )
        src = src.item() if isinstance(src, (np.integer, np.floating)) else src
    else:
        if src.dim() != dest.dim():
            raise IndexingError(
                T(
                    "src has {src_ndim} dim(s) but dest has {dest_ndim}: give src the same "
                    "number of dims (torch does not broadcast src)",
                    src_ndim=src.dim(),
                    dest_ndim=dest.dim(),
                )
            )
        for k in range(dest.dim()):
            if index.shape[k] > src.shape[k]:
                raise IndexingError(
                    T(
                        "index.size({k}) = {index_size} is larger than src.size({k}) = "
                        "{src_size}: every index element needs a src element at the same place",
                        k=k,
                        index_size=index.shape[k],
                        src_size=src.shape[k],
                    )
                )
        if src.dtype != dest.dtype:
            raise IndexingError(
                T(
                    "src has dtype {src_dtype} but dest has {dest_dtype}: scatter needs the same "
                    "dtype (write 1.0 instead of 1, or convert with .to(dest.dtype))",
                    src_dtype=src.dtype,
                    dest_dtype=dest.dtype,
                )
            )
    if dest.device.type != "cpu":
        _check_index_values(index, dest.shape[d], d, "dest")

    src_text = repr(src) if scalar else "src"
    call = scatter_call(dim, src_text, reduce, include_self)
    out = dest.clone()
    caught: list[str] = []
    try:
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            if reduce is None:
                out.scatter_(d, index, src)
            elif reduce == _SCATTER_ADD:
                out.scatter_add_(d, index, src)
            elif reduce in _LEGACY_REDUCES:
                out.scatter_(d, index, src, reduce=reduce)
            else:
                out.scatter_reduce_(d, index, src, reduce, include_self=include_self)
        caught = [str(w.message).split(" (Triggered internally")[0] for w in rec]
        if reduce in _LEGACY_REDUCES and not any("deprecated" in c for c in caught):
            # torch warns once per process (TORCH_WARN_ONCE); the lesson must say it every time.
            caught.append(
                f"scatter_(..., reduce={reduce!r}) is deprecated in torch; "
                "use scatter_reduce_ (modes sum/prod/mean/amax/amin) instead."
            )
    except (RuntimeError, IndexError, OverflowError) as err:
        raise _torch_failure(
            err,
            T(
                "scatter writes along dim {d}, so every index value must lie in 0..{high} (no "
                "negative values).",
                d=d,
                high=dest.shape[d] - 1,
            ),
        ) from err

    idx = index.cpu()
    links: list[tuple[Pos, Pos]] = []
    targets: dict[Pos, list[Pos]] = {}
    for pos in positions(index.shape):
        dpos = _dest_pos(pos, d, int(idx[pos]))
        links.append((pos, dpos))
        targets.setdefault(dpos, []).append(pos)
    collisions = {k: tuple(v) for k, v in targets.items() if len(v) > 1}
    winners: dict[Pos, Pos] = {}
    if reduce is None and not scalar:
        res, s = out.cpu(), src.cpu()
        for dpos, cands in collisions.items():
            hits = [c for c in cands if bool(s[c] == res[dpos])]
            if len({s[c].item() for c in hits}) == 1 and len(hits) == 1:
                winners[dpos] = hits[0]
    operands = {
        "dest": dest,
        "index": index,
        "src": torch.tensor(src) if scalar else src,
    }
    return Trace(
        op="scatter",
        call=call,
        operands=operands,
        result=out,
        links=links,
        collisions=collisions,
        winners=winners,
        dim=d,
        reduce=reduce,
        include_self=include_self,
        scalar_src=scalar,
        warnings=tuple(caught),
    )


# --------------------------------------------------------------------------------------------
# x[...] indexing
# --------------------------------------------------------------------------------------------


def _normalize_items(indices: Any) -> tuple[IndexItem, ...]:
    items = indices if isinstance(indices, tuple) else (indices,)
    out: list[IndexItem] = []
    for k, it in enumerate(items):
        if isinstance(it, torch.Tensor):
            if it.dtype.is_floating_point or it.is_complex():
                raise IndexingError(
                    T(
                        "index item {k} is a {dtype} tensor: indices must be integers (int64) or "
                        "a boolean mask; .long() converts it",
                        k=k,
                        dtype=it.dtype,
                    )
                )
        elif isinstance(it, float):
            raise IndexingError(
                T(
                    "index item {k} is the float {it}: indices must be integers",
                    k=k,
                    it=it,
                )
            )
        elif isinstance(it, (list, np.ndarray)):
            it = torch.as_tensor(it)
            if it.dtype.is_floating_point:
                raise IndexingError(
                    T(
                        "index item {k} holds floats: indices must be integers",
                        k=k,
                    )
                )
        elif not (it is None or it is Ellipsis or isinstance(it, (int, slice, np.integer))):
            raise IndexingError(
                T(
                    "index item {k} ({it!r}) is not a supported index",
                    k=k,
                    it=it,
                )
            )
        out.append(it)
    return tuple(out)


def format_index_items(items: Sequence[IndexItem], *, as_code: bool = True) -> str:
    """``(slice(None), tensor([0, 2]))`` -> ``":, torch.tensor([0, 2])"`` (or ``"[0, 2]"``)."""
    parts = []
    for it in items:
        if it is None:
            parts.append("None")
        elif it is Ellipsis:
            parts.append("...")
        elif isinstance(it, slice):
            a = "" if it.start is None else str(it.start)
            b = "" if it.stop is None else str(it.stop)
            parts.append(f"{a}:{b}" + ("" if it.step is None else f":{it.step}"))
        elif isinstance(it, torch.Tensor):
            parts.append(tensor_code(it) if as_code else tensor_literal(it))
        else:
            parts.append(repr(it))
    if not parts:
        return "()"
    return ", ".join(parts)


def trace_index(x: torch.Tensor, indices: Any) -> Trace:
    """Run ``x[indices]`` and link every result element to the element of ``x`` it came from.

    The links come from applying the very same ``indices`` to a tensor of flat addresses
    (``arange(x.numel()).reshape(x.shape)``), so they follow torch's own rules for every mix
    of slices, ints, ``None``, ``...``, integer tensors and boolean masks. ``is_view`` is
    measured: ``result.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()``.

    Args:
        x: any tensor with at least one element.
        indices: one index item or a tuple of them (int, slice, None, Ellipsis, bool, int64
            tensor / list, bool tensor).

    Returns:
        Trace with ``result``, ``links`` = ``(out_pos, in_pos)``, ``is_view`` and ``storage``.

    Raises:
        IndexingError (a ValueError): float indices, unsupported items, or torch's error text.

    >>> t = trace_index(torch.arange(6).reshape(2, 3), (slice(None), torch.tensor([0, 2])))
    >>> t.result.tolist(), t.is_view
    ([[0, 2], [3, 5]], False)
    """
    x = _check_tensor(x, "x")
    items = _normalize_items(indices)
    key = items if len(items) != 1 else items[0]
    try:
        result = x[key]
        addresses = torch.arange(x.numel()).reshape(x.shape)[key]
    except (IndexError, RuntimeError, TypeError, ValueError) as err:
        raise _torch_failure(
            err,
            N_(
                "Check that every integer lies in -size..size-1 of its dim, that a mask has the "
                "shape of the dims it covers, and that there are no more items than x has dims."
            ),
        ) from err
    shape = tuple(x.shape)
    links: list[tuple[Pos, Pos]] = []
    addr = addresses.cpu()
    for pos in positions(result.shape):
        flat = int(addr[pos])
        links.append((pos, tuple(int(v) for v in np.unravel_index(flat, shape)) if shape else ()))
    storage = StorageReport(
        source_ptr=x.untyped_storage().data_ptr(),
        result_ptr=result.untyped_storage().data_ptr(),
        source_offset=x.storage_offset(),
        result_offset=result.storage_offset(),
        result_stride=tuple(result.stride()),
    )
    text = format_index_items(items)
    return Trace(
        op="index",
        call=f"x[{text}]",
        operands={"x": x},
        result=result,
        links=links,
        is_view=storage.same_storage,
        storage=storage,
        index_text=format_index_items(items, as_code=False),
    )


def parse_index_expression(text: str) -> tuple[IndexItem, ...]:
    """Parse what goes between the brackets of ``x[...]`` without ``eval``.

    Accepts ints, slices (``1:``, ``::2``, ``-2:``), ``None``, ``...``, ``True``/``False``,
    integer lists (-> int64 tensors) and boolean lists (-> masks), e.g. ``":, [0, 2]"``.

    Raises:
        IndexingError: float indices, names, calls or anything else.
    """
    text = (text or "").strip()
    if not text:
        raise IndexingError(N_("the index expression is empty: type e.g. ':, [0, 2]' or '1:, ::2'"))
    if len(text) > 400:
        raise IndexingError(N_("the index expression is too long for this page (400 characters)"))
    try:
        node = ast.parse(f"_[{text}]", mode="eval").body
    except SyntaxError:
        raise IndexingError(
            T(
                "could not read the index expression {text!r}",
                text=text,
            )
        ) from None
    assert isinstance(node, ast.Subscript)
    sl = node.slice
    elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    return tuple(_index_node(e, text) for e in elts)


def _int_node(n: ast.AST | None, text: str) -> int | None:
    if n is None:
        return None
    if isinstance(n, ast.Constant) and n.value is None:
        return None
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        v = _int_node(n.operand, text)
        return None if v is None else -v
    if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
        return n.value
    if isinstance(n, ast.Constant) and isinstance(n.value, float):
        raise IndexingError(
            T(
                "{value} is a float: indices must be whole numbers",
                value=n.value,
            )
        )
    piece = ast.get_source_segment(f"_[{text}]", n) if n is not None else None
    raise IndexingError(
        T(
            "in {text!r}: {piece!r} is not a whole number; slices and index lists take plain "
            "numbers such as 2 or -1 (lists may also hold True/False), no arithmetic",
            text=text,
            piece=piece or "this part",
        )
    )


def _list_values(n: ast.AST, text: str) -> Any:
    if isinstance(n, (ast.List, ast.Tuple)):
        return [_list_values(e, text) for e in n.elts]
    if isinstance(n, ast.Constant) and isinstance(n.value, bool):
        return n.value
    if isinstance(n, ast.Constant) and isinstance(n.value, float):
        raise IndexingError(
            T(
                "{value} is a float: an index list must hold whole numbers (or True/False)",
                value=n.value,
            )
        )
    v = _int_node(n, text)
    if v is None:
        raise IndexingError(
            T(
                "None is not allowed inside an index list in {text!r}",
                text=text,
            )
        )
    return v


def _index_node(n: ast.AST, text: str) -> IndexItem:
    if isinstance(n, ast.Slice):
        return slice(_int_node(n.lower, text), _int_node(n.upper, text), _int_node(n.step, text))
    if isinstance(n, ast.Constant):
        if n.value is None or n.value is Ellipsis:
            return n.value
        if isinstance(n.value, bool):
            return n.value
        if isinstance(n.value, int):
            return n.value
        if isinstance(n.value, float):
            raise IndexingError(
                T(
                    "{value} is a float: indices must be whole numbers",
                    value=n.value,
                )
            )
    if isinstance(n, ast.UnaryOp):
        return _int_node(n, text)
    if isinstance(n, (ast.List, ast.Tuple)):
        values = _list_values(n, text)
        flat = list(_flatten(values))
        if len(flat) > MAX_INDEX_LIST:
            raise IndexingError(
                T(
                    "index lists are limited to {MAX_INDEX_LIST} values on this page",
                    MAX_INDEX_LIST=MAX_INDEX_LIST,
                )
            )
        kinds = {type(v) for v in flat}
        too_big = [v for v in flat if type(v) is int and not _INT64_MIN <= v <= _INT64_MAX]
        if too_big:
            raise IndexingError(
                T(
                    "index value {value} does not fit in int64",
                    value=too_big[0],
                )
            )
        if kinds == {bool}:
            return _as_tensor(values, torch.bool)
        if bool in kinds:
            raise IndexingError(N_("an index list mixes True/False with numbers: use one kind"))
        return _as_tensor(values, torch.int64)
    raise IndexingError(
        T(
            "{piece!r} is not supported here: use numbers, slices like 1:3, None, ..., and lists "
            "of integers or of True/False",
            piece=ast.get_source_segment(f"_[{text}]", n) or text,
        )
    )


def _flatten(v: Any) -> Any:
    if isinstance(v, list):
        for e in v:
            yield from _flatten(e)
    else:
        yield v


def _as_tensor(values: Any, dtype: torch.dtype) -> torch.Tensor:
    try:
        return torch.tensor(values, dtype=dtype)
    except (ValueError, TypeError) as err:
        raise IndexingError(
            T(
                "an index list is ragged ({err}); make all rows the same length",
                err=err,
            )
        ) from None


# --------------------------------------------------------------------------------------------
# Explaining one element
# --------------------------------------------------------------------------------------------


def _val(t: torch.Tensor, pos: Pos) -> str:
    return format_value(t[pos].item() if pos else t.item())


def explain_element(trace: Trace, out_pos: Sequence[int]) -> Explanation:
    """The formula with real numbers for ``trace.result[out_pos]`` and the cells it came from.

    Gather example: ``out[1][0] = input[1][index[1][0]] = input[1][2] = 6``.

    Raises:
        IndexingError: ``out_pos`` is not a position of ``trace.result``.
    """
    pos = tuple(int(p) for p in out_pos)
    shape = tuple(trace.result.shape)
    if len(pos) != len(shape) or any(not 0 <= p < s for p, s in zip(pos, shape, strict=True)):
        raise IndexingError(
            T(
                "out{pos} is not an element of a result of shape {shape}",
                pos=format_pos(pos),
                shape=shape,
            )
        )
    res = trace.result.cpu()
    value = _val(res, pos)
    if trace.op == "gather":
        d = trace.dim or 0
        in_pos = _dest_pos(pos, d, int(trace.operands["index"].cpu()[pos]))
        picked = "".join(
            f"[index{format_pos(pos)}]" if k == d else f"[{p}]" for k, p in enumerate(pos)
        )
        formula = f"out{format_pos(pos)} = input{picked} = input{format_pos(in_pos)} = {value}"
        note = T(
            "gather keeps every coordinate of out{pos} except dim {d}, which it "
            "reads from index{pos} = {value}.",
            pos=format_pos(pos),
            d=d,
            value=in_pos[d],
        )
        return Explanation(pos, formula, note, {"input": (in_pos,), "index": (pos,)})
    if trace.op == "index":
        in_pos = dict(trace.links)[pos]
        formula = f"out{format_pos(pos)} = x{format_pos(in_pos)} = {value}"
        template = (
            N_("x[{index}] maps out{pos} to x{in_pos}; the result is a view (same storage).")
            if trace.is_view
            else N_("x[{index}] maps out{pos} to x{in_pos}; the result is a copy (new storage).")
        )
        note = T(template, index=trace.index_text, pos=format_pos(pos), in_pos=format_pos(in_pos))
        return Explanation(pos, formula, note, {"x": (in_pos,)})
    return _explain_scatter(trace, pos, value)


def _explain_scatter(trace: Trace, pos: Pos, value: str) -> Explanation:
    d = trace.dim or 0
    dest, src = trace.operands["dest"].cpu(), trace.operands["src"].cpu()
    writers = [s for s, t in trace.links if t == pos]
    old = _val(dest, pos)

    def src_val(s: Pos) -> str:
        if not trace.scalar_src:
            return _val(src, s)
        text = format_value(src.item())
        if src.dtype.is_floating_point and not trace.result.dtype.is_floating_point:
            # torch casts the scalar to dest's dtype before writing it (1.23 -> 1 for int64)
            cast = src.to(trace.result.dtype)
            text += f" (cast to {str(trace.result.dtype).replace('torch.', '')}: {_val(cast, ())})"
        return text

    def src_name(s: Pos) -> str:
        return "scalar" if trace.scalar_src else f"src{format_pos(s)}"

    sources: dict[str, tuple[Pos, ...]] = {"index": tuple(writers)}
    if not trace.scalar_src:
        sources["src"] = tuple(writers)
    because = ", ".join(f"index{format_pos(w)} = {pos[d]}" for w in writers)
    if not writers:
        sources["dest"] = (pos,)
        formula = f"out{format_pos(pos)} = dest{format_pos(pos)} = {value}"
        note = N_("No index entry points at this cell, so it keeps dest's original value.")
        return Explanation(pos, formula, note, sources)
    r = trace.reduce
    if r is None:
        if len(writers) == 1:
            w = writers[0]
            formula = f"out{format_pos(pos)} = {src_name(w)} = {src_val(w)}"
            note = T("because {because} (scatter_ writes along dim {d}).", because=because, d=d)
        else:
            cands = " or ".join(f"{src_name(w)} = {src_val(w)}" for w in writers)
            formula = f"out{format_pos(pos)} = {cands} -> {value}"
            note = T(
                "COLLISION: {n} writes land here ({because}). Several index entries write to "
                "the same cell. With plain scatter_ (no reduce) the winner among these "
                "duplicate writes is unspecified: the CPU usually keeps the last one, but on "
                "CUDA it may differ from run to run (and the gradient flows to every "
                "duplicate). This run kept {value}.",
                n=len(writers),
                because=because,
                value=value,
            )
            assert note.endswith(f"{UNSPECIFIED_WINNER_NOTE} This run kept {value}.")
        return Explanation(pos, formula, note, sources)
    with_self = r in _LEGACY_REDUCES or r == _SCATTER_ADD or trace.include_self
    terms = [f"dest{format_pos(pos)}"] if with_self else []
    nums = [old] if with_self else []
    terms += [src_name(w) for w in writers]
    nums += [src_val(w) for w in writers]
    if with_self:
        sources["dest"] = (pos,)
    sym = {_SCATTER_ADD: " + ", "add": " + ", "sum": " + ", "multiply": " * ", "prod": " * "}.get(r)
    if sym:
        formula = f"out{format_pos(pos)} = {sym.join(terms)} = {sym.join(nums)} = {value}"
    else:
        fn = {"mean": "mean", "amax": "max", "amin": "min"}[r]
        formula = (
            f"out{format_pos(pos)} = {fn}({', '.join(terms)}) = {fn}({', '.join(nums)}) = {value}"
        )
    many = len(writers) > 1
    if r == _SCATTER_ADD:
        template = (
            N_(
                "because {because}; scatter_add_ adds every src value to dest's own. {n} writes "
                "meet here and are combined, so the order does not matter."
            )
            if many
            else N_("because {because}; scatter_add_ adds every src value to dest's own.")
        )
    elif r in _LEGACY_REDUCES:
        template = (
            N_(
                "because {because}; reduce={r!r}. {n} writes meet here and are combined, so the "
                "order does not matter."
            )
            if many
            else N_("because {because}; reduce={r!r}.")
        )
    else:
        template = (
            N_(
                "because {because}; reduce={r!r}, include_self={include_self}. {n} writes meet "
                "here and are combined, so the order does not matter."
            )
            if many
            else N_("because {because}; reduce={r!r}, include_self={include_self}.")
        )
    note = T(template, because=because, r=r, include_self=trace.include_self, n=len(writers))
    return Explanation(pos, formula, note, sources)


def position_from_selection(selection: Any, shape: Sequence[int]) -> Pos | None:
    """The output position clicked in the page's chart, or ``None``.

    ``selection`` is what ``st.plotly_chart(..., on_select="rerun")`` stores: a mapping with
    ``selection.points[*].customdata`` holding the full position (the page's figures put it
    there). Stale or foreign selections (wrong length, out of range) give ``None``.
    """
    try:
        points = selection["selection"]["points"]
    except (KeyError, TypeError):
        return None
    if not points:
        return None
    point = points[-1]
    data = point.get("customdata") if isinstance(point, dict) else None
    if data is None:
        return None
    if not isinstance(data, (list, tuple)):
        data = [data]
    try:
        pos = tuple(int(v) for v in data)
    except (TypeError, ValueError):
        return None
    shape = tuple(int(s) for s in shape)
    if len(pos) != len(shape) or any(not 0 <= p < s for p, s in zip(pos, shape, strict=True)):
        return None
    return pos


# --------------------------------------------------------------------------------------------
# Snippets (a test executes them and compares with the traces)
# --------------------------------------------------------------------------------------------


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
    items = _normalize_items(indices)
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


# --------------------------------------------------------------------------------------------
# Presets from the notes
# --------------------------------------------------------------------------------------------

#: The notes' ``x`` (002:919-920, a ``torch.rand(2, 5)``), as printed with 4 decimals.
_X_NOTES = "[[0.3992, 0.2908, 0.9044, 0.4850, 0.6004], [0.5735, 0.9006, 0.6797, 0.4152, 0.1732]]"
_X_NOTES_CODE = """# the notes' x = torch.rand(2, 5), as printed at 002:919-920
x = torch.tensor([[0.3992, 0.2908, 0.9044, 0.4850, 0.6004],
                  [0.5735, 0.9006, 0.6797, 0.4152, 0.1732]])
"""
_X_CHANGE = N_(
    "x = torch.rand(2, 5) is replaced by the values the notes print for it (002:919-920)."
)


def _zeros_text(rows: int, cols: int, *, floating: bool = True) -> str:
    cell = "0.0" if floating else "0"
    return "[" + ", ".join(["[" + ", ".join([cell] * cols) + "]"] * rows) + "]"


@dataclass(frozen=True)
class Preset:
    """An example from the notes (or a labelled variation of one), ready for the page.

    Attributes:
        key, title: identifier and the label of the page's preset menu.
        op, first, index, src, dim, reduce, include_self: what the page loads (``first`` is
            ``input`` for gather, ``dest`` for scatter; texts are nested lists).
        ref: where the example is in the notes, as ``FILE:LINE`` text (``"002:921"``).
        verbatim: ``True`` when inputs, dim and dtype are the notes' own: only then may the page
            say "from the notes". ``False``: a variation, labelled so on the page.
        expected: the output as a nested list, or ``None`` when the call raises.
        printed: whether the notes print ``expected`` (else it is what the notes' code gives,
            worked out from its inputs, because the notes print nothing there).
        decimals: the printed precision of ``expected`` (4 for ``0.3992``); ``None``: exact.
        expected_dtype: the dtype of the notes' result (``torch.zeros`` -> ``torch.float32``).
        notes_error: the error line the notes print for this call (``None`` if it runs).
        notes_code: the notes' code, runnable as-is; it leaves its result in ``notes_result``.
        notes_code_changes: what had to change in the notes' code for it to run ("" if nothing).
        note: a sentence the page shows under the preset.
        menu: the menu's label, written out (see :attr:`menu_label`).
    """

    key: str
    title: str
    op: Literal["gather", "scatter"]
    first: str
    index: str
    src: str
    dim: int
    ref: str
    verbatim: bool
    expected: Any = None
    printed: bool = True
    decimals: int | None = None
    expected_dtype: torch.dtype = torch.float32
    notes_error: str | None = None
    notes_code: str = ""
    notes_result: str = "out"
    notes_code_changes: str = ""
    reduce: str | None = None
    include_self: bool = True
    note: str = ""
    menu: str = ""

    def __post_init__(self) -> None:
        NotesRef.parse(self.ref)  # raises ValueError for a malformed reference
        source = cite(self.ref) if self.verbatim else f"variation of {cite(self.ref)}"
        if self.menu != f"{self.title} · {source}":  # a literal, so that the catalog holds it
            raise ValueError(f"menu of {self.key!r} must be {self.title} · {source}")

    @property
    def notes_ref(self) -> NotesRef:
        """:attr:`ref` as a :class:`core.notes.NotesRef`."""
        return NotesRef.parse(self.ref)

    @property
    def menu_label(self) -> str:
        """The preset menu's label, which is also the value a link carries for it
        (``?indexing.preset=...``): the title and where it comes from in the notes. One
        literal (:attr:`menu`, checked against both), so that it is one catalog message: a
        link's label is translated by exact lookup."""
        return self.menu


PRESETS: tuple[Preset, ...] = (
    Preset(
        "scatter_y1",
        "y1: zeros(3, 5).scatter_(0, index, x)",
        "scatter",
        _zeros_text(3, 5),
        "[[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]]",
        _X_NOTES,
        0,
        ref="002:921",
        verbatim=True,
        expected=[
            [0.3992, 0.9006, 0.6797, 0.4850, 0.6004],
            [0.0000, 0.2908, 0.0000, 0.4152, 0.0000],
            [0.5735, 0.0000, 0.9044, 0.0000, 0.1732],
        ],
        decimals=4,
        notes_code="import torch\n\n"
        + _X_NOTES_CODE
        + "y1 = torch.zeros(3, 5).scatter_(0, torch.tensor([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]]), x)"
        + "\nprint(y1)\n",
        notes_result="y1",
        notes_code_changes=_X_CHANGE,
        note=N_("Every x[i][j] goes to row index[i][j] of column j; no two land on the same cell."),
        menu=N_("y1: zeros(3, 5).scatter_(0, index, x) · notes 002:921"),
    ),
    Preset(
        "scatter_y2",
        "y2: the same x, index [[0, 1, 2, 0, 0], [0, 0, 0, 1, 2]] (column 0 collides)",
        "scatter",
        _zeros_text(3, 5),
        "[[0, 1, 2, 0, 0], [0, 0, 0, 1, 2]]",
        _X_NOTES,
        0,
        ref="002:926",
        verbatim=True,
        expected=[
            [0.5735, 0.9006, 0.6797, 0.4850, 0.6004],
            [0.0000, 0.2908, 0.0000, 0.4152, 0.0000],
            [0.0000, 0.0000, 0.9044, 0.0000, 0.1732],
        ],
        decimals=4,
        notes_code="import torch\n\n"
        + _X_NOTES_CODE
        + "y2 = torch.zeros(3, 5).scatter_(0, torch.tensor([[0, 1, 2, 0, 0], [0, 0, 0, 1, 2]]), x)"
        + "\nprint(y2)\n",
        notes_result="y2",
        notes_code_changes=_X_CHANGE,
        note=N_(
            "Only column 0 collides (notes 002:940): index[0][0] and index[1][0] are both 0, "
            "so x[0][0] and x[1][0] both write y2[0][0], and the notes printed x[1][0] there. "
            "Which of two duplicate writes wins is unspecified (see the collision note below)."
        ),
        menu=N_(
            "y2: the same x, index [[0, 1, 2, 0, 0], [0, 0, 0, 1, 2]] (column 0 collides)"
            " · notes 002:926"
        ),
    ),
    Preset(
        "scatter_scalar_6",
        "zeros(3, 5).scatter_(0, index, 6): a scalar value",
        "scatter",
        _zeros_text(3, 5),
        "[[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]]",
        "6",
        0,
        ref="002:946",
        verbatim=True,
        expected=[[6.0, 6.0, 6.0, 6.0, 6.0], [0.0, 6.0, 0.0, 6.0, 0.0], [6.0, 0.0, 6.0, 0.0, 6.0]],
        notes_code="import torch\n\n"
        "y1 = torch.zeros(3, 5).scatter_(0, torch.tensor([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]]), 6)"
        "\nprint(y1)\n",
        notes_result="y1",
        note=N_(
            "A scalar value is written at every place index names; dest is float (torch.zeros), "
            "so the 6 is stored as 6.0."
        ),
        menu=N_("zeros(3, 5).scatter_(0, index, 6): a scalar value · notes 002:946"),
    ),
    Preset(
        "scatter_scalar_123",
        "zeros(2, 4).scatter_(1, [[2], [3]], 1.23)",
        "scatter",
        _zeros_text(2, 4),
        "[[2], [3]]",
        "1.23",
        1,
        ref="002:964",
        verbatim=True,
        expected=[[0.0, 0.0, 1.23, 0.0], [0.0, 0.0, 0.0, 1.23]],
        decimals=4,
        notes_code="import torch\n\n"
        "z = torch.zeros(2, 4).scatter_(1, torch.tensor([[2], [3]]), 1.23)\nprint(z)\n",
        notes_result="z",
        note=N_("Row i gets 1.23 in column index[i][0]."),
        menu=N_("zeros(2, 4).scatter_(1, [[2], [3]], 1.23) · notes 002:964"),
    ),
    Preset(
        "one_hot_single",
        "one-hot of the single label 3: zeros(1, 10).scatter_(1, [[3]], 1)",
        "scatter",
        _zeros_text(1, 10),
        "[[3]]",
        "1",
        1,
        ref="002:980-992",
        verbatim=True,
        expected=[[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]],
        notes_code="""import numpy as np
import torch

index_a = np.array(3).astype('int64')
print("index_a的shape:", index_a.shape, "\\n", index_a)  # ()   3
index_a = index_a[np.newaxis, np.newaxis]
print("index_a的shape:", index_a.shape, "\\n", index_a)  # (1,1)   [[3]]
index_a = torch.from_numpy(index_a)  # torch.Size([1, 1])
one_hot = torch.zeros(1, 10).scatter_(1, index_a, 1)  # self[0][index[0][0]] = 1
print("one_hot的shape:", one_hot.shape, "\\n", one_hot)
""",
        notes_result="one_hot",
        note=N_("index has shape (1, 1), so one 1 goes to column index[0][0] = 3."),
        menu=N_(
            "one-hot of the single label 3: zeros(1, 10).scatter_(1, [[3]], 1) · notes 002:980-992"
        ),
    ),
    Preset(
        "one_hot",
        "one-hot of labels [[6], [0], [3], [2]], class_num 10",
        "scatter",
        _zeros_text(4, 10),
        "[[6], [0], [3], [2]]",
        "1",
        1,
        ref="002:997-1012",
        verbatim=True,
        expected=[
            [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        ],
        notes_code="""import torch

class_num = 10
batch_size = 4
label = torch.tensor([[6], [0], [3], [2]])  # class_num
print("label的shape:", label.shape, "\\n", label)
one_hot = torch.zeros(batch_size, class_num).scatter_(1, label, 1)
print("one_hot的shape:", one_hot.shape, "\\n", one_hot)
""",
        notes_result="one_hot",
        note=N_("label has one column, so each row gets exactly one 1, in column label[i][0]."),
        menu=N_("one-hot of labels [[6], [0], [3], [2]], class_num 10 · notes 002:997-1012"),
    ),
    Preset(
        "gather",
        "gather(input, 1, [[0, 0], [2, 0]])",
        "gather",
        "[[1, 2, 3], [4, 5, 6]]",
        "[[0, 0], [2, 0]]",
        "",
        1,
        ref="002:1035",
        verbatim=True,
        expected=[[1, 1], [6, 4]],
        expected_dtype=torch.int64,
        notes_code="""import torch

input = torch.tensor([[1,2,3],[4,5,6]])
output = torch.gather(input, 1, torch.tensor([[0,0],[2,0]]))
print(output)
""",
        notes_result="output",
        note=N_("out[i][j] = input[i][index[i][j]]; row 0 reads input[0][0] twice."),
        menu=N_("gather(input, 1, [[0, 0], [2, 0]]) · notes 002:1035"),
    ),
    Preset(
        "gather_out_of_range",
        "gather(input, 1, [[0, 0], [3, 0]]): index 3 is out of range",
        "gather",
        "[[1, 2, 3], [4, 5, 6]]",
        "[[0, 0], [3, 0]]",
        "",
        1,
        ref="002:1041",
        verbatim=True,
        expected_dtype=torch.int64,
        notes_error="RuntimeError: Invalid index in gather",
        notes_code="""import torch

input = torch.tensor([[1,2,3],[4,5,6]])
try:
    output = torch.gather(input, 1, torch.tensor([[0,0],[3,0]]))  # input.size(1) - 1 = 2
except RuntimeError as exc:
    error = str(exc)
    print(error)
""",
        notes_result="error",
        notes_code_changes=N_("The call is wrapped in try/except so that the error is printed."),
        note=N_("Row 1 has only 3 columns (0, 1, 2): torch refuses index 3."),
        menu=N_("gather(input, 1, [[0, 0], [3, 0]]): index 3 is out of range · notes 002:1041"),
    ),
    Preset(
        "group_means",
        "group means: zeros(3).scatter_add(0, idx, x), x = arange(1, 7)",
        "scatter",
        "[0.0, 0.0, 0.0]",
        "[0, 1, 0, 1, 2, 2]",
        "[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]",
        0,
        ref="002:204-211",
        verbatim=True,
        expected=[4.0, 6.0, 11.0],
        printed=False,
        reduce=_SCATTER_ADD,
        notes_code="""import torch

x = torch.arange(1, 7, dtype=torch.float)
idx = torch.tensor([0, 1, 0, 1, 2, 2])
idx_unique = idx.unique(sorted=True)
idx_unique_count = torch.stack([(idx==idx_u).sum() for idx_u in idx_unique])
res = torch.zeros(len(idx_unique)).scatter_add(0, idx, x)
res /= idx_unique_count.float()
print(res)
""",
        notes_result="res",
        notes_code_changes=N_("import torch is added."),
        note=N_(
            "scatter_add sums x per group; dividing by the group sizes gives the means. "
            "(torch.unique has had return_counts=True since the forum post the notes quote.)"
        ),
        menu=N_(
            "group means: zeros(3).scatter_add(0, idx, x), x = arange(1, 7) · notes 002:204-211"
        ),
    ),
    Preset(
        "one_hot_long_src",
        "one-hot, int64: zeros(4, 4).long().scatter_(1, labels, ones(4, 4).long())",
        "scatter",
        _zeros_text(4, 4, floating=False),
        "[[0], [2], [1], [3]]",
        "[[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]",
        1,
        ref="004:219-225",
        verbatim=True,
        expected=[[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1]],
        printed=False,
        expected_dtype=torch.int64,
        notes_code="""import torch

tensor = torch.tensor([0, 2, 1, 3])
N = tensor.size(0)
num_classes = 4
one_hot = torch.zeros(N, num_classes).long()
one_hot.scatter_(dim=1, index=torch.unsqueeze(tensor, dim=1),
                 src=torch.ones(N, num_classes).long())
print(one_hot)
""",
        notes_result="one_hot",
        notes_code_changes=N_("import torch is added; the long scatter_ line is broken in two."),
        note=N_(
            "A tensor src (all ones, int64) instead of the scalar 1: src[i][0] goes to "
            "column index[i][0]; the result stays int64."
        ),
        menu=N_(
            "one-hot, int64: zeros(4, 4).long().scatter_(1, labels, ones(4, 4).long())"
            " · notes 004:219-225"
        ),
    ),
    Preset(
        "one_hot_resize",
        "one-hot with label.resize_(batch_size, 1), fixed labels [3, 0, 2, 3]",
        "scatter",
        _zeros_text(4, 4),
        "[[3], [0], [2], [3]]",
        "1",
        1,
        ref="004:227-240",
        verbatim=False,
        expected=[
            [0.0, 0.0, 0.0, 1.0],
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ],
        printed=False,
        notes_code='''import torch


def one_hot(label):
    """
    将一维列表转换为独热编码
    """
    label = label.resize_(batch_size, 1)
    m_zeros = torch.zeros(batch_size, class_num)
    # 从 value 中取值，然后根据 dim 和 index 给相应位置赋值
    onehot = m_zeros.scatter_(1, label, 1)  # (dim,index,value)
    return onehot.numpy()  # Tensor -> Numpy


class_num = 4
batch_size = 4
# the notes: label = torch.LongTensor(batch_size).random_() % class_num  # 对随机数取余
label = torch.tensor([3, 0, 2, 3])
out = one_hot(label)
print(out)
''',
        notes_result="out",
        notes_code_changes=N_(
            "Indentation restored (the notes lost it); the random labels "
            "torch.LongTensor(batch_size).random_() % class_num are fixed to [3, 0, 2, 3] so the "
            "result can be checked; the result is kept in `out`."
        ),
        note=N_(
            "label.resize_(batch_size, 1) turns the 1-D labels into the (4, 1) index column "
            "in place. Labels 3 repeat: two rows get the same one-hot row."
        ),
        menu=N_(
            "one-hot with label.resize_(batch_size, 1), fixed labels [3, 0, 2, 3]"
            " · variation of notes 004:227-240"
        ),
    ),
)
PRESETS_BY_KEY: dict[str, Preset] = {p.key: p for p in PRESETS}


@dataclass(frozen=True)
class NotesComparison:
    """A traced result checked against a preset's expected output at its printed precision.

    ``atol`` is half a unit of the last printed decimal (``5e-5`` for 4 decimals), 0 for exact
    values; ``mismatches`` lists the positions outside it; ``only_at_collisions`` says every
    mismatch is a cell written by several scatter writes (whose winner is unspecified).
    """

    matches: bool
    atol: float
    shape_ok: bool
    dtype_ok: bool
    mismatches: tuple[Pos, ...]
    only_at_collisions: bool


def compare_with_notes(preset: Preset, trace: Trace) -> NotesComparison | None:
    """Compare ``trace.result`` with ``preset.expected`` (``None`` when the preset expects an
    error). Floats are compared at the printed precision, integers exactly; the dtype must be
    the notes' (``preset.expected_dtype``)."""
    if preset.expected is None:
        return None
    result = trace.result.detach().cpu()
    expected = torch.tensor(preset.expected, dtype=torch.float64)
    atol = 0.5 * 10.0**-preset.decimals if preset.decimals is not None else 0.0
    shape_ok = tuple(expected.shape) == tuple(result.shape)
    dtype_ok = result.dtype == preset.expected_dtype
    if not shape_ok:
        return NotesComparison(False, atol, False, dtype_ok, (), False)
    diff = (result.to(torch.float64) - expected).abs()
    bad = tuple(pos for pos in positions(result.shape) if float(diff[pos]) > atol)
    only_collisions = bool(bad) and all(pos in trace.collisions for pos in bad)
    return NotesComparison(dtype_ok and not bad, atol, shape_ok, dtype_ok, bad, only_collisions)


def matches_expected(preset: Preset, result: torch.Tensor) -> bool:
    """Whether ``result`` equals the preset's expected output at its printed precision."""
    if preset.expected is None:
        return False
    expected = torch.tensor(preset.expected, dtype=torch.float64)
    if expected.shape != result.shape or result.dtype != preset.expected_dtype:
        return False
    atol = 0.5 * 10.0**-preset.decimals if preset.decimals is not None else 0.0
    return bool(((result.detach().cpu().to(torch.float64) - expected).abs() <= atol).all())


def run_notes_code(preset: Preset | str) -> LiveRun:
    """Run the notes' own code of a preset (:attr:`Preset.notes_code`) and capture its output."""
    if isinstance(preset, str):
        preset = _preset_by_key(preset)
    return run_live(preset.notes_code)


_UNCHECKED: Any = object()


def preset_is_loaded(
    preset: Preset,
    op: str,
    texts: Sequence[str],
    dim: int,
    reduce: str | None = _UNCHECKED,
    include_self: bool = _UNCHECKED,
) -> bool:
    """Whether the page still shows ``preset`` unchanged: op, the three texts, dim and, when
    given, the scatter ``reduce`` mode (and ``include_self`` where that mode uses it)."""
    first, index, src = (re.sub(r"\s+", "", t or "") for t in texts)
    same_src = preset.op == "gather" or src == re.sub(r"\s+", "", preset.src)
    same_reduce = preset.op == "gather" or reduce is _UNCHECKED or reduce == preset.reduce
    same_self = (
        preset.op == "gather"
        or include_self is _UNCHECKED
        or preset.reduce not in _REDUCE_MODES
        or include_self == preset.include_self
    )
    return (
        op == preset.op
        and int(dim) == preset.dim
        and first == re.sub(r"\s+", "", preset.first)
        and index == re.sub(r"\s+", "", preset.index)
        and same_src
        and same_reduce
        and same_self
    )


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
    if trace.op != "scatter" or trace.reduce not in ("add", _SCATTER_ADD) or trace.scalar_src:
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


@dataclass(frozen=True)
class PresetRun:
    """A preset evaluated: its trace (or the error torch raised) and the code that reproduces it."""

    preset: Preset
    trace: Trace | None
    error: IndexingError | None
    snippet: str
    group: GroupMeans | None = None


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
        snippet = _snippet(op, first, dim, index, src, reduce, include_self, error=True)
        return None, err, snippet
    return trace, None, _snippet(op, first, dim, index, src, reduce, include_self, error=False)


def _snippet(op, first, dim, index, src, reduce, include_self, *, error) -> str:
    first, index = first.cpu(), index.cpu()
    src = src.cpu() if isinstance(src, torch.Tensor) else src
    if op == "gather":
        return gather_snippet(first, dim, index, error=error)
    return scatter_snippet(first, dim, index, src, reduce, include_self=include_self, error=error)


def _preset_by_key(key: str) -> Preset:
    if key not in PRESETS_BY_KEY:
        raise IndexingError(
            T(
                "unknown preset {key!r}; choose one of {keys}",
                key=key,
                keys=list(PRESETS_BY_KEY),
            )
        )
    return PRESETS_BY_KEY[key]


def run_preset(preset: Preset | str) -> PresetRun:
    """Evaluate one preset (or its key) exactly as the page does."""
    if isinstance(preset, str):
        preset = _preset_by_key(preset)
    trace, error, snippet = run_case(
        preset.op,
        preset.first,
        preset.index,
        preset.src,
        preset.dim,
        preset.reduce,
        preset.include_self,
    )
    group = None
    if preset.key == "group_means" and trace is not None:
        group = group_means(trace.operands["src"], trace.operands["index"])
        snippet += GROUP_MEANS_SNIPPET
    return PresetRun(preset, trace, error, snippet, group)


# --------------------------------------------------------------------------------------------
# Random examples (seeded)
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Pitfalls: eight live demos, each with a verdict computed from the actual tensors
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PitfallDemo:
    """One pitfall run live.

    ``values`` holds the named tensors/strings the demo produced (the snippet defines the same
    names, and a test compares them); ``lines`` are ``(label, text)`` rows the page prints;
    ``verdict`` is computed from the tensors; ``holds`` says whether the pitfall showed up.
    """

    number: int
    title: str
    lesson: str
    snippet: str
    values: dict[str, Any]
    lines: tuple[tuple[str, str], ...]
    verdict: str
    holds: bool
    ref: str | None = None


PITFALL_TITLES: dict[int, str] = {
    1: N_("a[:, idx] is not a[arange(n), idx]; bool vs integer idx"),
    2: N_("Basic slicing gives a view, advanced indexing a copy"),
    3: N_("Chained assignment a[m1][m2] = 0 does not write"),
    4: N_("x[idx] += 1 with duplicate indices adds once"),
    5: N_("nonzero() shape (z, ndim): empty (0, 1) breaks torch.cat"),
    6: N_("0-d tensors: t[3].shape == () cannot be concatenated"),
    7: N_("Recovering top-k values: a[topk_idx, arange(n)] vs a[topk_idx, :]"),
    8: N_("max() of an empty tensor raises"),
}
#: The pitfall menu's labels ("4. <title>"), written out so that each is one catalog message
#: (a link carries the label; ui.links translates it by exact lookup).
PITFALL_LABELS: dict[int, str] = {
    1: N_("1. a[:, idx] is not a[arange(n), idx]; bool vs integer idx"),
    2: N_("2. Basic slicing gives a view, advanced indexing a copy"),
    3: N_("3. Chained assignment a[m1][m2] = 0 does not write"),
    4: N_("4. x[idx] += 1 with duplicate indices adds once"),
    5: N_("5. nonzero() shape (z, ndim): empty (0, 1) breaks torch.cat"),
    6: N_("6. 0-d tensors: t[3].shape == () cannot be concatenated"),
    7: N_("7. Recovering top-k values: a[topk_idx, arange(n)] vs a[topk_idx, :]"),
    8: N_("8. max() of an empty tensor raises"),
}
assert all(PITFALL_LABELS[k] == f"{k}. {t}" for k, t in PITFALL_TITLES.items())

#: Where in the notes each pitfall is taught (``None``: the app adds it; the notes lack it).
#: The demos draw their own tensors, so the page labels them variations of these examples.
PITFALL_REFS: dict[int, str | None] = {
    1: "002:421-430",
    2: "002:432-532",
    3: "002:534-540",
    4: None,
    5: "002:69-135",
    6: "002:556-589",
    7: "002:259-286",
    8: "002:542-554",
}


def _capture(fn: Any) -> str | None:
    try:
        fn()
    except (RuntimeError, IndexError, ValueError) as err:
        return str(err).splitlines()[0]
    return None


def _shape(t: torch.Tensor) -> str:
    return str(tuple(t.shape))


def _shape_of(t: torch.Tensor, values: str | None = None) -> T:
    """A table cell: ``"shape (2, 3)"``, or ``"shape (2, 3): [[...]]"`` with the values."""
    if values is None:
        return T("shape {shape}", shape=_shape(t))
    return T("shape {shape}: {values}", shape=_shape(t), values=values)


def run_pitfall(number: int, seed: int = 0, n: int = 4) -> PitfallDemo:
    """Run pitfall ``number`` (1..8) on small tensors drawn from ``seed``; ``n`` in 2..6 rows.

    Raises:
        IndexingError: unknown number or ``n`` outside 2..6.
    """
    if number not in PITFALL_TITLES:
        raise IndexingError(
            T(
                "pitfall number must be 1 to 8, got {number!r}",
                number=number,
            )
        )
    if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= 6:
        raise IndexingError(
            T(
                "n must be a whole number from 2 to 6, got {n!r}",
                n=n,
            )
        )
    g = torch.Generator().manual_seed(int(seed))
    return dataclasses.replace(_PITFALLS[number](g, n), ref=PITFALL_REFS[number])


def _p1(g: torch.Generator, n: int) -> PitfallDemo:
    m = n + 1
    a = torch.arange(n * m).reshape(n, m)
    idx = torch.randint(0, m, (n,), generator=g)
    mask = torch.rand(m, generator=g) > 0.5
    mask[0] = True
    wrong = a[:, idx]
    right = a[torch.arange(n), idx]
    by_mask = a[:, mask]
    by_int = a[:, mask.long()]
    diag_ok = bool(torch.equal(wrong.diagonal(), right))
    holds = wrong.shape != right.shape and (
        by_mask.shape != by_int.shape or not torch.equal(by_mask, by_int)
    )
    code = f"""import torch

a = torch.arange({n * m}).reshape({n}, {m})
idx = {tensor_code(idx)}
wrong = a[:, idx]                    # every row, every idx column: shape (n, n)
right = a[torch.arange({n}), idx]    # row i, column idx[i]: shape (n,)
mask = {tensor_code(mask)}
by_mask = a[:, mask]                 # keeps the columns where mask is True
by_int = a[:, mask.long()]           # the same 0/1 as integers: columns 0 and 1!
print(wrong.shape, right.shape, torch.equal(wrong.diagonal(), right))
print(by_mask.shape, by_int.shape)
"""
    return PitfallDemo(
        1,
        PITFALL_TITLES[1],
        N_(
            "Two integer tensors index *together* (pairwise); a slice ':' keeps a whole dim and "
            "combines with every idx value. A bool mask selects, the same mask as 0/1 integers "
            "picks columns 0 and 1."
        ),
        code,
        {"wrong": wrong, "right": right, "by_mask": by_mask, "by_int": by_int},
        (
            ("a", tensor_literal(a)),
            ("idx", tensor_literal(idx)),
            ("a[:, idx]", _shape_of(wrong, tensor_literal(wrong))),
            ("a[torch.arange(n), idx]", _shape_of(right, tensor_literal(right))),
            ("mask", tensor_literal(mask)),
            ("a[:, mask]", _shape_of(by_mask)),
            ("a[:, mask.long()]", _shape_of(by_int)),
        ),
        T(
            "a[:, idx] has shape {wrong}, a[arange(n), idx] has {right}; the wanted values are "
            "the diagonal of the first: {diag_ok}. Mask: {by_mask} vs integer 0/1: {by_int}.",
            wrong=_shape(wrong),
            right=_shape(right),
            diag_ok=diag_ok,
            by_mask=_shape(by_mask),
            by_int=_shape(by_int),
        ),
        bool(holds),
    )


def _p2(g: torch.Generator, n: int) -> PitfallDemo:
    a = torch.randint(0, 10, (n, 4), generator=g)
    original = a.clone()
    v = a[1:, ::2]
    c = a[[0, 1]]
    v_ptr_same = v.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
    c_ptr_same = c.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
    v_offset = v.storage_offset()
    v[0, 0] = 100
    c[0, 0] = -1
    a_after = a.clone()
    view_wrote = int(a[1, 0]) == 100
    copy_wrote = int(a[0, 0]) == -1
    code = f"""import torch

a = {tensor_code(original)}
v = a[1:, ::2]       # basic slicing -> view
c = a[[0, 1]]        # advanced (integer list) indexing -> copy
print(v.untyped_storage().data_ptr() == a.untyped_storage().data_ptr(), v.storage_offset())
print(c.untyped_storage().data_ptr() == a.untyped_storage().data_ptr())
v[0, 0] = 100        # writes into a[1, 0]
c[0, 0] = -1         # writes only into the copy
a_after = a.clone()
print(a_after)
"""
    return PitfallDemo(
        2,
        PITFALL_TITLES[2],
        N_(
            "A view shares the original's storage (same data_ptr, its own offset and strides), "
            "so writes go through. Advanced indexing allocates new storage."
        ),
        code,
        {"a_after": a_after},
        (
            (N_("a before"), tensor_literal(original)),
            (
                "v = a[1:, ::2]",
                T(
                    "same storage: {same}, storage_offset {offset}, stride {stride}",
                    same=v_ptr_same,
                    offset=v_offset,
                    stride=tuple(v.stride()),
                ),
            ),
            (
                "c = a[[0, 1]]",
                T(
                    "same storage: {same}, storage_offset {offset}",
                    same=c_ptr_same,
                    offset=c.storage_offset(),
                ),
            ),
            (N_("a after v[0,0]=100 and c[0,0]=-1"), tensor_literal(a_after)),
        ),
        T(
            "View shares storage: {v_same}; writing through it changed a[1, 0]: {view_wrote}. "
            "Copy shares storage: {c_same}; writing it changed a[0, 0]: {copy_wrote}.",
            v_same=v_ptr_same,
            view_wrote=view_wrote,
            c_same=c_ptr_same,
            copy_wrote=copy_wrote,
        ),
        bool(v_ptr_same and view_wrote and not c_ptr_same and not copy_wrote),
    )


def _p3(g: torch.Generator, n: int) -> PitfallDemo:
    a = torch.randint(1, 10, (2 * n,), generator=g)
    m1 = a > 4
    if not bool(m1.any()):
        a[0] = 9
        m1 = a > 4
    m2 = a[m1] % 2 == 1
    if not bool(m2.any()):
        # no odd value among the selected ones: make the first one odd (9 keeps it > 4), so that
        # the snippet's own `m2 = a[m1] % 2 == 1` gives the same mask as the page
        a[torch.nonzero(m1)[0, 0]] = 9
        m2 = a[m1] % 2 == 1
    chained = a.clone()
    chained[m1][m2] = 0
    idx = torch.nonzero(m1).squeeze(1)
    fixed = a.clone()
    fixed[idx[m2]] = 0
    chained_changed = int((chained != a).sum())
    fixed_changed = int((fixed != a).sum())
    code = f"""import torch

a = {tensor_code(a)}
m1 = a > 4
m2 = a[m1] % 2 == 1                  # a mask over the selected elements
chained = a.clone()
chained[m1][m2] = 0                  # chained[m1] is a copy: the write is lost
idx = torch.nonzero(m1).squeeze(1)   # positions of the selected elements
fixed = a.clone()
fixed[idx[m2]] = 0                   # one indexing step on the original: it writes
print(chained)
print(fixed)
"""
    return PitfallDemo(
        3,
        PITFALL_TITLES[3],
        N_(
            "a[m1] with a mask is advanced indexing, i.e. a copy; the second [m2] = 0 writes "
            "into that temporary copy. Compose the indices first and index once."
        ),
        code,
        {"chained": chained, "fixed": fixed},
        (
            ("a", tensor_literal(a)),
            ("m1 = a > 4", tensor_literal(m1)),
            (N_("m2 (over a[m1])"), tensor_literal(m2)),
            (N_("after a[m1][m2] = 0"), tensor_literal(chained)),
            (N_("after a[idx[m2]] = 0"), tensor_literal(fixed)),
        ),
        T(
            "a[m1][m2] = 0 changed {chained} element(s); a[idx[m2]] = 0 changed {fixed} "
            "(expected {expected}).",
            chained=chained_changed,
            fixed=fixed_changed,
            expected=int(m2.sum()),
        ),
        chained_changed == 0 and fixed_changed == int(m2.sum()),
    )


def _p4(g: torch.Generator, n: int) -> PitfallDemo:
    idx = torch.randint(0, n, (n + 2,), generator=g)
    idx[1] = idx[0]  # make sure there is a duplicate
    plus = torch.zeros(n, dtype=torch.int64)
    plus[idx] += 1
    put = torch.zeros(n, dtype=torch.int64).index_put_(
        (idx,), torch.ones(len(idx), dtype=torch.int64), accumulate=True
    )
    add = torch.zeros(n, dtype=torch.int64).index_add_(
        0, idx, torch.ones(len(idx), dtype=torch.int64)
    )
    counts = torch.bincount(idx, minlength=n)
    code = f"""import torch

idx = {tensor_code(idx)}
plus = torch.zeros({n}, dtype=torch.int64)
plus[idx] += 1                       # read, add, write back: duplicates count once
put = torch.zeros({n}, dtype=torch.int64).index_put_(
    (idx,), torch.ones(len(idx), dtype=torch.int64), accumulate=True)
ones = torch.ones(len(idx), dtype=torch.int64)
add = torch.zeros({n}, dtype=torch.int64).index_add_(0, idx, ones)
counts = torch.bincount(idx, minlength={n})
print(plus, put, add, counts)
"""
    ok = not torch.equal(plus, counts) and torch.equal(put, counts) and torch.equal(add, counts)
    return PitfallDemo(
        4,
        PITFALL_TITLES[4],
        N_(
            "x[idx] += 1 is x[idx] = x[idx] + 1: one gather, one add, one scatter, so "
            "duplicates overwrite each other. Accumulating ops add every time."
        ),
        code,
        {"plus": plus, "put": put, "add": add, "counts": counts},
        (
            ("idx", tensor_literal(idx)),
            ("x[idx] += 1", tensor_literal(plus)),
            ("index_put_(accumulate=True)", tensor_literal(put)),
            ("index_add_", tensor_literal(add)),
            (N_("bincount (truth)"), tensor_literal(counts)),
        ),
        T(
            "x[idx] += 1 matches the counts: {plus}; index_put_(accumulate=True): {put}; "
            "index_add_: {add}.",
            plus=torch.equal(plus, counts),
            put=torch.equal(put, counts),
            add=torch.equal(add, counts),
        ),
        bool(ok),
    )


def _p5(g: torch.Generator, n: int) -> PitfallDemo:
    t = torch.randint(1, 10, (n,), generator=g)
    found = torch.nonzero(t > 5)
    empty = torch.nonzero(t > 100)
    kept = torch.tensor([0, 1])
    err = _capture(lambda: torch.cat([empty, kept]))
    fixed = torch.cat([empty.squeeze(1), kept])
    where_empty = torch.where(t > 100)[0]
    where_cat = torch.cat([where_empty, kept])
    code = f"""import torch

t = {tensor_code(t)}
found = torch.nonzero(t > 5)         # shape (z, ndim) = (z, 1) for a 1-D t
empty = torch.nonzero(t > 100)       # shape (0, 1): 2-D!
kept = torch.tensor([0, 1])
try:
    torch.cat([empty, kept])
except RuntimeError as exc:
    error = str(exc)
    print(error)
fixed = torch.cat([empty.squeeze(1), kept])
where_cat = torch.cat([torch.where(t > 100)[0], kept])   # where gives 1-D per dim
print(fixed, where_cat)
"""
    return PitfallDemo(
        5,
        PITFALL_TITLES[5],
        N_(
            "nonzero(as_tuple=False) returns one row per hit and one column per dim, so even an "
            "empty result is 2-D. squeeze(1) or torch.where / as_tuple=True give 1-D indices."
        ),
        code,
        {"found": found, "empty": empty, "error": err, "fixed": fixed, "where_cat": where_cat},
        (
            ("t", tensor_literal(t)),
            ("nonzero(t > 5)", _shape_of(found)),
            ("nonzero(t > 100)", _shape_of(empty)),
            ("torch.cat([empty, kept])", f"RuntimeError: {err}" if err else N_("no error")),
            ("torch.cat([empty.squeeze(1), kept])", tensor_literal(fixed)),
            ("torch.where(t > 100)[0]", _shape_of(where_empty)),
        ),
        T(
            N_(
                "nonzero gives shape {found} (z, ndim); the empty one is {empty} and torch.cat "
                "fails; after squeeze(1) it gives {fixed}."
            )
            if err
            else N_(
                "nonzero gives shape {found} (z, ndim); the empty one is {empty} and torch.cat "
                "works; after squeeze(1) it gives {fixed}."
            ),
            found=_shape(found),
            empty=_shape(empty),
            fixed=tensor_literal(fixed),
        ),
        bool(err) and tuple(empty.shape) == (0, 1),
    )


def _p6(g: torch.Generator, n: int) -> PitfallDemo:
    t = torch.randint(0, 10, (n + 2,), generator=g)
    item = t[3]
    err = _capture(lambda: torch.cat([t[3], t[1]]))
    stacked = torch.stack([t[3], t[1]])
    sliced = torch.cat([t[3:4], t[1:2]])
    code = f"""import torch

t = {tensor_code(t)}
print(t[3].shape)                    # torch.Size([]): a 0-d tensor
try:
    torch.cat([t[3], t[1]])
except RuntimeError as exc:
    error = str(exc)
    print(error)
stacked = torch.stack([t[3], t[1]])  # stack adds a dim: works
sliced = torch.cat([t[3:4], t[1:2]]) # slices keep a dim: works
print(stacked, sliced)
"""
    return PitfallDemo(
        6,
        PITFALL_TITLES[6],
        N_(
            "An integer index removes its dim; for a 1-D tensor you get a 0-d tensor, which has "
            "no dim to concatenate along. Use a slice t[3:4], unsqueeze, or torch.stack."
        ),
        code,
        {"error": err, "stacked": stacked, "sliced": sliced},
        (
            ("t", tensor_literal(t)),
            ("t[3].shape", str(tuple(item.shape))),
            ("torch.cat([t[3], t[1]])", f"RuntimeError: {err}" if err else N_("no error")),
            ("torch.stack([t[3], t[1]])", tensor_literal(stacked)),
            ("torch.cat([t[3:4], t[1:2]])", tensor_literal(sliced)),
        ),
        T(
            N_(
                "t[3].shape == {shape}; torch.cat of 0-d tensors raises; stack and slices give "
                "{stacked}."
            )
            if err
            else N_(
                "t[3].shape == {shape}; torch.cat of 0-d tensors works; stack and slices give "
                "{stacked}."
            ),
            shape=tuple(item.shape),
            stacked=tensor_literal(stacked),
        ),
        tuple(item.shape) == () and bool(err),
    )


def _p7(g: torch.Generator, n: int) -> PitfallDemo:
    a = torch.randint(0, 100, (n + 1, n), generator=g)
    k = 2
    vals, topk_idx = a.topk(k, dim=0)
    right = a[topk_idx, torch.arange(n)]
    wrong = a[topk_idx, :]
    gathered = torch.gather(a, 0, topk_idx)
    ok_right = bool(torch.equal(right, vals))
    code = f"""import torch

a = {tensor_code(a)}
vals, topk_idx = a.topk({k}, dim=0)          # top-{k} of every column: (k, n) row numbers
right = a[topk_idx, torch.arange({n})]       # pairs (topk_idx[i][j], j): shape (k, n)
wrong = a[topk_idx, :]                       # whole rows for every index: shape (k, n, n)
gathered = torch.gather(a, 0, topk_idx)      # the same as `right`
print(torch.equal(right, vals), wrong.shape)
"""
    return PitfallDemo(
        7,
        PITFALL_TITLES[7],
        N_(
            "topk along dim 0 returns row numbers per column; pair each with its column "
            "(arange(n) broadcasts against topk_idx) or use gather."
        ),
        code,
        {"vals": vals, "right": right, "wrong": wrong, "gathered": gathered},
        (
            ("a", tensor_literal(a)),
            ("topk_idx", tensor_literal(topk_idx)),
            ("vals", tensor_literal(vals)),
            ("a[topk_idx, torch.arange(n)]", _shape_of(right, tensor_literal(right))),
            ("a[topk_idx, :]", _shape_of(wrong)),
        ),
        T(
            "a[topk_idx, arange(n)] equals vals: {ok_right} (gather too: {ok_gather}); "
            "a[topk_idx, :] has shape {wrong} instead of {vals}.",
            ok_right=ok_right,
            ok_gather=torch.equal(gathered, vals),
            wrong=_shape(wrong),
            vals=_shape(vals),
        ),
        ok_right and wrong.shape != vals.shape,
    )


def _p8(g: torch.Generator, n: int) -> PitfallDemo:
    t = torch.rand(n, generator=g)
    empty = t[t > 2]  # nothing is > 2 in [0, 1)
    err = _capture(lambda: empty.max())
    safe = empty.max() if empty.numel() else torch.tensor(float("-inf"))
    along_dim_err = _capture(lambda: empty.max(dim=0))
    code = f"""import torch

t = {tensor_code(t)}
empty = t[t > 2]                     # nothing qualifies: shape (0,)
try:
    empty.max()
except RuntimeError as exc:
    error = str(exc)
    print(error)
safe = empty.max() if empty.numel() else torch.tensor(float("-inf"))
print(safe)
"""
    return PitfallDemo(
        8,
        PITFALL_TITLES[8],
        N_(
            "A reduction without identity (max, min, argmax) has no answer for zero elements. "
            "Check numel() first, or reduce with a fallback value."
        ),
        code,
        {"empty": empty, "error": err, "safe": safe},
        (
            ("t", tensor_literal(t)),
            ("t[t > 2]", _shape_of(empty)),
            ("t[t > 2].max()", f"RuntimeError: {err}" if err else N_("no error")),
            (
                "t[t > 2].max(dim=0)",
                f"RuntimeError: {along_dim_err}" if along_dim_err else N_("works"),
            ),
            (N_("with a numel() check"), format_value(safe)),
        ),
        T(
            N_("max() of a tensor of shape {shape} raises; the guarded version returns {safe}.")
            if err
            else N_(
                "max() of a tensor of shape {shape} works; the guarded version returns {safe}."
            ),
            shape=_shape(empty),
            safe=format_value(safe),
        ),
        bool(err),
    )


_PITFALLS = {1: _p1, 2: _p2, 3: _p3, 4: _p4, 5: _p5, 6: _p6, 7: _p7, 8: _p8}


# --------------------------------------------------------------------------------------------
# x[...] presets
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
# Where the notes are wrong or out of date (checked live)
# --------------------------------------------------------------------------------------------

GATHER_DUPLICATES_CODE = """import torch

input = torch.tensor([[1, 2, 3], [4, 5, 6]])
index = torch.tensor([[0, 0], [2, 0]])  # row 0 holds 0 twice: not unique
out = torch.gather(input, 1, index)
print(out.tolist())
"""

PITFALL1_RECIPE_CODE = """import torch

tmp_a = torch.arange(12).reshape(4, 3)  # tmp_a.shape = torch.Size([4, 3])
tmp_b_inds = torch.tensor([2, 0, 1])    # tmp_b_inds.shape = torch.Size([3])
print(tuple(tmp_a[:, tmp_b_inds].shape))  # every row, each of the 3 columns
print(tmp_a[torch.arange(len(tmp_b_inds)), tmp_b_inds].tolist())  # the heading's form
out = tmp_a[torch.arange(4), tmp_b_inds]  # the notes' recipe
"""

CHAINED_SLICE_CODE = """import torch

a = torch.arange(15).reshape(3, 5)
a[1:][0][2] = -7         # slice, then int, then int: every step but the last is a view
print(a[1, 2].item())
b = torch.arange(15).reshape(3, 5)
b[b > 5][0] = -7         # a mask first: b[b > 5] is a copy, the write is lost
print((b == -7).any().item())
"""

GATHER_ERROR_CODE = """import torch

input = torch.tensor([[1,2,3],[4,5,6]])
output = torch.gather(input, 1, torch.tensor([[0,0],[3,0]]))  # input.size(1) - 1 = 2
"""

#: The notes' error line for the out-of-range gather (002:1047), without its file path.
NOTES_GATHER_ERROR = "RuntimeError: Invalid index in gather"


def _gather_unique_callout() -> NotesCallout:
    run = run_live(GATHER_DUPLICATES_CODE)
    confirmed = not run.raised and run.output == "[[1, 1], [6, 4]]"
    if run.raised:
        today = N_("torch {version} refuses repeated index values in a row: {error}.")
        today_args = (
            ("version", str(run.torch_version)),
            ("error", str(run.error)),
        )
    else:
        today = N_(
            "gather accepts repeated values in a row: index [[0, 0], [2, 0]] (0 twice in row 0) "
            "gave {output}, reading input[0][0] twice. Only the range rule holds (0 to "
            "input.size(dim) - 1). The uniqueness sentence comes from old scatter_ docs, where "
            "repeated values in a row send two writes to one cell; gather only reads."
        )
        today_args = (("output", str(run.output)),)
    return NotesCallout(
        key="gather_unique_rows",
        title=N_("gather: index values in a row need not be unique"),
        ref=NotesRef.parse("002:1056"),
        quote_zh="all values in a row along the specified dimension param_dim must be unique",
        gloss_en="For gather, all index values in a row along dim must be unique (the next "
        "line of the notes says this half of the sentence was not understood).",
        verdict=verdict_if(confirmed, "wrong"),
        today=today,
        today_args=today_args,
        run=run,
    )


def _pitfall1_recipe_callout() -> NotesCallout:
    run = run_live(PITFALL1_RECIPE_CODE)
    printed = run.output.splitlines()
    whole, heading = (printed + ["?", "?"])[:2]
    confirmed = run.raised and "shape mismatch" in (run.error or "")
    if run.raised:
        today = N_(
            "With the notes' shapes (tmp_a 4x3, tmp_b_inds of 3 values) the recipe raises "
            "{error}. Two index tensors pair up element by element, so torch.arange(4) and 3 "
            "column numbers cannot pair. tmp_a[:, tmp_b_inds] has shape {whole} (every row, each "
            "listed column); the heading's form tmp_a[torch.arange(len(tmp_b_inds)), tmp_b_inds] "
            "runs but pairs only rows 0-2: {heading}. The pairwise form needs one column number "
            "per row."
        )
        today_args = (
            ("error", str(run.error)),
            ("whole", str(whole)),
            ("heading", str(heading)),
        )
    else:
        today = N_(
            "The recipe ran without error here ({output}); the shapes in the notes (4 rows, 3 "
            "indices) would be expected to make it fail."
        )
        today_args = (("output", str(run.output)),)
    return NotesCallout(
        key="pitfall1_arange_recipe",
        title=N_("Pitfall 1: the notes' tmp_a[torch.arange(4), tmp_b_inds] raises"),
        ref=NotesRef.parse("002:421-430"),
        quote_zh="tmp_a[:, tmp_b_inds]会得不到期望的结果, 应改用tmp_a[torch.arange(4), tmp_b_inds]",
        gloss_en="(tmp_a has shape [4, 3], the integer tmp_b_inds shape [3].) tmp_a[:, "
        "tmp_b_inds] will not give the expected result; use tmp_a[torch.arange(4), tmp_b_inds] "
        "instead.",
        verdict=verdict_if(confirmed, "wrong"),
        today=today,
        today_args=today_args,
        run=run,
    )


def _chained_slice_callout() -> NotesCallout:
    run = run_live(CHAINED_SLICE_CODE)
    printed = run.output.splitlines()
    written, masked = (printed + ["?", "?"])[:2]
    confirmed = not run.raised and written == "-7"
    if confirmed:
        today = N_(
            "a[1:][0][2] = -7 wrote into a: a[1][2] is now {written}. A chain of indexing writes "
            "through when every step before the last is basic indexing (slices and ints give "
            "views), as in the notes' own tmp_a[sub_splice1][ssub_splice2] with slices. The "
            "write is lost only when an earlier step is advanced indexing (a mask or an index "
            "tensor gives a copy): after b[b > 5][0] = -7, b holds -7: {masked}."
        )
        today_args = (
            ("written", str(written)),
            ("masked", str(masked)),
        )
    else:
        today = N_(
            "a[1:][0][2] = -7 left a[1][2] at {written}: chained assignment through slices did "
            "not write here. ({transcript})"
        )
        today_args = (
            ("written", str(written)),
            ("transcript", str(run.transcript)),
        )
    return NotesCallout(
        key="chained_slice_assignment",
        title=N_("Chained assignment through slices does write"),
        ref=NotesRef.parse("002:537-539"),
        quote_zh="切记只能使用一层索引, 使用多层索引不改变张量的值",
        gloss_en="When assigning into an indexed tensor, use only one level of indexing: with "
        "several levels (tmp_a[sub_splice1][ssub_splice2] = 0.) the tensor does not change.",
        verdict=verdict_if(confirmed, "wrong"),
        today=today,
        today_args=today_args,
        run=run,
    )


def _gather_error_callout() -> NotesCallout:
    run = run_live(GATHER_ERROR_CODE)
    # Out of date when torch refuses index 3 with today's message, not the notes' old one.
    confirmed = bool(run.raised and run.error and "index 3 is out of bounds" in run.error)
    if run.raised and run.error and "Invalid index in gather" not in run.error:
        today = N_(
            "torch {version} still refuses index 3, with another message: {error}. It names the "
            "bad value, the dim and its size. The notes' message came from the old TH backend "
            "(TH/generic/THTensorEvenMoreMath.cpp in its traceback)."
        )
        today_args = (
            ("version", str(run.torch_version)),
            ("error", str(run.error)),
        )
    elif run.raised:
        today = N_("torch {version} still prints the notes' message: {error}.")
        today_args = (
            ("version", str(run.torch_version)),
            ("error", str(run.error)),
        )
    else:
        today = (
            N_("torch {version} no longer raises for index 3: it printed {output}.")
            if run.output
            else N_("torch {version} no longer raises for index 3: it printed nothing.")
        )
        today_args = (("version", str(run.torch_version)), ("output", str(run.output)))
    return NotesCallout(
        key="gather_error_text",
        title=N_("gather's out-of-range error: the notes show an old message"),
        ref=NotesRef.parse("002:1041-1047"),
        quote_zh=NOTES_GATHER_ERROR,
        gloss_en="torch.gather with index 3 on rows of 3 values fails with 'Invalid index in "
        "gather' (followed by a path into TH/generic/THTensorEvenMoreMath.cpp).",
        verdict=verdict_if(confirmed, "out of date"),
        today=today,
        today_args=today_args,
        run=run,
    )


def notes_callouts() -> list[NotesCallout]:
    """The indexing lessons where the notes are wrong or out of date, each run live now:
    ``gather_unique_rows`` (002:1056), ``gather_error_text`` (002:1041-1047),
    ``pitfall1_arange_recipe`` (002:421-430) and ``chained_slice_assignment`` (002:537-539)."""
    return [
        _gather_unique_callout(),
        _gather_error_callout(),
        _pitfall1_recipe_callout(),
        _chained_slice_callout(),
    ]


#: Which callout belongs beside which preset / pitfall on the page.
PRESET_CALLOUTS: dict[str, tuple[str, ...]] = {
    "gather": ("gather_unique_rows",),
    "gather_out_of_range": ("gather_error_text",),
}
PITFALL_CALLOUTS: dict[int, tuple[str, ...]] = {
    1: ("pitfall1_arange_recipe",),
    3: ("chained_slice_assignment",),
}
