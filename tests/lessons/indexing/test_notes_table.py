"""The notes' scatter/gather examples, transcribed by hand, against the page's presets.

The table below is copied from the notes (``../shared/seeds``), not from
``lessons.indexing.presets``: for every example it holds the notes' call as written, the inputs, and
the output the notes print (or, where they print none, the output worked out by hand from the
inputs). Each row is checked three ways:

1. the transcription is in the notes at the cited lines (skipped when the notes are absent);
2. the notes' call, run today, gives the printed output;
3. the preset citing that place runs (through ``run_preset``, as the page does) on the same
   inputs and gives the same output, dtype included.

Printed floats are compared at their printed precision: half a unit of the last printed
decimal (``0.3992`` -> ``atol=5e-5``); integers and integer-valued floats (``6.``) exactly.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import pytest
import torch

from core.notes import NotesRef, quote_is_at
from lessons.indexing import presets, tracing
from tests.notes_marks import needs_notes

#: The notes' ``x`` (a ``torch.rand(2, 5)``), as printed at 002:919-920.
X_PRINTED = """tensor([[ 0.3992,  0.2908,  0.9044,  0.4850,  0.6004],
        [ 0.5735,  0.9006,  0.6797,  0.4152,  0.1732]])"""


@dataclass(frozen=True)
class Row:
    """One example of the notes.

    ``ref``: the place the page cites; ``call_at``/``call``: where the call is and its text,
    verbatim; ``setup``: code that builds the call's inputs (the notes' own lines);
    ``printed_at``/``printed``: where the output is printed and its text, verbatim (``None``
    when the notes print none); ``worked_out``: the expected output when nothing is printed;
    ``dtype``: the dtype of the notes' result; ``operands``: the page's operands
    (``input``/``dest``, ``index``, ``src``) as code, from the notes' inputs.
    """

    ref: str
    call_at: str
    call: str
    setup: str
    printed_at: str | None
    printed: str | None
    dtype: torch.dtype
    operands: dict[str, str]
    worked_out: list | None = None


ZEROS35 = "torch.zeros(3, 5)"
IDX_Y1 = "torch.tensor([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]])"
IDX_Y2 = "torch.tensor([[0, 1, 2, 0, 0], [0, 0, 0, 1, 2]])"
X_CODE = "torch.tensor([[0.3992, 0.2908, 0.9044, 0.4850, 0.6004], [0.5735, 0.9006, 0.6797, 0.4152, 0.1732]])"  # noqa: E501

TABLE: tuple[Row, ...] = (
    Row(
        "002:921",
        "002:921",
        "torch.zeros(3, 5).scatter_(0, torch.tensor([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]]), x)",
        f"x = {X_CODE}",
        "002:923-925",
        """tensor([[ 0.3992,  0.9006,  0.6797,  0.4850,  0.6004],
        [ 0.0000,  0.2908,  0.0000,  0.4152,  0.0000],
        [ 0.5735,  0.0000,  0.9044,  0.0000,  0.1732]])""",
        torch.float32,
        {"dest": ZEROS35, "index": IDX_Y1, "src": X_CODE},
    ),
    Row(
        "002:926",
        "002:926",
        "torch.zeros(3, 5).scatter_(0, torch.tensor([[0, 1, 2, 0, 0], [0, 0, 0, 1, 2]]), x)",
        f"x = {X_CODE}",
        "002:928-930",
        """tensor([[ 0.5735,  0.9006,  0.6797,  0.4850,  0.6004],
        [ 0.0000,  0.2908,  0.0000,  0.4152,  0.0000],
        [ 0.0000,  0.0000,  0.9044,  0.0000,  0.1732]])""",
        torch.float32,
        {"dest": ZEROS35, "index": IDX_Y2, "src": X_CODE},
    ),
    Row(
        "002:946",
        "002:946",
        "torch.zeros(3, 5).scatter_(0, torch.tensor([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]]), 6)",
        "",
        "002:948-950",
        """tensor([[6., 6., 6., 6., 6.],
        [0., 6., 0., 6., 0.],
        [6., 0., 6., 0., 6.]])""",
        torch.float32,
        {"dest": ZEROS35, "index": IDX_Y1, "src": "6"},
    ),
    Row(
        "002:964",
        "002:964",
        "torch.zeros(2, 4).scatter_(1, torch.tensor([[2], [3]]), 1.23)",
        "",
        "002:966-967",
        """tensor([[ 0.0000,  0.0000,  1.2300,  0.0000],
        [ 0.0000,  0.0000,  0.0000,  1.2300]])""",
        torch.float32,
        {"dest": "torch.zeros(2, 4)", "index": "torch.tensor([[2], [3]])", "src": "1.23"},
    ),
    Row(
        "002:980-992",
        "002:989",
        "torch.zeros(1, 10).scatter_(1, index_a, 1)",
        "index_a = torch.from_numpy(np.array(3).astype('int64')[np.newaxis, np.newaxis])",
        "002:992",
        "tensor([[0., 0., 0., 1., 0., 0., 0., 0., 0., 0.]])",
        torch.float32,
        {"dest": "torch.zeros(1, 10)", "index": "torch.tensor([[3]])", "src": "1"},
    ),
    Row(
        "002:997-1012",
        "002:1006",
        "torch.zeros(batch_size, class_num).scatter_(1, label, 1)",
        "class_num = 10\nbatch_size = 4\nlabel = torch.tensor([[6], [0], [3], [2]])",
        "002:1009-1012",
        """tensor([[0., 0., 0., 0., 0., 0., 1., 0., 0., 0.],
        [1., 0., 0., 0., 0., 0., 0., 0., 0., 0.],
        [0., 0., 0., 1., 0., 0., 0., 0., 0., 0.],
        [0., 0., 1., 0., 0., 0., 0., 0., 0., 0.]])""",
        torch.float32,
        {
            "dest": "torch.zeros(4, 10)",
            "index": "torch.tensor([[6], [0], [3], [2]])",
            "src": "1",
        },
    ),
    Row(
        "002:1035",
        "002:1036",
        "torch.gather(input, 1, torch.tensor([[0,0],[2,0]]))",
        "input = torch.tensor([[1,2,3],[4,5,6]])",
        "002:1038-1039",
        """tensor([[ 1,  1],
        [ 6,  4]])""",
        torch.int64,
        {
            "input": "torch.tensor([[1, 2, 3], [4, 5, 6]])",
            "index": "torch.tensor([[0, 0], [2, 0]])",
        },
    ),
    Row(
        "002:1041",
        "002:1041",
        "torch.gather(input, 1, torch.tensor([[0,0],[3,0]]))",
        "input = torch.tensor([[1,2,3],[4,5,6]])",
        "002:1047",
        "RuntimeError: Invalid index in gather",
        torch.int64,
        {
            "input": "torch.tensor([[1, 2, 3], [4, 5, 6]])",
            "index": "torch.tensor([[0, 0], [3, 0]])",
        },
    ),
    Row(
        "002:204-211",
        "002:210",
        "torch.zeros(len(idx_unique)).scatter_add(0, idx, x)",
        "x = torch.arange(1, 7, dtype=torch.float)\nidx = torch.tensor([0, 1, 0, 1, 2, 2])\n"
        "idx_unique = idx.unique(sorted=True)",
        None,
        None,
        torch.float32,
        {
            "dest": "torch.zeros(3)",
            "index": "torch.tensor([0, 1, 0, 1, 2, 2])",
            "src": "torch.arange(1, 7, dtype=torch.float)",
        },
        worked_out=[1 + 3, 2 + 4, 5 + 6],  # sums of groups 0, 1, 2; means 2, 3, 5.5
    ),
    Row(
        "004:219-225",
        "004:224",
        "one_hot.scatter_(dim=1, index=torch.unsqueeze(tensor, dim=1), "
        "src=torch.ones(N, num_classes).long())",
        "tensor = torch.tensor([0, 2, 1, 3])\nN = tensor.size(0)\nnum_classes = 4\n"
        "one_hot = torch.zeros(N, num_classes).long()",
        None,
        None,
        torch.int64,
        {
            "dest": "torch.zeros(4, 4).long()",
            "index": "torch.tensor([[0], [2], [1], [3]])",
            "src": "torch.ones(4, 4).long()",
        },
        worked_out=[[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1]],
    ),
    Row(
        "004:227-240",
        "004:234",
        "m_zeros.scatter_(1, label, 1)",
        # the notes draw the labels at random (004:239); the preset is a variation with these
        "batch_size, class_num = 4, 4\nlabel = torch.tensor([3, 0, 2, 3]).resize_(batch_size, 1)\n"
        "m_zeros = torch.zeros(batch_size, class_num)",
        None,
        None,
        torch.float32,
        {
            "dest": "torch.zeros(4, 4)",
            "index": "torch.tensor([[3], [0], [2], [3]])",
            "src": "1",
        },
        worked_out=[[0, 0, 0, 1], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
    ),
)

#: The notes' scatter/gather examples the page must offer as presets (``002:1035 / 002:1041``
#: counts as two examples).
NOTES_EXAMPLE_REFS = (
    "002:921",
    "002:926",
    "002:946",
    "002:964",
    "002:980-992",
    "002:997-1012",
    "002:1035",
    "002:1041",
    "002:204-211",
)
#: The one-hot variants of 004:219-240.
VARIANT_REFS = ("004:219-225", "004:227-240")
#: Rows whose inputs the notes do not fix (random), so the preset can only be a variation.
NOT_VERBATIM = {"004:227-240"}


def _parse_printed(text: str) -> tuple[torch.Tensor, float]:
    """``tensor([[ 0.3992, ...]])`` -> (float64 values, atol at the printed precision)."""
    body = text.strip()
    assert body.startswith("tensor(") and body.endswith(")"), body
    literal = body[len("tensor(") : -1]
    numbers = re.findall(r"-?\d+\.?\d*", literal)
    decimals = max((len(n.split(".")[1]) for n in numbers if "." in n), default=0)
    values = torch.tensor(ast.literal_eval(literal), dtype=torch.float64)
    return values, (0.5 * 10.0**-decimals if decimals else 0.0)


def _expected(row: Row) -> tuple[torch.Tensor, float]:
    if row.printed is not None:
        return _parse_printed(row.printed)
    return torch.tensor(row.worked_out, dtype=torch.float64), 0.0


def _close(result: torch.Tensor, expected: torch.Tensor, atol: float) -> bool:
    result = result.detach().cpu().to(torch.float64)
    return result.shape == expected.shape and bool(((result - expected).abs() <= atol).all())


def _namespace(row: Row) -> dict:
    import numpy as np

    ns: dict = {"torch": torch, "np": np}
    exec(row.setup, ns)
    return ns


def _preset_for(row: Row) -> presets.Preset:
    found = [p for p in presets.PRESETS if p.ref == row.ref]
    assert len(found) == 1, (row.ref, [p.key for p in found])
    return found[0]


def _rows_with_output() -> list[Row]:
    return [r for r in TABLE if r.printed is None or r.printed.startswith("tensor(")]


@needs_notes
@pytest.mark.parametrize("row", TABLE, ids=lambda r: r.ref)
def test_transcription_is_in_the_notes(row):
    assert quote_is_at(row.call, NotesRef.parse(row.call_at)), (row.call_at, row.call)
    ref, call_line = NotesRef.parse(row.ref), NotesRef.parse(row.call_at).first_line
    # the call is inside the cited lines, or on the line after a one-line reference (1035/1036)
    assert call_line in ref.lines or call_line == ref.first_line + 1, row.ref
    if row.printed is not None:
        assert quote_is_at(row.printed, NotesRef.parse(row.printed_at)), row.printed_at
    assert quote_is_at(X_PRINTED, NotesRef.parse("002:919-920"))


@pytest.mark.parametrize("row", _rows_with_output(), ids=lambda r: r.ref)
def test_the_notes_call_gives_the_printed_output_today(row):
    ns = _namespace(row)
    result = eval(row.call, ns)
    expected, atol = _expected(row)
    assert result.dtype == row.dtype
    assert _close(result, expected, atol), (row.ref, result)


@pytest.mark.parametrize("row", _rows_with_output(), ids=lambda r: r.ref)
def test_preset_matches_the_notes(row):
    preset = _preset_for(row)
    assert preset.verbatim is (row.ref not in NOT_VERBATIM)
    run = presets.run_preset(preset)
    assert run.error is None, run.error
    trace = run.trace
    # the preset's inputs are the notes' inputs (same values, same dtype)
    for name, code in row.operands.items():
        want = eval(code, {"torch": torch})
        got = trace.operands[name]
        if name == "src" and trace.scalar_src:
            assert isinstance(want, (int, float)) and got.dim() == 0, (row.ref, name)
            assert got.is_floating_point() is isinstance(want, float), (row.ref, "scalar kind")
            assert got.item() == torch.tensor(want, dtype=got.dtype).item(), (row.ref, name)
            continue
        assert got.dtype == want.dtype and torch.equal(got, want), (row.ref, name, got, want)
    assert trace.dim == preset.dim
    assert trace.result.dtype == row.dtype
    expected, atol = _expected(row)
    assert _close(trace.result, expected, atol), (row.ref, trace.result)
    assert presets.compare_with_notes(preset, trace).matches
    assert preset.printed is (row.printed is not None)


def test_the_notes_call_dims():
    """The dim of each call, read from the notes' call text, is the preset's dim."""
    for row in TABLE:
        dim = re.search(r"(?:scatter_add|scatter_|gather)\((?:input, )?(?:dim=)?(-?\d)", row.call)
        assert dim, row.call
        assert int(dim[1]) == _preset_for(row).dim, row.ref


def test_gather_out_of_range_shows_todays_error_beside_the_notes():
    row = next(r for r in TABLE if r.ref == "002:1041")
    ns = _namespace(row)
    with pytest.raises(RuntimeError) as info:
        eval(row.call, ns)
    today = str(info.value)
    assert "Invalid index in gather" not in today  # the notes' text is out of date
    preset = _preset_for(row)
    assert preset.verbatim and preset.notes_error == row.printed and preset.expected is None
    run = presets.run_preset(preset)
    assert run.trace is None and run.error.torch_error == today.splitlines()[0]
    callout = {c.key: c for c in tracing.notes_callouts()}["gather_error_text"]
    assert callout.quote_zh == row.printed and today in callout.today_text


def test_group_means_are_the_notes_recipe():
    row = next(r for r in TABLE if r.ref == "002:204-211")
    run = presets.run_preset(_preset_for(row))
    assert run.trace.reduce == "scatter_add" and "scatter_add_" in run.trace.call
    assert not run.trace.warnings  # scatter_add_ is not deprecated (reduce='add' is)
    assert run.group.sums.tolist() == [4.0, 6.0, 11.0]
    assert run.group.means.tolist() == [2.0, 3.0, 5.5]
    ns = _namespace(row)
    res = eval(row.call, ns)
    counts = torch.stack([(ns["idx"] == u).sum() for u in ns["idx_unique"]])
    assert torch.equal(res / counts.float(), run.group.means)


def test_every_preset_is_verbatim_with_ref_or_a_variation():
    refs = {row.ref for row in TABLE}
    for preset in presets.PRESETS:
        NotesRef.parse(preset.ref)
        assert preset.ref in refs, (preset.key, preset.ref)  # every preset is a table row
        if not preset.verbatim:
            assert preset.ref in NOT_VERBATIM, preset.key
    verbatim = {p.ref for p in presets.PRESETS if p.verbatim}
    assert set(NOTES_EXAMPLE_REFS) <= verbatim
    assert set(VARIANT_REFS) <= {p.ref for p in presets.PRESETS}
    assert len(TABLE) == len(NOTES_EXAMPLE_REFS) + len(VARIANT_REFS) == 11
    assert len(presets.PRESETS) >= len(TABLE)
