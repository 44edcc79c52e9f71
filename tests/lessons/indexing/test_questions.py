"""The indexing page's "predict, then reveal" questions: each right choice is what torch gives
for the tensors on the page (computed here with torch directly, not with lessons.indexing),
every other choice is contradicted by that run, the notes' claims are where the choices cite
them, and the panel on the page works in both languages."""

from __future__ import annotations

import ast
import re
import time
import warnings
from collections import defaultdict

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.notes import NotesRef, quote_is_at
from core.questions import Question
from lessons.indexing import cases, examples, presets
from lessons.indexing.questions import FIGURE_PART, INDEX_PART, questions
from testing.apptest import check_solo_predict_flow, pick_question, reveal
from tests.app.conftest import open_cold, open_expanders
from tests.notes_marks import needs_notes

CASES = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
REDUCES = [None, "scatter_add", "add", "multiply", "sum", "prod", "mean", "amax", "amin"]
MODES = ("sum", "prod", "mean", "amax", "amin")
#: A distinctive fragment of each notes line a choice cites.
NOTES_CLAIMS = {
    "002:940": "则x[1][0]=0.5735会覆盖掉x[0][0]=0.3992对y2[0][0]的写入",
    "002:1056": "all values in a row along the specified dimension param_dim must be unique",
    "002:537": "使用多层索引不改变张量的值",
}
CELL = re.compile(r"`(\w+)((?:\[\d+\])+)`")
VALUE = re.compile(r"`([^`]+)`")


# --- reading a question without the lesson's code -------------------------------------------


def by_key(found) -> dict[str, Question]:
    return {question.key: question for question in found}


def pos_of(text: str, name: str) -> tuple[int, ...]:
    """The position of the first ``name[i][j]`` in ``text``."""
    match = re.search(rf"`{name}((?:\[\d+\])+)", text)
    assert match, (name, text)
    return tuple(int(p) for p in re.findall(r"\d+", match.group(1)))


def number(text: str) -> float:
    """The number a value choice shows (``"`6.0`"``); True/False as 1/0."""
    shown = VALUE.match(str(text)).group(1)
    return float({"True": 1, "False": 0}.get(shown, shown))


def close(a: float, b: float) -> bool:
    """Equal as the page prints them (4 significant digits)."""
    return abs(a - b) <= 1e-3 * max(abs(a), abs(b), 1e-6) or (a != a and b != b)


def wrong(question: Question):
    return [c for i, c in enumerate(question.choices) if i != question.answer]


def tensor(text: str) -> torch.Tensor:
    return torch.tensor(ast.literal_eval(text))


def check_common(found) -> None:
    assert len(found) >= 3
    assert len({q.key for q in found}) == len(found)
    for question in found:
        assert len({str(c.text) for c in question.choices}) == len(question.choices)
        assert len(question.choices) >= 2 and question.proof


# --- gather ----------------------------------------------------------------------------------


def gather_case(draw_seed: int, ndim: int, floats: bool) -> tuple[str, str, int]:
    """A gather case the page's Random button could make (input as floats when ``floats``)."""
    texts = examples.random_case("gather", ndim, draw_seed)
    first = texts["first"]
    if floats:
        first = str((tensor(first).float() / 7).tolist())
    return first, texts["index"], int(texts["dim"])


