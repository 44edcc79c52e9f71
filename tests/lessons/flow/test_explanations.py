"""Tests for lessons.flow.explanations: the page's sentences carry the live numbers, pick the
variant that fits them, and stay catalog messages (a template and its values)."""

from __future__ import annotations

import pytest

from core.text import T
from lessons.flow import explanations as say
from lessons.flow.fill import (
    METHOD_CV2,
    NOTES_NUMPY_MAX_HOLES,
    NOTES_NUMPY_METHOD,
    NOTES_TORCH_METHOD,
    FlowSpec,
    build_flow,
    case_from_flow,
    combine_methods,
    run_method,
)


@pytest.fixture(scope="module")
def case():
    return build_flow(FlowSpec(height=32, width=40, field="rotation", mask="random"))


@pytest.fixture(scope="module")
def rows(case):
    names = (METHOD_CV2, NOTES_TORCH_METHOD, NOTES_NUMPY_METHOD, "nearest valid")
    return [run_method(case, name, max_window=9) for name in names]


def test_seconds_text():
    assert say.seconds_text(999.4) == "999 ms"
    assert say.seconds_text(1000.0) == "1.0 s"
    assert say.seconds_text(21_500.0) == "21.5 s"


def test_sentences_are_templates_with_their_values(case):
    alt = say.picture_alt(case, 7)
    assert isinstance(alt, T) and "{holes:,}" in alt.template and "7 hole pixels" in alt
    # a value that is a catalog message itself is marked too, so the page translates it
    assert isinstance(alt.args["reference"], T) and alt.args["reference"] == "ground truth"
    caption = say.picture_caption(case, 320)
    assert "1,280 pixels, 320 holes (25%)" in caption


def test_picture_alt_names_the_reference_only_when_there_is_one(case):
    own_holes = case_from_flow(case.flow, FlowSpec())
    assert "the ground truth." in say.picture_alt(case, 1)
    assert "reference" not in say.picture_alt(own_holes, 1).template


@pytest.mark.parametrize(("step", "expected"), [(1, None), (2, "every 2nd pixel"),
                                                (3, "every 3rd pixel"), (4, "every 4th pixel")])
def test_thinned_caption(step, expected):
    caption = say.thinned_caption(step)
    assert caption is None if expected is None else expected in caption


def test_windows_summary_asks_for_a_larger_window_only_when_values_stayed_nan():
    filled = say.windows_summary(9, (3, 5, 9), (0, 2, 3, 95), 100, 0)
    assert "95 of 100 hole pixels" in filled and "**0 hole values stayed NaN**" in filled
    assert "raise max_window" not in filled
    short = say.windows_summary(9, (3, 5, 9), (40, 0, 0, 60), 100, 80)
    assert "within 9x9" in short and "raise max_window" in short


def test_made_says_this_run_or_how_long_ago():
    assert say.made(100.0, 100.0) == "this run"
    assert say.made(70.0, 100.0) == "cache, <1 min ago"
    assert say.made(100.0 - 600, 100.0) == "cache, 10 min ago"


def test_step_label_gives_the_notes_reference_its_time():
    assert say.step_label(2, 6, NOTES_TORCH_METHOD, 2500.0).endswith("(expected about 2.5 s)...")
    assert say.step_label(3, 6, "nearest valid", 2500.0) == "Step 3 of 6: nearest valid..."


def test_progress_reporter_formats_in_the_language_it_was_made_in():
    catalog = {NOTES_NUMPY_METHOD: "笔记的 NumPy 循环",
               "{name}: {done:,} of {total:,} hole pixels":
                   "{name}：{done:,} / {total:,} 个空洞像素"}
    shown = []
    report = say.progress_reporter(lambda fraction, text: shown.append((fraction, text)),
                                   NOTES_NUMPY_METHOD, lambda m: catalog.get(m, m))
    catalog.clear()  # the callback runs later: its texts were translated when it was made
    report(5, 2000)
    report(0, 0)
    assert shown == [(0.0025, "笔记的 NumPy 循环：5 / 2,000 个空洞像素"),
                     (0.0, "笔记的 NumPy 循环：0 / 0 个空洞像素")]


def test_notes_time_and_fill_done_are_parts_to_join():
    on = say.notes_time(2500.0, "cpu", (240, 320, 2), "", True)
    off = say.notes_time(2500.0, "cpu", (240, 320, 2), "12:30", False)
    assert [str(p) for p in on] == ["Notes' version: about **2.5 s** on `cpu` at 240x320 (rate "
                                    "measured on this 2-core CPU)"]
    assert "rate measured here at 12:30" in off[0] and off[1] == "; off."
    assert "".join(say.fill_done(6, 1.25, 2)) == ("6 methods filled in 1.2 s; 2 timings reused "
                                                  "from the cache")
    assert len(say.fill_done(6, 1.25, 0)) == 1


def test_comparison_table(case, rows):
    comp = combine_methods(case, rows, max_window=9)
    table = say.comparison_table(comp.methods, dict.fromkeys([r.name for r in rows], 0.0), 1.0,
                                 str.upper)
    assert len(table) == 4 and list(table[0])[0] == "METHOD"
    assert table[0]["METHOD"] == METHOD_CV2.upper() and table[0]["TIMED"] == "CACHE, <1 MIN AGO"
    assert table[0]["DEVICE"] == "cpu"  # a device is not a catalog message
    assert "Horizontal bar chart" in say.timing_alt(comp.methods, str)


def test_epe_and_speed_summaries(case, rows):
    comp = combine_methods(case, rows, max_window=9)
    summary = say.epe_summary(case.reference_kind, comp.methods)
    best = min(comp.methods, key=lambda m: m.mean_epe)
    assert f"{comp.methods[0].mean_epe:.3f} px" in summary and f"*{best.name}*" in summary
    assert say.epe_summary("none", [run_method(case_from_flow(case.flow, FlowSpec()),
                                               METHOD_CV2)]) is None
    speed = say.speed_summary("cpu", comp.methods[1], comp.methods)
    assert "Speed on `cpu`" in speed and "faster" in speed


def test_numpy_loop_result_picks_what_the_tab_says(case, rows):
    comp = combine_methods(case, rows, max_window=9)
    assert "the error" in say.numpy_loop_result(case, comp.methods, offer=True)
    own_holes = case_from_flow(case.flow, FlowSpec())
    alone = [run_method(own_holes, n, max_window=9) for n in (METHOD_CV2, NOTES_NUMPY_METHOD)]
    assert "no reference" in say.numpy_loop_result(own_holes, alone, offer=True)
    without = [rows[0]]
    assert f"{NOTES_NUMPY_MAX_HOLES:,} hole pixels" in say.numpy_loop_result(case, without,
                                                                            offer=True)
    assert say.numpy_loop_result(case, without, offer=False) is None
    intro = say.numpy_loop_intro(33, (3, 5, 9, 17, 33))
    assert "windows 32, 16, 8, 4, 2" in intro and "`max_window_size = 32`" in intro


def test_upload_prompts_and_hints():
    assert ".flo" in say.upload_prompt("upload_flow")
    assert "two images" in say.upload_prompt("upload_pair")
    assert "upload a flow file" in say.wrong_hint("upload_flow")
    assert "hole fraction" in say.wrong_hint("synthetic")
    assert r"S(p)=\{k" in say.FORMULA_LATEX and "only NaN values" in say.FORMULA_NOTE
