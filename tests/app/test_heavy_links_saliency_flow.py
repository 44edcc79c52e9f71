"""A link cannot start heavy work on the saliency and flow pages: the issue's two links open
with the cheap view and a button that states the expected time; the click runs the work."""

from __future__ import annotations

import re

import pytest

import lessons.flow.fill as F
import lessons.saliency.maps as S
from tests.app.conftest import open_cold

SALIENCY_LINK = {
    "saliency.method": "Integrated Gradients",
    "saliency.steps": "128",
    "saliency.sanity": "true",
    "saliency.sanity_layers": "21",
}
FLOW_LINK = {
    "flow.size": "720x1280",
    "flow.max_window": "129",
    "flow.notes": "true",
    "flow.details_tab": "Accuracy and speed",
}
PER_IMAGE_MS = 160.0  # forward + backward of EfficientNet-Lite0 on this CPU (facts.md)


def _texts(elements) -> str:
    return " ".join(e.value for e in elements)


@pytest.fixture
def saliency_calls(monkeypatch) -> dict[str, list]:
    """Every map (method, images) and sanity check (layers) the page computes; the estimates use
    a fixed per-image time, so the announced seconds do not depend on how busy the machine is."""
    calls: dict[str, list] = {"maps": [], "sanity": []}
    real_compute, real_test, real_estimate = (
        S.compute_saliency, S.randomization_test, S.estimate_run)

    def compute_saliency(model, x, target, method, **kwargs):
        result = real_compute(model, x, target, method, **kwargs)
        calls["maps"].append((method, result.images))
        return result

    def randomization_test(*args, **kwargs):
        calls["sanity"].append(args[4])
        return real_test(*args, **kwargs)

    def estimate_run(method, **kwargs):
        return real_estimate(method, **{**kwargs, "per_image_ms": PER_IMAGE_MS})

    monkeypatch.setattr(S, "compute_saliency", compute_saliency)
    monkeypatch.setattr(S, "randomization_test", randomization_test)
    monkeypatch.setattr(S, "estimate_run", estimate_run)
    return calls


@pytest.fixture
def flow_methods(monkeypatch) -> list[str]:
    """Every method lessons.flow.fill.run_method is asked to run, in order."""
    names: list[str] = []
    real = F.run_method

    def run_method(case, name, **kwargs):
        names.append(name)
        return real(case, name, **kwargs)

    monkeypatch.setattr(F, "run_method", run_method)
    return names


def test_the_saliency_link_opens_with_the_vanilla_map_and_two_buttons(saliency_calls):
    at = open_cold("saliency", SALIENCY_LINK)
    assert not at.exception, at.exception
    # only the cheap view ran: one vanilla pass, no Integrated Gradients, no sanity check
    assert saliency_calls == {"maps": [("vanilla", 1)], "sanity": []}
    # 128 steps is above the slider's cap (64): the link says so and uses the default, 32
    assert "`saliency.steps`: value not usable" in _texts(at.toast)
    assert at.slider(key="saliency.steps").value == 32
    ig = S.estimate_run("integrated_gradients", steps=32, per_image_ms=PER_IMAGE_MS)
    assert at.button(key="saliency.map.run").label == (
        f"Run the Integrated Gradients map of 32 images (about {ig.seconds:.0f} s)")
    # the sanity check of the chosen method (the controls say Integrated Gradients, not the
    # vanilla map shown meanwhile): 22 maps of 32 images each
    sanity = S.estimate_sanity("integrated_gradients", 21, steps=32, per_image_ms=PER_IMAGE_MS)
    assert at.button(key="saliency.sanity.run").label == (
        f"Run the sanity check: 22 maps, 704 images (about {sanity.seconds:.0f} s)")
    assert "22 saliency maps = 704 images through the model" in _texts(at.caption)
    assert "Meanwhile: the vanilla gradient" in _texts(at.caption)
    assert not at.get("plotly_chart")  # no sanity chart


def test_the_saliency_clicks_run_what_they_name(monkeypatch, saliency_calls):
    monkeypatch.setenv("TP_HEAVY_BUDGET_S", "0.1")  # a 4-image map is over this budget
    at = open_cold("saliency", {"saliency.method": "SmoothGrad", "saliency.n": "4",
                                "saliency.sanity": "true", "saliency.sanity_layers": "2"})
    assert not at.exception, at.exception
    assert saliency_calls["maps"] == [("vanilla", 1)] and saliency_calls["sanity"] == []
    assert "about 1 s" in at.button(key="saliency.map.run").label  # 0.64 s, said as >= 1 s

    at.button(key="saliency.map.run").click().run()
    assert not at.exception, at.exception
    assert saliency_calls["maps"][-1] == ("smoothgrad", 4)
    assert saliency_calls["sanity"] == []  # the sanity check has its own click
    label = at.button(key="saliency.sanity.run").label
    assert "3 maps, 12 images" in label

    at.button(key="saliency.sanity.run").click().run()
    assert not at.exception, at.exception
    assert saliency_calls["sanity"] == [2]
    assert at.get("plotly_chart")
    with pytest.raises(KeyError):
        at.button(key="saliency.sanity.run")