@CASES
@given(seed=st.integers(0, 10_000), ndim=st.integers(1, 3), floats=st.booleans())
def test_gather_answers_are_what_gather_gives(seed, ndim, floats):
    first, index_text, dim = gather_case(seed, ndim, floats)
    trace, err, _ = cases.run_case("gather", first, index_text, "", dim)
    assert err is None
    found = questions(trace)
    check_common(found)
    q = by_key(found)
    inp, index = tensor(first), tensor(index_text)
    if floats:
        inp = inp.float()
    out = torch.gather(inp, dim, index)

    value = q["gather-value"]
    p = pos_of(value.prompt, "out")
    assert close(number(value.correct.text), float(out[p]))
    assert all(not close(number(c.text), float(out[p])) for c in wrong(value))

    source = q["gather-source"]
    assert pos_of(source.prompt, "out") == p
    read = list(p)
    read[dim] = int(index[p])
    assert pos_of(source.correct.text, "input") == tuple(read)
    assert inp[tuple(read)] == out[p]
    for choice in wrong(source):
        cell = CELL.search(choice.text)
        assert cell.group(1) == "index" or pos_of(choice.text, "input") != tuple(read)

    shape = q["gather-shape"]
    assert shape.correct.text == f"`{tuple(out.shape)}`"
    assert all(c.text != f"`{tuple(out.shape)}`" for c in wrong(shape))
    assert all(q.hides == FIGURE_PART for q in found)

    repeats = index.shape[dim] > 1 and bool((index.sort(dim).values.diff(dim=dim) == 0).any())
    assert ("gather-repeats" in q) == repeats
    if repeats:
        question = q["gather-repeats"]
        a, b = pos_of(question.prompt, "index"), pos_of(question.prompt.split(" and ")[1], "index")
        assert index[a] == index[b] and out[a] == out[b]
        assert question.correct.text.startswith("It runs: ")
        assert [c.notes for c in wrong(question)] == ["002:1056", None]


def test_the_notes_gather_repeats_and_is_read_twice():
    preset = presets.PRESETS_BY_KEY["gather"]
    trace = cases.run_case("gather", preset.first, preset.index, "", preset.dim)[0]
    question = by_key(questions(trace))["gather-repeats"]
    assert "`index[0][0]` and `index[0][1]` are both 0" in question.prompt
    assert "`out[0][0]` = `out[0][1]` = 1" in question.proof


# --- scatter ---------------------------------------------------------------------------------


def scatter_case(seed: int, ndim: int, floats: bool, scalar: bool) -> tuple[str, str, str, int]:
    texts = examples.random_case("scatter", ndim, seed)
    first, src = texts["first"], texts["src"]
    if floats:
        first = str((tensor(first).float() + 0.5).tolist())
        src = str((tensor(src).float() / 4).tolist())
    if scalar:
        src = "2.5" if floats else "3"
    return first, texts["index"], src, int(texts["dim"])


def torch_scatter(dest, dim, index, src, reduce, include_self):
    out = dest.clone()
    if reduce is None:
        return out.scatter_(dim, index, src)
    if reduce == "scatter_add":
        return out.scatter_add_(dim, index, src)
    if reduce in ("add", "multiply"):
        return out.scatter_(dim, index, src, reduce=reduce)
    return out.scatter_reduce_(dim, index, src, reduce, include_self=include_self)


@CASES
@given(seed=st.integers(0, 10_000), ndim=st.integers(1, 3), floats=st.booleans(),
       scalar=st.booleans(), reduce=st.sampled_from(REDUCES),
       include_self=st.booleans())  # fmt: skip
