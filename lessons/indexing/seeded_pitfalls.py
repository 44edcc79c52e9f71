"""The "8 pitfalls" tab: eight indexing pitfalls run live on small tensors drawn from a seed.

:func:`run_pitfall` runs one of them (1 to 8) and returns a :class:`PitfallRun`: the tensors
it produced, the ``(expression, what torch gave)`` rows the page prints, a snippet that
defines the same names, and a verdict computed from the actual tensors (never written in
advance). :data:`PITFALL_REFS` says where the notes teach each one. The notes' own pitfall
snippets, run as written, are :mod:`lessons.indexing.pitfalls`. Pure: no Streamlit.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import torch

from core.text import N_, T
from lessons.indexing.parsing import IndexingError, format_value, tensor_code, tensor_literal


@dataclass(frozen=True)
class PitfallRun:
    """One of the eight pitfalls, run live on tensors drawn from a seed.

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


def run_pitfall(number: int, seed: int = 0, n: int = 4) -> PitfallRun:
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


def _p1(g: torch.Generator, n: int) -> PitfallRun:
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
    return PitfallRun(
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


def _p2(g: torch.Generator, n: int) -> PitfallRun:
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
    return PitfallRun(
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


def _p3(g: torch.Generator, n: int) -> PitfallRun:
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
    return PitfallRun(
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


def _p4(g: torch.Generator, n: int) -> PitfallRun:
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
    return PitfallRun(
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


def _p5(g: torch.Generator, n: int) -> PitfallRun:
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
    return PitfallRun(
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


def _p6(g: torch.Generator, n: int) -> PitfallRun:
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
    return PitfallRun(
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


def _p7(g: torch.Generator, n: int) -> PitfallRun:
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
    return PitfallRun(
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


def _p8(g: torch.Generator, n: int) -> PitfallRun:
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
    return PitfallRun(
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