def test_the_sanity_check_of_a_gated_map_runs_the_chosen_method(monkeypatch, saliency_calls):
    import streamlit as st

    monkeypatch.setenv("TP_HEAVY_BUDGET_S", "0.1")  # a 4-image map is over this budget
    methods: list[str] = []
    real_test = S.randomization_test

    def randomization_test(*args, **kwargs):
        methods.append(args[3])
        return real_test(*args, **kwargs)

    monkeypatch.setattr(S, "randomization_test", randomization_test)
    st.cache_data.clear()  # no check from an earlier test
    at = open_cold("saliency", {"saliency.method": "SmoothGrad", "saliency.n": "4",
                                "saliency.sanity": "true", "saliency.sanity_layers": "1"})
    assert not at.exception, at.exception
    assert saliency_calls["maps"] == [("vanilla", 1)]  # the map waits for its click
    # the sanity check is SmoothGrad's (2 maps of 4 images), with its own click
    assert "2 maps, 8 images" in at.button(key="saliency.sanity.run").label
    at.button(key="saliency.sanity.run").click().run()
    assert not at.exception, at.exception
    assert methods == ["smoothgrad"]
    assert at.button(key="saliency.map.run")  # the map still waits for its own click


def _run_keys(at) -> list[str]:
    return [str(b.key) for b in at.button if str(b.key).endswith(".run")]


def test_a_map_gone_from_the_shared_cache_waits_for_a_click_again(monkeypatch, saliency_calls):
    import streamlit as st

    monkeypatch.setenv("TP_HEAVY_BUDGET_S", "0.1")  # a 4-image map is over this budget
    link = {"saliency.method": "SmoothGrad", "saliency.n": "4"}
    st.cache_data.clear()  # no map from an earlier test
    at = open_cold("saliency", link)
    at.button(key="saliency.map.run").click().run()
    assert not at.exception, at.exception
    assert saliency_calls["maps"][-1] == ("smoothgrad", 4)

    saliency_calls["maps"].clear()
    other = open_cold("saliency", link)  # held by the shared cache: no click, no computation
    assert not other.exception, other.exception
    assert "saliency.map.run" not in _run_keys(other)
    assert ("smoothgrad", 4) not in saliency_calls["maps"]

    st.cache_data.clear()  # the map leaves the cache (32 newer maps, or an hour later)
    late = open_cold("saliency", link)
    assert not late.exception, late.exception
    assert ("smoothgrad", 4) not in saliency_calls["maps"]  # not recomputed without a click
    assert late.button(key="saliency.map.run")


def test_a_sanity_check_gone_from_the_shared_cache_waits_for_a_click_again(
    monkeypatch, saliency_calls
):
    import streamlit as st

    monkeypatch.setenv("TP_HEAVY_BUDGET_S", "0.1")  # 3 maps of one image are over this budget
    link = {"saliency.sanity": "true", "saliency.sanity_layers": "2"}
    st.cache_data.clear()
    at = open_cold("saliency", link)
    at.button(key="saliency.sanity.run").click().run()
    assert not at.exception, at.exception
    assert saliency_calls["sanity"] == [2]

    other = open_cold("saliency", link)  # held by the shared cache: no click, no computation
    assert not other.exception, other.exception
    assert "saliency.sanity.run" not in _run_keys(other)
    assert saliency_calls["sanity"] == [2] and other.get("plotly_chart")

    st.cache_data.clear()  # the check leaves the cache
    late = open_cold("saliency", link)
    assert not late.exception, late.exception
    assert saliency_calls["sanity"] == [2]  # not recomputed without a click
    assert late.button(key="saliency.sanity.run")


def test_the_flow_link_opens_with_the_main_fill_and_a_button(flow_methods):
    from ui.settings import DEFAULT_SEED

    at = open_cold("flow", FLOW_LINK)
    assert not at.exception, at.exception
    assert flow_methods == [F.METHOD_CV2]  # the picture's fill, no comparison
    case = F.build_flow(F.FlowSpec(height=720, width=1280, noise=0.2, seed=DEFAULT_SEED % 2**31))
    holes = int(case.mask.sum())
    names = [F.METHOD_TORCH, F.NOTES_TORCH_METHOD, *F.OTHER_METHODS]
    seconds = sum(F.estimate_method_ms(n, case.flow.shape, 129, holes) for n in names) / 1e3
    assert seconds > 60
    assert at.button(key="flow.compare.run").label == (
        f"Run the comparison of 6 methods at 720x1280 (about {seconds:.0f} s)")
    assert f"about {seconds:.0f} s" in _texts(at.warning)
    assert not at.dataframe  # no comparison table until the click


def test_the_flow_click_runs_the_comparison(monkeypatch, flow_methods):
    monkeypatch.setenv("TP_HEAVY_BUDGET_S", "0.05")  # the 240x320 comparison is over this
    at = open_cold("flow", {"flow.notes": "false", "flow.details_tab": "Accuracy and speed"})
    assert not at.exception, at.exception
    assert flow_methods == [F.METHOD_CV2]
    assert re.fullmatch(r"Run the comparison of 5 methods at 240x320 \(about \d+ s\)",
                        at.button(key="flow.compare.run").label)
    at.button(key="flow.compare.run").click().run()
    assert not at.exception, at.exception
    assert flow_methods == [F.METHOD_CV2, F.METHOD_TORCH, *F.OTHER_METHODS]
    assert at.dataframe
    with pytest.raises(KeyError):
        at.button(key="flow.compare.run")
    # another max_window is another computation: it asks again
    flow_methods.clear()
    at.select_slider(key="flow.max_window").set_value(17).run()
    assert not at.exception, at.exception
    assert F.METHOD_TORCH not in flow_methods
    assert at.button(key="flow.compare.run")


@pytest.mark.parametrize("slug", ["saliency", "flow"])
def test_a_cold_open_at_the_defaults_needs_no_click(slug):
    at = open_cold(slug)
    assert not at.exception, at.exception
    assert not [b.key for b in at.button if str(b.key).endswith(".run")]