def test_scatter_answers_are_what_scatter_gives(seed, ndim, floats, scalar, reduce, include_self):
    scalar = scalar and reduce in (None, "add", "multiply")
    first, index_text, src_text, dim = scatter_case(seed, ndim, floats, scalar)
    trace, err, _ = cases.run_case("scatter", first, index_text, src_text, dim, reduce,
                                   include_self)  # fmt: skip
    assert err is None, err
    found = questions(trace)
    check_common(found)
    q = by_key(found)
    dest, index = tensor(first), tensor(index_text)
    src = ast.literal_eval(src_text) if scalar else tensor(src_text)
    with warnings.catch_warnings():  # reduce="add"/"multiply" are deprecated: torch says so
        warnings.simplefilter("ignore")
        out = torch_scatter(dest, dim, index, src, reduce, include_self)
    targets = defaultdict(list)
    for s in map(tuple, torch.cartesian_prod(*map(torch.arange, index.shape)).reshape(
            -1, index.dim()).tolist()):  # fmt: skip
        target = list(s)
        target[dim] = int(index[s])
        targets[tuple(target)].append(s)

    target = q["scatter-target"]
    s = pos_of(target.prompt, "index")
    expected = list(s)
    expected[dim] = int(index[s])
    assert target.correct.text == f"`out{''.join(f'[{i}]' for i in expected)}`"
    assert all(c.text != target.correct.text for c in wrong(target))

    untouched = q["scatter-untouched"]
    assert untouched.correct.text == str(dest.numel() - len(targets))
    assert all(c.text != untouched.correct.text for c in wrong(untouched))

    undecided = [t for t, w in targets.items() if len(w) > 1 and not scalar and reduce is None
                 and len({float(src[x]) for x in w}) > 1]  # fmt: skip
    assert ("scatter-winner" in q) == bool(undecided)
    if undecided:
        winner = q["scatter-winner"]
        cell = pos_of(winner.prompt, "out")
        assert cell in undecided
        assert winner.correct.text.startswith("Unspecified: this run kept ")
        assert close(number(winner.correct.text.split("kept ")[1]), float(out[cell]))
        assert [c.notes for c in wrong(winner)][0] == "002:940"
        assert "non-deterministic" in winner.correct.why  # torch's own docs, read live
    if "scatter-value" in q:
        value = q["scatter-value"]
        cell = pos_of(value.prompt, "out")
        assert cell in targets and cell not in undecided
        assert close(number(value.correct.text), float(out[cell]))
        assert all(not close(number(c.text), float(out[cell])) for c in wrong(value))
    else:
        assert undecided and all(t in undecided for t in targets)


def test_the_notes_y2_collision_asks_which_write_wins():
    y2 = presets.PRESETS_BY_KEY["scatter_y2"]
    trace = cases.run_case("scatter", y2.first, y2.index, y2.src, y2.dim)[0]
    winner = by_key(questions(trace))["scatter-winner"]
    assert "`src[0][0]` = 0.3992, `src[1][0]` = 0.5735 all write into `out[0][0]`" in winner.prompt
    last = next(c for c in winner.choices if c.notes == "002:940")
    assert last.text.startswith("`0.5735` from `src[1][0]`, always")


def test_a_mean_offers_the_sum_and_the_other_include_self():
    trace = cases.run_case("scatter", "[10.0, 0.0, 0.0]", "[0, 1, 0, 1, 2, 2]",
                           "[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]", 0, "mean", True)[0]  # fmt: skip
    value = by_key(questions(trace))["scatter-value"]
    cell = pos_of(value.prompt, "out")
    dest = torch.tensor([10.0, 0.0, 0.0])
    idx, src = torch.tensor([0, 1, 0, 1, 2, 2]), torch.tensor([1.0, 2, 3, 4, 5, 6])
    shown = [number(c.text) for c in value.choices]

    def run(reduce: str, include_self: bool) -> float:
        return float(dest.clone().scatter_reduce_(0, idx, src, reduce,
                                                  include_self=include_self)[cell])  # fmt: skip

    assert close(number(value.correct.text), run("mean", True))
    assert any(close(v, run("mean", False)) for v in shown)
    assert any(close(v, run("sum", True)) for v in shown)


# --- x[...] ----------------------------------------------------------------------------------


@pytest.mark.parametrize("expr", [*examples.INDEX_PRESETS.values(), "True", "1:, 2", "..., [0]"])
def test_view_or_copy_is_what_the_storages_say(expr):
    x_text = examples.INDEX_DEFAULT_X
    gather = presets.PRESETS_BY_KEY["gather"]
    trace = cases.run_case("gather", gather.first, gather.index, "", gather.dim)[0]
    itrace = cases.run_index_case(x_text, expr)[0]
    question = by_key(questions(trace, itrace))["index-view"]
    x = tensor(x_text)
    out = eval(f"x[{expr}]", {"x": x})  # the test's own fixed expressions
    view = out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert question.correct.text.startswith("A view:" if view else "A copy:")
    assert question.hides == INDEX_PART
    cited = [c for c in question.choices if c.notes]
    assert [c.notes for c in cited] == (["002:537"] if view else [])
    assert all(not c.text.startswith("A view:" if view else "A copy:") for c in wrong(question))


