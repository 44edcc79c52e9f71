"""lessons.saliency.explanations: each text says the live numbers, as a template the page
translates (its msgid is in the saliency catalog)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from babel.messages.pofile import read_po

from core.text import T
from lessons.saliency import explanations as E
from lessons.saliency.maps import SaliencyResult
from lessons.saliency.scaling import compare_scalings
from tools.i18n import po_path


def _result(method: str = "vanilla", objective: str = "logit", **extra) -> SaliencyResult:
    return SaliencyResult(method, objective, "sum", 285, torch.zeros(4, 4), torch.zeros(10),
                          forward_ms=30.0, backward_ms=50.0, **extra)  # fmt: skip


@pytest.fixture(scope="module")
def catalog() -> set[str]:
    with po_path("saliency", "zh_CN").open("rb") as po:
        return {message.id for message in read_po(po) if message.id and message.string}


def test_every_text_is_a_translated_template(catalog):
    comparison = compare_scalings(np.arange(100.0).reshape(10, 10))
    texts = [
        E.model_help([]), E.model_help(["ResNet-18"]), E.upload_help(), E.recipe_help(),
        E.provenance(True, False, 0.4, 0.2, 0.0), E.provenance(False, True, 0.4, 0.2, 0.0),
        E.provenance(False, False, 0.4, 0.2, 3.0), E.recipe_caption(True, "notes 000:2"),
        E.recipe_caption(False, "notes 000:2"), E.timing_help(_result(images=1)),
        E.timing_note(_result(images=4), "cpu", None, E.provenance(True, False, 1, 1, 0)),
        E.sanity_cost(6, 7, 1.1), E.notes_recipe_intro("notes 000:2"),
        E.scalings_differ(comparison, "logit"), E.scalings_differ(comparison, "loss"),
        E.why_the_app_recipe(0.78), *E.map_texts("smoothgrad", 12, 24.0), E.sanity_work(6, 7),
        *(help for _label, _value, help in E.timing_metrics(_result(images=1)) if help),
    ]  # fmt: skip
    texts += E.how_it_was_made(
        _result("integrated_gradients", "loss", images=8, completeness=(1.0, 1.1)),
        class_name="tabby", prob=0.5, notes_scaled=True, comparison=comparison, percentile=99,
        share=0.05, n=25, sigma=0.15,
    )  # fmt: skip
    for ref in ("notes 000:2", None):
        captions = E.figure_captions("SmoothGrad", "logit", "sum", 285, "tabby", 0.5, ref)
        texts += [text for pair in captions for text in pair if isinstance(text, T)]
    constants = [E.ARCHITECTURE_HELP, E.UPLOAD_HINT, E.REGISTRY_HINT, E.VIEW_NOTE,
                 E.CHOOSE_IMAGE, E.UNAVAILABLE_OFFLINE, E.UPLOAD_FIRST, E.MEANWHILE, E.MAP_HINT,
                 E.EXPLAINING, E.RETIME_HELP, E.RETIMED, E.LOOK_AT,
                 *(label for label, _value, _help in E.timing_metrics(_result(images=1))),
                 E.SANITY_INTRO, E.NO_LAYERS, E.SANITY_TOGGLE_HELP, E.FLAT_MAP_APP_SCALING,
                 E.SIGMA_HELP, E.NOTES_SCALING, E.OBJECTIVE_HELP, *E.TARGET_MODES,
                 *E.MODEL_SOURCES, *E.METHOD_NAMES.values(), *E.RECIPE_NAMES.values(),
                 *E.BASELINE_NAMES.values(), *E.OBJECTIVE_NAMES.values(), *E.REDUCE_NAMES.values(),
                 *(text for pair in E.SCALINGS for text in pair)]  # fmt: skip
    for text in texts:
        assert isinstance(text, T) and text.template in catalog, text.template
    assert [text for text in constants if text not in catalog] == []


def test_texts_quote_the_numbers():
    how = E.how_it_was_made(
        _result("smoothgrad", images=25), class_name="tabby", prob=0.78, notes_scaled=False,
        comparison=compare_scalings(np.arange(100.0).reshape(10, 10)), percentile=95.0,
        share=0.0523, n=25, sigma=0.15,
    )  # fmt: skip
    assert "**tabby** a probability of 0.780" in how[0] and "d score / d pixel" in how[0]
    assert "95th percentile are drawn at full colour; they hold 5.2%" in how[1]
    assert "SmoothGrad averaged 25 noisy copies (sigma 0.15)" in how[2] and len(how) == 3
    note = E.timing_note(_result(images=4), "cpu", 812.0, E.provenance(True, False, 0.4, 0.2, 0))
    assert "4 image(s) in 1 forward + backward pass(es) on `cpu` (8 + 12 ms per image)" in note
    assert "warm-up pass after loading (812 ms) is not included" in note
    assert note.endswith("Computed just now in 0.4 s (announced: about 0.2 s).")
    assert isinstance(note.args["provenance"], T)  # translated by the page as well
    assert "weight 0.220" in E.why_the_app_recipe(0.78)


def test_scalings_differ_needs_both_scalings():
    flat = compare_scalings(np.full((4, 4), 0.5))
    with pytest.raises(ValueError, match="undefined for this map"):
        E.scalings_differ(flat, "logit")


def test_figure_captions_say_which_scaling():
    app, overlay, view = E.figure_captions("SmoothGrad", "loss", "max", 292, "tiger", 0.25, None)
    assert app[0] == "SmoothGrad, loss, max" and "for class 292, tiger" in app[1]
    assert overlay[0] == "Overlay (alpha 0.25)" and view[0] == "What the model sees"
    notes, _, _ = E.figure_captions("Vanilla gradient", "loss", "sum", 292, "tiger", 0.5, "000:2")
    assert notes[0] == "The notes' recipe (000:2): loss, sum, P1..P99, uint8"


def test_map_texts_name_the_method_and_its_cost():
    label, computing, work = E.map_texts("integrated_gradients", 32, 5.12)
    assert label == "Integrated Gradients: 32 image(s) through the model, about 5.1 s"
    assert computing == label + " ... (if another session is making the same map, you get theirs)"
    assert work == "the Integrated Gradients map of 32 images"
    assert isinstance(work.args["method"], T)  # the method's name is translated by the page too
    assert E.sanity_work(6, 7) == "the sanity check: 7 maps, 7 images"


def test_timing_metrics_are_the_map_s_own_numbers():
    forward, backward, images = E.timing_metrics(_result(images=3))
    assert forward[:2] == ("Forward", "30 ms") and backward[:2] == ("Backward (input gradient)",
                                                                     "50 ms")  # fmt: skip
    assert forward[2] == E.timing_help(_result(images=3)) and images == (
        "Images through the model", 3, None)  # fmt: skip


@pytest.mark.parametrize(
    ("names", "options"),
    [(E.METHOD_NAMES, "METHODS"), (E.OBJECTIVE_NAMES, "OBJECTIVES"),
     (E.REDUCE_NAMES, "REDUCTIONS"), (E.BASELINE_NAMES, "BASELINES")],
)  # fmt: skip
def test_every_choice_has_a_name_in_the_order_of_its_options(names, options):
    """The page offers the names' keys as the options (ui.links.bound_choice)."""
    from lessons.saliency import maps
    from lessons.saliency.scaling import RECIPES

    assert list(names) == list(getattr(maps, options))
    assert list(E.RECIPE_NAMES) == list(RECIPES)


def test_retimed_quotes_the_medians():
    from lessons.saliency.maps import PassTiming

    caption = E.retimed(PassTiming(forward_ms=41.6, backward_ms=80.2, repeats=5))
    assert caption == ("Median of 5 back-to-back passes on one image, measured on request: "
                       "forward 42 ms, backward 80 ms.")  # fmt: skip
    assert caption.template == E.RETIMED  # the catalog's message, translated by the page
