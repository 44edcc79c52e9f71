"""AppTest for the Saliency page: default story, methods, target choice, sanity check, bad input."""

from __future__ import annotations

import io

import cv2
import numpy as np
import pytest
import torch
from torch import nn

from testing.apptest import switch_to


@pytest.fixture(autouse=True)
def _budget_beyond_the_machine(monkeypatch):
    """These tests are about the lesson; how busy the machine is must not decide whether a view
    waits for a click (the page's measured times set its estimates). The click itself is tested
    here with the budget set back to 2 s, and in tests/app/test_heavy_links_saliency_flow.py."""
    monkeypatch.setenv("TP_HEAVY_BUDGET_S", "600")


def png(image: np.ndarray) -> bytes:
    ok, buffer = cv2.imencode(".png", cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
    assert ok
    return buffer.tobytes()


def errors(at) -> str:
    return " ".join(e.value for e in at.error)


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def shown(widget) -> str:
    """The option a browser shows for a freshly drawn radio or selectbox: the value the server
    sends with it (``set_value``: a value kept by Streamlit, e.g. ``persist_state``), else the
    option at ``index=``."""
    proto = widget.proto
    return proto.raw_value if proto.set_value else proto.options[proto.default]


def upload_model(at, data: bytes, name: str, architecture: str = "resnet18"):
    at.radio(key="saliency.model_source").set_value("Upload your own").run()
    at.selectbox(key="saliency.architecture").select(architecture).run()
    at.file_uploader(key="saliency.model_upload").set_value(
        (name, data, "application/octet-stream")
    ).run()
    return at


def upload_module(at, monkeypatch, module: nn.Module, name: str):
    """Upload ``module``'s weights as a resnet18 state_dict, with resnet18's builder swapped for
    ``module``: uploads are weights only, so a model whose forward misbehaves on purpose comes
    in through the architecture, not the file."""
    from lessons.saliency import models as M

    module.register_buffer("anchor", torch.zeros(1))  # a state_dict needs one tensor
    real = M._build_architecture

    def build(builder: str, num_classes: int = 1000) -> nn.Module:
        return module if builder == "resnet18" else real(builder, num_classes)

    monkeypatch.setattr(M, "_build_architecture", build)
    buffer = io.BytesIO()
    torch.save(module.state_dict(), buffer)
    return upload_model(at, buffer.getvalue(), name)


def test_default_story(open_page):
    at = open_page("saliency")
    assert not at.exception, at.exception
    assert not at.error, errors(at)
    top5 = at.dataframe[0].value
    assert list(top5["class"])[0] == 285 and len(top5) == 5
    assert metric(at, "Images through the model") == "1"
    assert metric(at, "Forward").endswith("ms") and metric(at, "Backward (input gradient)")
    snippet = at.get("code")[-1].value
    assert "torch.autograd.grad" in snippet and "target = 285" in snippet
    assert any("probability of 0.7" in m.value for m in at.markdown)


def test_methods_and_target(open_page):
    at = open_page("saliency")
    at.radio(key="saliency.target_mode").set_value("Any class").run()
    at.selectbox(key="saliency.target_class").select(967).run()
    assert any("espresso" in c.value for c in at.caption)
    # Small n / steps before the method appears, so no slow default run happens on the way.
    at.session_state["saliency.n"] = 2
    at.session_state["saliency.steps"] = 4
    at.selectbox(key="saliency.method").select("smoothgrad").run()
    assert at.slider(key="saliency.n").value == 2
    assert not at.exception and not at.error, errors(at)
    assert metric(at, "Images through the model") == "2"
    at.selectbox(key="saliency.method").select("integrated_gradients").run()
    assert at.slider(key="saliency.steps").value == 4
    at.radio(key="saliency.baseline").set_value("blur").run()
    assert not at.exception and not at.error, errors(at)
    assert any("completeness" in m.value for m in at.markdown)
    assert "integrated_gradients(" in at.get("code")[-1].value


def test_sanity_check_tab(open_page):
    at = open_page("saliency")
    at.slider(key="saliency.sanity_layers").set_value(2).run()
    assert not [m for m in at.markdown if "rank correlation" in m.value]  # off by default
    at.toggle(key="saliency.sanity").set_value(True).run()
    assert not at.exception and not at.error, errors(at)
    reading = [m.value for m in at.markdown if "rank correlation" in m.value]
    assert reading and "_fc" in reading[0]
    assert at.get("plotly_chart")


def test_tiny_image_is_upscaled_with_notice(open_page):
    at = open_page("saliency")
    at.radio(key="saliency.image.source").set_value("Upload a file").run()
    tiny = np.random.default_rng(0).integers(0, 256, (16, 20, 3), dtype=np.uint8)
    at.file_uploader(key="saliency.image.upload").set_value(("tiny.png", png(tiny), "image/png"))
    at.run()
    assert not at.exception and not at.error, errors(at)
    assert any("upscaled" in w.value for w in at.warning)


def test_bad_model_files(open_page):
    at = open_page("saliency")
    upload_model(at, b"definitely not a model", "junk.pt")
    assert not at.exception
    assert "neither a torch.save file" in errors(at)

    buffer = io.BytesIO()
    torch.save(nn.Linear(3, 2).state_dict(), buffer)
    upload_model(at, buffer.getvalue(), "linear.pt")
    assert not at.exception
    assert "does not match the architecture" in errors(at)


def test_nan_gradient_is_reported(open_page, monkeypatch):
    class NaNGrad(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            # sqrt(0) = 0 forward, but d sqrt/dx = inf at 0, times 0 -> NaN backward
            return torch.sqrt(x * 0.0).mean(dim=(2, 3)).repeat(1, 334)[:, :1000]

    at = upload_module(open_page("saliency"), monkeypatch, NaNGrad(), "nan.pt")
    assert not at.exception
    assert "gradient contains NaN or Inf" in errors(at)


def test_unavailable_registry_model_shows_path(open_page, monkeypatch, tmp_path):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    at = open_page("saliency")
    at.selectbox(key="saliency.model").select("resnet18").run()
    assert not at.exception and not at.error, errors(at)
    assert any("unavailable" in w.value for w in at.warning)
    expected = str(tmp_path / "hub" / "checkpoints" / "resnet18-f37072fd.pth")
    assert any(expected in c.value for c in at.code)


def test_torchvision_model_from_local_cache(open_page, monkeypatch, tmp_path):
    import torchvision

    from lessons.saliency.models import expected_weights_path

    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    path = expected_weights_path("resnet18")
    path.parent.mkdir(parents=True)
    torch.save(torchvision.models.resnet18(weights=None).state_dict(), path)  # random weights
    at = open_page("saliency")
    at.selectbox(key="saliency.model").select("resnet18").run()
    assert not at.exception and not at.error, errors(at)
    assert not at.warning
    assert metric(at, "Images through the model") == "1"
    assert "load_model('resnet18'" in at.get("code")[-1].value


def test_timing_is_labelled_and_excludes_the_warm_up(open_page, monkeypatch):
    from lessons.saliency import maps as S

    calls: list[str] = []
    real_warm_up, real_compute = S.warm_up, S.compute_saliency

    def warm_up(*args, **kwargs):
        calls.append("warm_up")
        return real_warm_up(*args, **kwargs)

    def compute_saliency(*args, **kwargs):
        calls.append("compute")
        return real_compute(*args, **kwargs)

    monkeypatch.setattr(S, "warm_up", warm_up)
    monkeypatch.setattr(S, "compute_saliency", compute_saliency)
    at = open_page("saliency")
    assert not at.exception and not at.error, errors(at)
    assert calls == ["warm_up", "compute"]  # the first timed run comes after the warm-up
    note = next(c.value for c in at.caption if c.value.startswith("Timed once"))
    assert "1 image(s) in 1 forward + backward pass(es)" in note
    assert "Model loading is not included" in note
    assert "warm-up pass after loading (" in note and "python -m benchmarks.saliency" in note
    forward = next(m for m in at.metric if m.label == "Forward")
    assert "Excluded: model loading" in forward.help

    assert not any("measured on request" in c.value for c in at.caption)
    at.button(key="saliency.retime").click().run()
    assert not at.exception and not at.error, errors(at)
    assert any(c.value.startswith("Median of 5 back-to-back passes") for c in at.caption)
    assert calls == ["warm_up", "compute"]  # re-timing does not recompute the map

    at.session_state["saliency.n"] = 3
    at.selectbox(key="saliency.method").select("smoothgrad").run()
    assert not at.exception and not at.error, errors(at)
    assert calls == ["warm_up", "compute", "compute"]  # the cached model is not warmed again
    note = next(c.value for c in at.caption if c.value.startswith("Timed once"))
    assert "3 image(s) in 1 forward + backward pass(es)" in note and "per image" in note


def test_model_without_input_gradient_is_reported(open_page, monkeypatch):
    class Detached(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.zeros(x.shape[0], 1000) + x.detach().mean()

    at = upload_module(open_page("saliency"), monkeypatch, Detached(), "detached.pt")
    assert not at.exception
    assert "does not depend on the input" in errors(at)


def test_preprocessing_pictures_and_downloads_are_shown(open_page):
    at = open_page("saliency")
    assert not at.exception and not at.error, errors(at)
    assert any("(pixel - 127) / 128" in m.value for m in at.markdown)
    assert len(at.get("image")) >= 3  # original, map and overlay side by side
    assert len(at.get("download_button")) == 2  # map and overlay as PNG


def test_recipes_default_and_the_notes(open_page):
    from core.images import load_sample
    from lessons.saliency import maps as S
    from lessons.saliency.models import load_model
    from lessons.saliency.scaling import compare_scalings

    at = open_page("saliency")
    assert not at.exception and not at.error, errors(at)
    assert at.radio(key="saliency.recipe").value == "app"
    assert any(c.value.startswith("The default. It explains the class score") for c in at.caption)
    # the notes tab measures both scalings of the map the page computed (class score, sum)
    lite0 = load_model("efficientnet_lite0", device="cpu")
    x = lite0.preprocess(load_sample("chelsea.png").rgb)
    score_map = S.vanilla_saliency(lite0.model, x, 285, objective="logit", reduce="sum")
    expected = compare_scalings(score_map)
    assert expected.max_diff is not None and expected.max_diff > 0
    assert any(f"up to **{expected.max_diff} grey levels**" in m.value for m in at.markdown)
    assert any("Why the app's recipe is the default" in s.value for s in at.subheader)
    assert any("weight 0.2" in m.value for m in at.markdown)  # 1 - p for p = 0.78
    # the retain_grad callout, quoted from the notes
    assert any("retain_grad()" in t.value and "backward()" in t.value for t in at.text)
    assert any(t.value.startswith("The first half is right") for t in at.text)

    at.selectbox(key="saliency.method").select("grad_x_input").run()
    at.radio(key="saliency.recipe").set_value("notes").run()
    assert not at.exception and not at.error, errors(at)
    with pytest.raises(KeyError):
        at.selectbox(key="saliency.method")  # fixed by the notes' recipe, not drawn
    assert any("The notes' recipe (notes 000:2)" in c.value for c in at.caption)
    assert any("truncated to an integer by np.uint8" in m.value for m in at.markdown)
    snippet = at.get("code")[-1].value
    assert "loss.backward()" in snippet and "np.uint8(saliency_map[0]" in snippet
    assert any("A variation of the notes 000:2 example" in c.value for c in at.caption)
    loss_map = S.vanilla_saliency(lite0.model, x, 285, objective="loss", reduce="sum")
    notes_side = compare_scalings(loss_map)
    assert any(f"up to **{notes_side.max_diff} grey levels**" in m.value for m in at.markdown)

    at.radio(key="saliency.recipe").set_value("app").run()
    assert not at.exception and not at.error, errors(at)
    assert at.selectbox(key="saliency.method").value == "grad_x_input"  # kept while hidden


def test_notes_recipe_on_a_flat_map_warns_and_falls_back(open_page, monkeypatch):
    class Linear(nn.Module):
        # logits = w * mean(x): the input gradient is the same at every pixel (a flat map)
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            w = torch.linspace(-1.0, 1.0, 1000)
            return x.mean(dim=(1, 2, 3)).unsqueeze(1) * w

    at = upload_module(open_page("saliency"), monkeypatch, Linear(), "linear.pt")
    at.radio(key="saliency.recipe").set_value("notes").run()
    assert not at.exception and not at.error, errors(at)
    warning = " ".join(w.value for w in at.warning)
    assert "the notes' scaling is undefined for this map: P99 == P1" in warning
    assert "uses the app's scaling instead" in warning


def test_an_uploaded_model_is_hashed_once_not_on_every_rerun(open_page, monkeypatch):
    """An upload may be 200 MB: its digest (the model cache's key) is taken once per uploaded
    file (ui.pictures.upload_digest), not on every rerun of the page."""
    import hashlib

    from ui import pictures

    class Linear(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.mean(dim=(1, 2, 3)).unsqueeze(1) * torch.linspace(-1.0, 1.0, 1000)

    hashed: list[int] = []
    real = pictures.file_digest

    def file_digest(data: bytes) -> str:
        hashed.append(len(data))
        return real(data)

    monkeypatch.setattr(pictures, "file_digest", file_digest)
    module = Linear()
    at = upload_module(open_page("saliency"), monkeypatch, module, "linear.pt")
    assert not at.exception and not at.error, errors(at)
    data = at.file_uploader(key="saliency.model_upload").value.getvalue()
    at.slider(key="saliency.alpha").set_value(0.3).run()
    at.slider(key="saliency.alpha").set_value(0.4).run()
    assert not at.exception and not at.error, errors(at)
    assert hashed.count(len(data)) == 1
    assert hashlib.sha256(data).hexdigest() == real(data)  # the same key as before


def _sample_bytes(name: str) -> bytes:
    from pathlib import Path

    import skimage

    return (Path(skimage.__file__).parent / "data" / name).read_bytes()


def test_target_widgets_show_the_explained_class_after_an_upload(open_page):
    """'Any class' -> tiger, switch to Upload, upload a photo: the radio and the box still show
    the explained class. Restored through the Session State API *and* given defaults (index=),
    they would be drawn by the browser from their defaults after it had dropped them ('Predicted
    class' and the new top-1) while the map explained 292. What a freshly drawn widget shows must
    be what is explained."""
    at = open_page("saliency")
    at.radio(key="saliency.target_mode").set_value("Any class").run()
    at.selectbox(key="saliency.target_class").select(292).run()
    at.radio(key="saliency.image.source").set_value("Upload a file").run()
    at.file_uploader(key="saliency.image.upload").set_value(
        ("coffee.png", _sample_bytes("coffee.png"), "image/png")
    ).run()
    assert not at.exception and not at.error, errors(at)
    assert at.dataframe[0].value["class"].iloc[0] == 967  # the new photo's prediction: espresso
    mode = at.radio(key="saliency.target_mode")
    box = at.selectbox(key="saliency.target_class")
    # what the browser shows for a freshly drawn widget = what is explained
    assert shown(mode) == mode.value == "Any class"
    assert shown(box) == "292: tiger" and box.value == 292
    assert any(c.value == "Explaining class 292: **tiger**" for c in at.caption)
    assert "target = 292" in at.get("code")[-1].value
    assert any("Explaining **292: tiger**" in m.value for m in at.markdown)

    at.radio(key="saliency.target_mode").set_value("Predicted class").run()
    assert "target = 967" in at.get("code")[-1].value


def test_identical_maps_are_computed_once_for_all_sessions(open_page, monkeypatch):
    from lessons.saliency import maps as S

    calls: list[tuple[str, int]] = []
    real_compute = S.compute_saliency

    def compute_saliency(model, x, target, method, **kwargs):
        calls.append((method, kwargs["n"]))
        return real_compute(model, x, target, method, **kwargs)

    real_estimate = S.estimate_run

    def estimate_run(method, **kwargs):  # a slow CPU: 2 s per image, so n = 12 is "heavy"
        return real_estimate(method, **{**kwargs, "per_image_ms": 2000.0})

    monkeypatch.setattr(S, "compute_saliency", compute_saliency)
    monkeypatch.setattr(S, "estimate_run", estimate_run)
    monkeypatch.setenv("TP_HEAVY_BUDGET_S", "2")
    first = open_page("saliency")
    assert not first.exception and not first.error, errors(first)
    assert calls == [("vanilla", 25)]
    assert any("Computed just now" in m.value for m in first.markdown)

    second = open_page("saliency")  # another student opens the same default view
    assert not second.exception and not second.error, errors(second)
    assert calls == [("vanilla", 25)]  # not recomputed
    assert any("From the shared cache: made" in m.value for m in second.markdown)
    assert metric(second, "Images through the model") == "1"

    # A heavy SmoothGrad waits for a click and says its expected time first (the vanilla
    # gradient, one pass, is shown meanwhile) ...
    first.session_state["saliency.n"] = 12
    first.selectbox(key="saliency.method").select("smoothgrad").run()
    assert not first.exception and not first.error, errors(first)
    assert calls == [("vanilla", 25), ("vanilla", 12)]
    announced = " ".join(w.value for w in first.warning)
    assert "The SmoothGrad map of 12 images takes about 24 s on this server" in announced
    label = first.button(key="saliency.map.run").label
    assert label == "Run the SmoothGrad map of 12 images (about 24 s)"
    first.button(key="saliency.map.run").click().run()
    assert not first.exception and not first.error, errors(first)
    assert calls == [("vanilla", 25), ("vanilla", 12), ("smoothgrad", 12)]
    assert metric(first, "Images through the model") == "12"

    # ... and the next session asking for the same map gets it at once, without a click
    second.session_state["saliency.n"] = 12
    second.selectbox(key="saliency.method").select("smoothgrad").run()
    assert not second.exception and not second.error, errors(second)
    assert calls == [("vanilla", 25), ("vanilla", 12), ("smoothgrad", 12)]
    assert any("From the shared cache: made" in m.value for m in second.markdown)
    assert metric(second, "Images through the model") == "12"


# ---------------------------------------------------------------------------------------------
# Lesson links: every control is bound to the URL (?saliency.method=SmoothGrad ...); a link's
# view above the time budget waits for a click like any other (a link is anyone's input).
# ---------------------------------------------------------------------------------------------


def open_link(params: dict[str, str]):
    """Open the page cold with ``params`` in the URL, as a student clicking a link does."""
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import APP

    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update(params)
    switch_to(at, "saliency")
    at.run(timeout=120)
    assert not at.exception, at.exception
    return at


def test_a_cold_link_to_a_heavy_map_waits_for_the_click_then_computes_it(monkeypatch):
    from core.images import load_sample
    from lessons.saliency import maps as S
    from lessons.saliency.models import load_model
    from lessons.saliency.scaling import NOTES_PERCENTILE, compare_scalings, mass_above_percentile
    from ui.settings import DEFAULT_SEED

    real_estimate = S.estimate_run

    def estimate_run(method, **kwargs):  # a slow CPU: 2 s per image, so n = 9 is "heavy"
        return real_estimate(method, **{**kwargs, "per_image_ms": 2000.0})

    monkeypatch.setattr(S, "estimate_run", estimate_run)
    monkeypatch.setenv("TP_HEAVY_BUDGET_S", "2")
    at = open_link(
        {
            "saliency.method": "SmoothGrad",
            "saliency.n": "9",
            "saliency.sigma": "0.3",
            "saliency.target_mode": "Any class",
            "saliency.target_class": "292: tiger",
            "saliency.percentile": "95",
            "saliency.colormap": "viridis",
        }
    )
    assert not at.error, errors(at)
    assert not at.toast  # the link was used whole
    assert metric(at, "Images through the model") == "1"  # the vanilla gradient meanwhile
    assert at.button(key="saliency.map.run").label == (
        "Run the SmoothGrad map of 9 images (about 18 s)")
    at.button(key="saliency.map.run").click().run()
    assert not at.exception and not at.error, errors(at)
    assert at.slider(key="saliency.sigma").value == pytest.approx(0.3)
    assert at.selectbox(key="saliency.colormap").value == "viridis"

    # The numbers on the page are those of this map, computed directly with core.
    lite0 = load_model("efficientnet_lite0", device="cpu")
    x = lite0.preprocess(load_sample("chelsea.png").rgb)
    result = S.compute_saliency(
        lite0.model, x, 292, "smoothgrad", n=9, sigma=0.3, objective="logit", reduce="sum",
        black_level=lite0.black_level(), seed=DEFAULT_SEED,
    )  # fmt: skip
    assert metric(at, "Images through the model") == "9"
    text = "\n".join(m.value for m in at.markdown)
    prob = float(torch.softmax(result.logits, 0)[292])
    assert f"Explaining **292: tiger** (p = {prob:.3f})" in text
    share = mass_above_percentile(result.saliency, 95)
    assert f"95th percentile are drawn at full colour; they hold {share:.1%}" in text
    scalings = compare_scalings(result.saliency, NOTES_PERCENTILE)
    assert f"P1 = {scalings.p_low:.4g} and P99 = {scalings.p_high:.4g}" in text
    assert "n=9, sigma=0.3" in at.get("code")[-1].value


def test_controls_keep_their_values_across_a_page_switch(open_page):
    at = open_page("saliency")
    at.radio(key="saliency.target_mode").set_value("Any class").run()
    at.selectbox(key="saliency.target_class").select(292).run()
    at.session_state["saliency.n"] = 2  # small before SmoothGrad appears: no slow run
    at.selectbox(key="saliency.method").select("smoothgrad").run()
    at.slider(key="saliency.sigma").set_value(0.3).run()
    at.selectbox(key="saliency.colormap").select("viridis").run()
    at.slider(key="saliency.sanity_layers").set_value(2).run()
    assert not at.exception and not at.error, errors(at)

    def switch_away_and_back():
        switch_to(at, "home").run()
        switch_to(at, "saliency").run()
        assert not at.exception and not at.error, errors(at)

    switch_away_and_back()
    assert at.radio(key="saliency.target_mode").value == "Any class"
    assert at.selectbox(key="saliency.target_class").value == 292
    assert at.selectbox(key="saliency.method").value == "smoothgrad"
    assert at.slider(key="saliency.n").value == 2
    assert at.slider(key="saliency.sigma").value == pytest.approx(0.3)
    assert at.selectbox(key="saliency.colormap").value == "viridis"
    assert at.slider(key="saliency.sanity_layers").value == 2
    assert metric(at, "Images through the model") == "2"

    # The classifier section; while it waits for an upload nothing below it is drawn.
    at.radio(key="saliency.model_source").set_value("Upload your own").run()
    at.selectbox(key="saliency.architecture").select("resnet50").run()
    switch_away_and_back()
    assert at.radio(key="saliency.model_source").value == "Upload your own"
    assert at.selectbox(key="saliency.architecture").value == "resnet50"
    at.radio(key="saliency.model_source").set_value("From the registry").run()
    assert not at.exception and not at.error, errors(at)
    assert at.selectbox(key="saliency.method").value == "smoothgrad"  # kept while not drawn
    assert at.selectbox(key="saliency.target_class").value == 292


def test_a_lesson_link_opens_the_sanity_check_run_and_shares_it(monkeypatch):
    """?saliency.sanity=true runs a randomisation test within the time budget on arrival,
    without a click; a class opening the same link computes it once, and reruns while it is on
    do not recompute it."""
    from lessons.saliency import maps as S

    calls: list[int] = []
    real_test = S.randomization_test

    def randomization_test(*args, **kwargs):
        calls.append(args[4])
        return real_test(*args, **kwargs)

    monkeypatch.setattr(S, "randomization_test", randomization_test)
    real_estimate = S.estimate_run

    def estimate_run(method, **kwargs):  # 160 ms an image: 7 maps of one image is 1.1 s
        return real_estimate(method, **{**kwargs, "per_image_ms": 160.0})

    monkeypatch.setattr(S, "estimate_run", estimate_run)
    monkeypatch.setenv("TP_HEAVY_BUDGET_S", "2")  # within the real budget: no click needed
    link = {"saliency.method": "Gradient x input", "saliency.sanity": "true"}
    at = open_link(link)
    assert not at.error and not at.toast, errors(at)
    assert at.toggle(key="saliency.sanity").value is True
    with pytest.raises(KeyError):
        at.button(key="saliency.sanity.run")  # no click needed within the budget
    reading = " ".join(m.value for m in at.markdown if "rank correlation" in m.value)
    assert (
        "Randomizing only the top layer (_fc) gives a rank correlation of 0.47; after 6 "
        "layer(s) it is 0.37." in reading
    )
    assert at.get("plotly_chart")
    assert calls == [6]

    at.slider(key="saliency.alpha").set_value(0.8).run()  # a rerun that keeps the map
    assert "rank correlation of 0.47" in " ".join(m.value for m in at.markdown)
    second = open_link(link)  # another student in the class
    assert "rank correlation of 0.47" in " ".join(m.value for m in second.markdown)
    assert calls == [6]

    at.slider(key="saliency.sanity_layers").set_value(2).run()  # on: recomputed for 2 layers
    assert not at.exception and not at.error, errors(at)
    assert calls == [6, 2]
    at.toggle(key="saliency.sanity").set_value(False).run()
    assert not [m for m in at.markdown if "rank correlation" in m.value]


def test_a_link_with_unusable_values_opens_at_the_defaults_with_one_notice():
    at = open_link(
        {
            "saliency.method": "Nonsense",
            "saliency.alpha": "7",
            "saliency.target_mode": "Any class",
            "saliency.target_class": "5000: not a class",
            "saliency.model": "x" * 10_000,
        }
    )
    assert not at.error, errors(at)
    assert at.selectbox(key="saliency.method").value == "vanilla"
    assert at.slider(key="saliency.alpha").value == 0.5
    assert at.selectbox(key="saliency.model").value == "efficientnet_lite0"
    assert at.selectbox(key="saliency.target_class").value == 285  # the predicted class
    assert metric(at, "Images through the model") == "1"
    [toast] = at.toast
    for key in ("saliency.method", "saliency.alpha", "saliency.target_class", "saliency.model"):
        assert f"`{key}`" in toast.value
    assert "saliency.target_mode" not in toast.value


def test_the_page_in_chinese_keeps_the_values_and_translates_the_reading():
    """A Chinese visitor opening the English lesson link: the controls keep their (English)
    values, their labels and the sanity check's reading are Chinese, the numbers are the same."""
    at = open_link({"lang": "zh", "saliency.method": "Gradient x input", "saliency.sanity": "true"})
    assert not at.error and not at.toast, errors(at)
    assert at.title[0].value == "显著图：哪些像素左右了模型的决定？"
    method = at.selectbox(key="saliency.method")
    assert method.value == "grad_x_input" and "梯度 × 输入" in method.options
    assert at.radio(key="saliency.target_mode").value == "Predicted class"
    assert metric(at, "送入模型的图像数") == "1"
    reading = " ".join(m.value for m in at.markdown if "秩相关" in m.value)
    assert "只随机化顶层（_fc）时，秩相关为 0.47；随机化 6 层之后为 0.37。" in reading
    assert list(at.dataframe[0].value.columns) == ["类别", "名称", "概率"]