def test_no_question_without_a_case_that_runs():
    bad = presets.PRESETS_BY_KEY["gather_out_of_range"]
    trace, err, _ = cases.run_case("gather", bad.first, bad.index, "", bad.dim)
    with pytest.raises(ValueError, match="index 3 is out of bounds"):
        questions(trace, None, err)
    itrace = cases.run_index_case(examples.INDEX_DEFAULT_X, "1")[0]
    with pytest.raises(ValueError, match="'index' trace"):
        questions(itrace)


def test_cheap_enough_to_build_on_open():
    dest, index = str([[0.0] * 10] * 6), str([[5, 4, 3, 2, 1, 0, 1, 2, 3, 4]] * 6)
    src = str([[float(i) for i in range(10)]] * 6)  # the page's largest 2-D case
    trace = cases.run_case("scatter", dest, index, src, 1, "mean", False)[0]
    start = time.perf_counter()
    questions(trace, cases.run_index_case(examples.INDEX_DEFAULT_X, ":, [0, 2]")[0])
    assert time.perf_counter() - start < 1.0


@needs_notes
def test_notes_refs_hold_the_claims():
    cited = set()
    itrace = cases.run_index_case(examples.INDEX_DEFAULT_X, "1:, ::2")[0]
    for preset in presets.PRESETS:
        trace = cases.run_case(preset.op, preset.first, preset.index, preset.src, preset.dim,
                               preset.reduce, preset.include_self)[0]  # fmt: skip
        if trace is not None:
            cited |= {ref for q in questions(trace, itrace) for ref in q.notes_refs}
    assert cited == set(NOTES_CLAIMS)
    for ref, fragment in NOTES_CLAIMS.items():
        assert quote_is_at(fragment, NotesRef.parse(ref)), ref


# --- The panel on the page -------------------------------------------------------------------


def _page_questions():
    gather = presets.PRESETS_BY_KEY["gather"]
    trace = cases.run_case("gather", gather.first, gather.index, "", gather.dim)[0]
    expr = next(iter(examples.INDEX_PRESETS.values()))
    return questions(trace, cases.run_index_case(examples.INDEX_DEFAULT_X, expr)[0])


def test_solo_flow_on_the_page(open_page):
    at = open_expanders(open_page("indexing"), "predict.open")
    expected = _page_questions()
    assert {q.hides for q in expected} == {FIGURE_PART, INDEX_PART}
    check_solo_predict_flow(at, expected, only_error=True)


@pytest.mark.parametrize("preset", ["gather", "scatter_y2"])
def test_questions_in_chinese(preset):
    from tests.app.i18n_checks import untranslated, visible_texts

    chosen = presets.PRESETS_BY_KEY[preset]
    at = open_cold("indexing", {"lang": "zh", "indexing.preset": chosen.menu_label})
    at = open_expanders(at, "predict.open")
    trace = cases.run_case(chosen.op, chosen.first, chosen.index, chosen.src, chosen.dim)[0]
    itrace = cases.run_index_case(examples.INDEX_DEFAULT_X, "1:, ::2")[0]
    for index, question in enumerate(questions(trace, itrace)):
        reveal(pick_question(at, index))  # no prediction: the answer, then why
        # the panel draws no code; the y2 preset's notes code keeps its English comment
        found = [text for text in untranslated(visible_texts(at)) if text[0] != "code.comment"]
        assert found == [], question.key
    body = " ".join(m.value for m in at.markdown)
    assert "`x[1:, ::2]`" in body  # code stays code in the translation
