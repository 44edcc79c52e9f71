"""lessons.indexing.pitfalls: every demo runs the real call and reports the verdict torch gives.

Each test checks the demo's record against torch directly (exception types and message
fragments, storage pointers), so a demo that reported a stale answer would fail here.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from core.notes import VERDICTS, NotesRef, normalise_notes_text, notes_lines, run_live
from lessons.indexing import pitfalls as ip

# ------------------------------------------------------------------------------- helpers


def test_parse_results_joins_continuation_lines_and_warnings():
    text = "a -> tensor([[1],\n        [2]])\nb -> IndexError: x -> y\nWarning: UserWarning: w"
    assert ip.parse_results(text) == (
        ("a", "tensor([[1],\n        [2]])"),
        ("b", "IndexError: x -> y"),
        ("Warning", "UserWarning: w"),
    )


def test_same_print_ignores_whitespace_only():
    assert ip.same_print("tensor([ 5,  9])", "tensor([5,\n 9])")
    assert not ip.same_print("tensor([5, 9])", "tensor([5, 8])")


# ------------------------------------------------------------------------------- .item()

_NOTES_ITEM = (  # 002:128, 002:150, 002:152
    ("tmp_2_inds", "tensor([], size=(0, 1), dtype=torch.int64)"),
    ("tmp_2_inds.shape", "torch.Size([0, 1])"),
    ("tmp_2_inds.squeeze(1).shape", "torch.Size([0])"),
)


def test_item_on_empty_reports_todays_error():
    demo = ip.item_on_empty_demo()
    assert not demo.run.raised
    with pytest.raises(RuntimeError) as real:
        torch.empty(0, 1, dtype=torch.long).item()
    assert demo.result("tmp_2_inds.item()") == f"RuntimeError: {real.value}"
    assert demo.result("tmp_2_inds.item()").startswith(
        "RuntimeError: a Tensor with 0 elements cannot be converted to Scalar"
    )
    assert demo.result("float(tmp_2_inds)") == ip.NOTES_ITEM_ERROR
    assert demo.result("tmp_2_inds.squeeze(1).tolist()") == "[]"
    # shapes and numel print as in the notes, the error does not: the demo must not claim a match
    assert demo.matches_notes is False
    for label in ("tmp_2_inds", "tmp_2_inds.shape", "tmp_2_inds.squeeze(1).shape"):
        assert ip.same_print(demo.result(label), dict(_NOTES_ITEM)[label]), label
    assert "raises RuntimeError: a Tensor with 0 elements" in demo.verdict
    assert "not the notes' ValueError" in demo.verdict
    assert "float(t) still raises the notes' ValueError" in demo.verdict


# ------------------------------------------------------------------------------- 0 < a < 2


def test_chained_comparisons_raise_and_the_right_form_masks():
    demo = ip.chained_comparison_demo()
    ambiguous = "RuntimeError: Boolean value of Tensor with more than one value is ambiguous"
    assert demo.result("0 < tmp_a < 2") == ambiguous
    assert demo.result("tmp_a > 0 & tmp_a < 2") == ambiguous
    tmp_a = torch.tensor([[0, 1, 4, 1, 2], [3, 1, 0, 4, 2]])
    assert demo.result("(tmp_a > 0) & (tmp_a < 2)") == str((tmp_a > 0) & (tmp_a < 2))
    assert demo.result("0 & tmp_a") == str(torch.zeros_like(tmp_a))
    assert demo.result("torch.nonzero((tmp_a > 0) & (tmp_a < 2), as_tuple=False)") == str(
        torch.tensor([[0, 1], [0, 3], [1, 1]])
    )
    assert "0 < tmp_a < 2 raised RuntimeError: Boolean value" in demo.verdict
    assert "tmp_a > (0 & tmp_a) < 2" in demo.verdict
    # one = tensor([3]): (3 > 0) and (0 < 2) is tensor([True]) although 3 is not < 2
    assert demo.result("one > 0 & one < 2") == "tensor([True])"
    assert demo.result("(one > 0) & (one < 2)") == "tensor([False])"
    assert "silently wrong" in demo.verdict


@pytest.mark.parametrize("value", ip.ONE_VALUES)
def test_one_element_verdict_agrees_with_torch(value):
    demo = ip.chained_comparison_demo(value)
    one = torch.tensor([value])
    wrong = one > (0 & one) < 2  # what `one > 0 & one < 2` parses as
    right = (one > 0) & (one < 2)
    assert demo.result("one > 0 & one < 2") == str(wrong)
    assert ("silently wrong" in demo.verdict) == (not torch.equal(wrong, right))


@pytest.mark.parametrize("bad", [10, -10, 1.5, True, "3"])
def test_chained_comparison_refuses_bad_values(bad):
    with pytest.raises(ValueError, match="one_value must be an int"):
        ip.chained_comparison_demo(bad)


# ------------------------------------------------------------------------------- 0-d masks


def test_zero_dim_demo_reproduces_every_printed_result_of_the_notes():
    demo = ip.zero_dim_index_demo()
    assert demo.matches_notes is True
    for label, printed in ip.NOTES_ZERO_DIM_PRINTED.items():
        assert ip.same_print(demo.result(label), printed), label
    assert demo.result("tmp_sub_a_1[0]").startswith("IndexError: invalid index of a 0-dim tensor")
    assert "All 13 results the notes print match." in demo.verdict
    assert "gives a 0-d mask here" in demo.verdict


def test_zero_dim_two_matches_breaks_the_recipe():
    demo = ip.zero_dim_index_demo(ip.TWO_MATCHES_TMP_A)
    assert demo.matches_notes is False
    assert demo.result("mask_sub_a_3.shape") == "torch.Size([2])"
    with pytest.raises(IndexError) as real:
        torch.tensor(5)[torch.tensor([True, True])]
    assert demo.result("tmp_sub_a_1[mask_sub_a_3]") == f"IndexError: {real.value}"
    assert "occurs 2 times" in demo.verdict and "raises as well" in demo.verdict


@pytest.mark.parametrize("bad", [(), tuple(range(9)), (1, -1), (1, 2.0), (100,)])
def test_zero_dim_refuses_bad_tmp_a(bad):
    with pytest.raises(ValueError, match="tmp_a must be"):
        ip.zero_dim_index_demo(bad)


# ------------------------------------------------------------------------------- view(-1)


def test_view_order_matches_the_notes_and_transpose_needs_contiguous():
    demo = ip.view_order_demo()
    assert demo.verbatim and demo.matches_notes is True
    tmp_a = torch.tensor([[5, 9, 6, 1, 6, 3], [15, 9, 7, 7, 14, 2], [13, 11, 16, 5, 3, 12]])
    assert demo.result("tmp_a.view(-1)") == str(tmp_a.view(-1))
    assert demo.result("tmp_a.transpose(1, 0).contiguous().view(-1)") == str(
        tmp_a.t().contiguous().view(-1)
    )
    assert demo.result("tmp_a.transpose(1, 0).view(-1)").startswith(
        "RuntimeError: view size is not compatible"
    )
    assert demo.verdict.startswith("All 6 results match the notes")


def test_notes_view_transcription_is_what_the_notes_print():
    # A hand check of two transcribed entries against the notes' text (002:325, 002:351).
    assert ip.same_print(
        ip.NOTES_VIEW_PRINTED["tmp_a.transpose(1, 0).contiguous().view(-1)"],
        "tensor([ 5, 15, 13,  9,  9, 11,  6,  7, 16,  1,  7,  5,  6, 14,  3,  3,  2, 12])",
    )
    assert ip.same_print(
        ip.NOTES_VIEW_PRINTED["tmp_b.view(1, -1).expand(num_dim0, num_dim1).contiguous().view(-1)"],
        "tensor([5, 9, 6, 1, 6, 3, 5, 9, 6, 1, 6, 3, 5, 9, 6, 1, 6, 3])",
    )


# ------------------------------------------------------------------------------- view/reshape


def test_view_reshape_default_is_the_notes_case():
    demo = ip.view_or_reshape()
    assert (demo.shape, demo.perm, demo.new_shape) == ((2, 3, 4), (1, 0, 2), (6, 4))
    assert demo.stride == (4, 12, 1) and not demo.is_contiguous
    assert demo.view_error is not None and "view size is not compatible" in demo.view_error
    assert demo.reshape_shares_storage is False
    assert demo.verdict.startswith("view(6, 4) refused: RuntimeError: view size")
    assert "made a copy (new storage)" in demo.verdict


def test_view_works_on_a_non_contiguous_tensor_when_strides_allow():
    demo = ip.view_or_reshape((2, 3, 4), (1, 0, 2), (3, 2, 2, 2))
    assert not demo.is_contiguous and demo.view_ok and demo.reshape_shares_storage
    assert "worked on this non-contiguous tensor" in demo.verdict
    assert "a view (same storage)" in demo.verdict


def _independent(shape, perm, new_shape):
    x = torch.arange(math.prod(shape)).reshape(shape).permute(perm)
    try:
        x.view(new_shape)
        view_ok = True
    except RuntimeError:
        view_ok = False
    r = x.reshape(new_shape)
    shares = r.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    return x, view_ok, shares


@st.composite
def _view_cases(draw):
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    perm = draw(st.sampled_from(ip.permutations_of(ndim)))
    permuted = tuple(shape[p] for p in perm)
    target = draw(st.sampled_from(ip.reshape_targets(permuted)))
    return shape, perm, target


@settings(max_examples=40, deadline=None)
@given(_view_cases())
def test_view_or_reshape_agrees_with_storage_pointers(case):
    shape, perm, target = case
    demo = ip.view_or_reshape(shape, perm, target)
    x, view_ok, shares = _independent(shape, perm, target)
    assert not demo.run.raised
    assert demo.view_ok == view_ok
    assert demo.reshape_shares_storage == shares
    assert demo.is_contiguous == x.is_contiguous()
    assert demo.stride == x.stride()
    # reshape is a view exactly when view works
    assert demo.reshape_shares_storage == demo.view_ok
    assert ("refused" in demo.verdict) == (not view_ok)


def test_reshape_targets_and_permutations():
    assert ip.reshape_targets((3, 2, 4)) == [(6, 4), (3, 8), (-1,), (3, 2, 2, 2)]
    assert ip.permutations_of(3)[0] == (1, 0, 2)
    assert len(ip.permutations_of(4)) == 24
    assert ip.permutations_of(1) == [(0,)]


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (((2, 3, 4), (0, 1), (6, 4)), "perm must be a permutation"),
        (((2, 3, 4), (1, 0, 2), (5, 4)), "does not hold 24 elements"),
        (((2, 3, 4), (1, 0, 2), (-1, -1)), "one -1"),
        (((0, 3), (0, 1), (-1,)), "each 1..16"),
        (((16, 16, 2), (0, 1, 2), (-1,)), "at most 256 elements"),
    ],
)
def test_view_or_reshape_refuses_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        ip.view_or_reshape(*args)


# ------------------------------------------------------------------------------- in-place


def test_inplace_after_sigmoid_raises_the_notes_error():
    demo = ip.inplace_autograd_demo("sigmoid_iadd")
    backward = demo.result("backward")
    assert backward.startswith(
        "RuntimeError: one of the variables needed for gradient computation has been "
        "modified by an inplace operation"
    )
    assert demo.result("saved._version before") == "0"
    assert demo.result("saved._version after") == "1"
    assert "is at version 1; expected version 0 instead" in backward
    assert demo.verdict.startswith("backward raised: `y += 1` moved the saved tensor")


def test_slice_assignment_after_sigmoid_raises_too():
    demo = ip.inplace_autograd_demo("sigmoid_slice")
    assert "modified by an inplace operation" in demo.result("backward")


def test_inplace_after_mul_is_harmless():
    demo = ip.inplace_autograd_demo("mul_iadd")
    assert demo.result("backward") == "ok, x.grad = tensor([2., 2., 2.])"
    assert "keeps nothing of y" in demo.verdict


def test_out_of_place_keeps_the_saved_version():
    demo = ip.inplace_autograd_demo("sigmoid_out_of_place")
    x = torch.ones(3, requires_grad=True)
    (torch.sigmoid(x) + 1).sum().backward()
    assert demo.result("backward") == f"ok, x.grad = {x.grad}"
    assert demo.result("saved._version after") == "0"
    assert "makes a new tensor" in demo.verdict


def test_inplace_refuses_unknown_variant():
    with pytest.raises(ValueError, match="variant must be one of"):
        ip.inplace_autograd_demo("relu")


# ------------------------------------------------------------------------------- new_zeros


def test_new_zeros_reproduces_the_notes():
    demo = ip.new_zeros_demo()
    assert demo.verbatim and demo.matches_notes is True
    assert demo.result("tmp_a unchanged") == "True"
    assert demo.result("tmp_b shares tmp_a's storage") == "False"
    assert demo.result("tmp_a[2, :] shares tmp_a's storage") == "True"
    assert demo.result("tmp_b.dtype") == "torch.int64"
    assert "tmp_b prints exactly as in the notes." in demo.verdict
    assert "with its own storage, and tmp_a is unchanged." in demo.verdict


def test_new_zeros_other_row_is_a_variation():
    demo = ip.new_zeros_demo(0)
    assert not demo.verbatim and demo.matches_notes is None
    expected = torch.zeros(3, 5, dtype=torch.long)
    expected[0] = torch.arange(5)
    assert demo.result("tmp_b") == str(expected)


@pytest.mark.parametrize("bad", [3, -1, True])
def test_new_zeros_refuses_bad_rows(bad):
    with pytest.raises(ValueError, match="row must be 0, 1 or 2"):
        ip.new_zeros_demo(bad)


# ------------------------------------------------------------------------------- snippets


#: Every demo's function, run at its default arguments (the notes' own case where there is one).
DEMOS = (
    ip.item_on_empty_demo,
    ip.chained_comparison_demo,
    ip.zero_dim_index_demo,
    ip.view_order_demo,
    ip.view_or_reshape,
    ip.inplace_autograd_demo,
    ip.new_zeros_demo,
)


@pytest.mark.parametrize("make", DEMOS, ids=lambda make: make.__name__)
def test_every_snippet_runs_as_is(make):
    """The shown snippet, run again in a fresh namespace, prints the same and never raises."""
    demo = make()
    again = run_live(demo.code)
    assert not again.raised, again.error
    assert again.output == demo.run.output
    assert demo.verdict


# ------------------------------------------------------------------------------- callouts


def test_callouts_are_decided_by_todays_torch():
    callouts = {c.key: c for c in ip.notes_callouts()}
    assert set(callouts) == {
        "item_empty_error",
        "zero_dim_mask_recipe",
        "view_needs_contiguous",
        "view_example_never_raises",
    }
    for c in callouts.values():
        assert c.verdict in VERDICTS

    item = callouts["item_empty_error"]
    assert item.verdict == "out of date"
    assert item.today_text.startswith(
        ".item() on the empty tensor now raises RuntimeError: a Tensor with 0 elements"
    )
    assert "An `except ValueError` around .item() no longer catches it" in item.today_text

    recipe = callouts["zero_dim_mask_recipe"]
    assert recipe.verdict == "incomplete"
    assert "raises the same IndexError: too many indices for tensor of dimension 0" in (
        recipe.today_text
    )

    contiguous = callouts["view_needs_contiguous"]
    assert contiguous.verdict == "out of date"
    assert contiguous.today_text.startswith(
        "view works on this transposed, non-contiguous tensor for a.view(2, 2, 3)"
    )
    assert "a.view(12,) is refused" in contiguous.today_text
    a = torch.arange(12).reshape(3, 4).t()
    assert not a.is_contiguous()
    assert a.view(2, 2, 3).untyped_storage().data_ptr() == a.untyped_storage().data_ptr()

    example = callouts["view_example_never_raises"]
    assert example.verdict == "wrong"
    assert not example.run.raised
    assert example.today_text.startswith("Run as written, the last line does not raise")
    assert (
        "The error needs view on the transposed tensor itself: RuntimeError" in example.today_text
    )


def test_view_example_snippet_contains_the_notes_lines_verbatim():
    try:
        notes = notes_lines(NotesRef("004", 124, 132))
    except FileNotFoundError:
        pytest.skip("the notes are not beside the repo")
    code_lines = ip.NOTES_VIEW_EXAMPLE_CODE.splitlines()[2:11]
    assert normalise_notes_text(" ".join(code_lines)) == notes
