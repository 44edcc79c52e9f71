"""lessons.saliency.maps: gradients vs direct autograd, localization, sanity check,
scaling, overlay."""

from __future__ import annotations

import copy

import cv2
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from torch import nn

from core.images import load_sample
from core.text import T
from lessons.saliency import maps as S
from lessons.saliency.models import LoadedModel, load_model


@pytest.fixture(scope="module")
def lite0() -> LoadedModel:
    return load_model("efficientnet_lite0", device="cpu")


@pytest.fixture(scope="module")
def chelsea() -> np.ndarray:
    return load_sample("chelsea.png").rgb


@pytest.fixture(scope="module")
def x_cat(lite0: LoadedModel, chelsea: np.ndarray) -> torch.Tensor:
    return lite0.preprocess(chelsea)


class SmallNet(nn.Module):
    """A fast, smooth classifier with BatchNorm (to check train/eval handling)."""

    def __init__(self, classes: int = 7) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.bn = nn.BatchNorm2d(6)
        self.fc = nn.Linear(6 * 4 * 4, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.tanh(self.bn(self.conv(x)))
        return self.fc(F.adaptive_avg_pool2d(y, 4).flatten(1))


def direct_gradient(model: nn.Module, x: torch.Tensor, target: int, objective: str):
    xx = x.detach().clone().requires_grad_(True)
    logits = model(xx)
    if objective == "logit":
        score = logits[0, target]
    else:
        score = F.cross_entropy(logits, torch.tensor([target]))
    score.backward()
    return xx.grad


class TestVanilla:
    def test_smoke(self, lite0: LoadedModel, x_cat: torch.Tensor) -> None:
        result = S.compute_saliency(lite0.model, x_cat, 285)
        assert result.saliency.shape == (224, 224) and result.saliency.dtype == torch.float32
        assert (result.saliency >= 0).all() and result.saliency.max() > 0
        assert result.images == 1 and result.forward_ms > 0 and result.backward_ms > 0
        assert int(result.logits.argmax()) == 285

    @pytest.mark.parametrize("objective", ["logit", "loss"])
    @pytest.mark.parametrize("reduce", ["sum", "max"])
    def test_matches_reference(
        self, lite0: LoadedModel, x_cat: torch.Tensor, objective: str, reduce: str
    ) -> None:
        grad = direct_gradient(lite0.model, x_cat, 285, objective)[0].abs()
        expected = grad.sum(0) if reduce == "sum" else grad.amax(0)
        ours = S.vanilla_saliency(lite0.model, x_cat, 285, objective=objective, reduce=reduce)
        torch.testing.assert_close(ours, expected, atol=1e-6, rtol=0)

    def test_grad_x_input_matches_reference(self, lite0: LoadedModel, x_cat: torch.Tensor) -> None:
        grad = direct_gradient(lite0.model, x_cat, 281, "logit")
        expected = (grad * x_cat)[0].abs().amax(0)
        ours = S.grad_x_input(lite0.model, x_cat, 281, reduce="max")
        torch.testing.assert_close(ours, expected, atol=1e-6, rtol=0)

    def test_shared_model_and_input_untouched(self, lite0: LoadedModel, x_cat: torch.Tensor):
        before = {k: v.clone() for k, v in lite0.model.state_dict().items()}
        x_before = x_cat.clone()
        S.vanilla_saliency(lite0.model, x_cat, 285, objective="loss")
        after = lite0.model.state_dict()
        assert all(torch.equal(before[k], after[k]) for k in before)
        assert all(p.grad is None for p in lite0.model.parameters())
        assert torch.equal(x_cat, x_before) and not x_cat.requires_grad

    def test_concurrent_calls_on_shared_model(self, lite0: LoadedModel, x_cat: torch.Tensor):
        # Two browser sessions share one cached model: results must equal sequential ones.
        from concurrent.futures import ThreadPoolExecutor

        jobs = [(285, "logit"), (281, "loss"), (967, "logit"), (285, "loss")]
        sequential = [S.vanilla_saliency(lite0.model, x_cat, t, objective=o) for t, o in jobs]
        with ThreadPoolExecutor(max_workers=2) as pool:
            parallel = list(
                pool.map(
                    lambda job: S.vanilla_saliency(lite0.model, x_cat, job[0], objective=job[1]),
                    jobs,
                )
            )
        for a, b in zip(sequential, parallel, strict=True):
            torch.testing.assert_close(a, b, atol=1e-6, rtol=0)

    def test_sanity_check_beside_another_session(self, lite0: LoadedModel, x_cat: torch.Tensor):
        # One session randomizes (a copy of) the shared model while another computes maps on it.
        from concurrent.futures import ThreadPoolExecutor

        expected = S.vanilla_saliency(lite0.model, x_cat, 281)
        sequential = S.randomization_test(lite0.model, x_cat, 285, "vanilla", 2)
        with ThreadPoolExecutor(max_workers=2) as pool:
            sanity = pool.submit(S.randomization_test, lite0.model, x_cat, 285, "vanilla", 2)
            maps = [pool.submit(S.vanilla_saliency, lite0.model, x_cat, 281) for _ in range(3)]
            for future in maps:
                torch.testing.assert_close(future.result(), expected, atol=1e-6, rtol=0)
            assert sanity.result().correlations == pytest.approx(sequential.correlations)

    def test_train_mode_is_used_as_eval_and_restored(self) -> None:
        model = SmallNet().train()
        x = torch.randn(1, 3, 12, 12)
        stats = model.bn.running_mean.clone()
        ours = S.vanilla_saliency(model, x, 2)
        assert model.training and model.bn.training  # restored
        assert torch.equal(model.bn.running_mean, stats)  # eval: no running-stat update
        reference = direct_gradient(copy.deepcopy(model).eval(), x, 2, "logit")[0].abs().sum(0)
        torch.testing.assert_close(ours, reference, atol=1e-6, rtol=0)

    def test_exception(self, lite0: LoadedModel, x_cat: torch.Tensor) -> None:
        with pytest.raises(ValueError, match="class index 1000 is out of range.*0..999"):
            S.vanilla_saliency(lite0.model, x_cat, 1000)
        with pytest.raises(ValueError, match="class index -1 is out of range"):
            S.vanilla_saliency(lite0.model, x_cat, -1)
        with pytest.raises(ValueError, match="objective must be one of"):
            S.vanilla_saliency(lite0.model, x_cat, 1, objective="prob")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="reduce must be one of"):
            S.vanilla_saliency(lite0.model, x_cat, 1, reduce="mean")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"batch of one image.*\(3, 224, 224\)"):
            S.vanilla_saliency(lite0.model, x_cat[0], 1)
        with pytest.raises(ValueError, match="integer class index"):
            S.vanilla_saliency(lite0.model, x_cat, 1.5)  # type: ignore[arg-type]

    def test_exception_nan_gradient(self) -> None:
        class SqrtNet(nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return torch.sqrt(x.abs()).flatten(1)[:, :3]  # d/dx sqrt(|x|) at 0 is inf

        with pytest.raises(ValueError, match="gradient contains NaN or Inf"):
            S.vanilla_saliency(SqrtNet(), torch.zeros(1, 3, 4, 4), 0)


class TestTimingAndWarmUp:
    def test_batches_are_counted(self) -> None:
        model, x = SmallNet().eval(), torch.randn(1, 3, 10, 10)
        assert S.compute_saliency(model, x, 1).batches == 1
        result = S.compute_saliency(model, x, 1, "smoothgrad", n=5, batch_size=2)
        assert (result.images, result.batches) == (5, 3)
        result = S.compute_saliency(model, x, 1, "integrated_gradients", steps=8, batch_size=8)
        assert (result.images, result.batches) == (8, 1)

    def test_time_gradient_pass(self) -> None:
        model, x = SmallNet().eval(), torch.randn(1, 3, 10, 10)
        timing = S.time_gradient_pass(model, x, 1, repeats=3)
        assert timing.repeats == 3 and timing.forward_ms > 0 and timing.backward_ms > 0
        assert all(p.grad is None for p in model.parameters())
        with pytest.raises(ValueError, match="repeats must be an integer >= 1, got 0"):
            S.time_gradient_pass(model, x, 1, repeats=0)
        with pytest.raises(ValueError, match="class index 7 is out of range"):
            S.time_gradient_pass(model, x, 7)
        with pytest.raises(ValueError, match="objective must be one of"):
            S.time_gradient_pass(model, x, 1, objective="prob")  # type: ignore[arg-type]

    def test_warm_up_runs_a_gradient_pass_and_changes_nothing(self) -> None:
        model = SmallNet().train()
        for p in model.parameters():
            p.requires_grad_(False)
        stats = model.bn.running_mean.clone()
        calls: list[bool] = []
        model.register_forward_hook(lambda _m, inputs, _o: calls.append(inputs[0].requires_grad))
        x = torch.randn(1, 3, 12, 12)
        ms = S.warm_up(model, x)
        assert ms > 0 and calls == [True]  # one forward, on an input that needs a gradient
        assert model.training and torch.equal(model.bn.running_mean, stats)
        assert all(p.grad is None for p in model.parameters()) and not x.requires_grad

    def test_warm_up_tolerates_models_without_input_gradient(self) -> None:
        class SqrtNet(nn.Module):  # NaN gradient at 0: an error for the map, fine for a warm-up
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return torch.sqrt(x.abs()).flatten(1)[:, :3]

        class Detached(nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return torch.zeros(x.shape[0], 3) + x.detach().mean()

        assert S.warm_up(SqrtNet(), torch.zeros(1, 3, 4, 4)) > 0
        assert S.warm_up(Detached(), torch.zeros(1, 3, 4, 4)) > 0
        with pytest.raises(ValueError, match="batch of one image"):
            S.warm_up(SqrtNet(), torch.zeros(3, 4, 4))

    def test_exception_model_without_input_gradient(self) -> None:
        class Detached(nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return torch.zeros(x.shape[0], 3) + x.detach().mean()

        with pytest.raises(ValueError, match="does not depend on the input"):
            S.vanilla_saliency(Detached(), torch.randn(1, 3, 4, 4), 0)

    def test_exception_model_that_fails_on_a_batch(self) -> None:
        class BatchOfOne(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.fc = nn.Linear(48, 3)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.fc(x.view(1, 48))

        model, x = BatchOfOne(), torch.randn(1, 3, 4, 4)
        assert S.vanilla_saliency(model, x, 0).shape == (4, 4)
        with pytest.raises(ValueError, match=r"failed on an input batch of shape \(2, 3, 4, 4\)"):
            S.smoothgrad(model, x, 0, n=2, batch_size=2)


def compose(obj: np.ndarray, quadrant: int, canvas: str) -> np.ndarray:
    rng = np.random.default_rng(quadrant)
    if canvas == "plain":
        picture = np.full((224, 224, 3), 128, np.uint8)
    else:
        picture = rng.integers(0, 256, (224, 224, 3), dtype=np.uint8)
    row, col = divmod(quadrant, 2)
    picture[row * 112 : row * 112 + 112, col * 112 : col * 112 + 112] = obj
    return picture


@pytest.mark.parametrize("canvas", ["plain", "noisy"])
@pytest.mark.parametrize("quadrant", [0, 1, 2, 3])
def test_map_localizes_the_object(
    lite0: LoadedModel, chelsea: np.ndarray, canvas: str, quadrant: int
) -> None:
    cat = cv2.resize(chelsea, (112, 112), interpolation=cv2.INTER_AREA)
    x = lite0.preprocess(compose(cat, quadrant, canvas))
    saliency = S.vanilla_saliency(lite0.model, x, 285, objective="logit", reduce="max")
    mass = S.quadrant_mass(saliency)
    assert int(mass.argmax()) == quadrant, mass
    assert mass.ravel()[quadrant] > 0.4


class TestSmoothGradAndIG:
    def test_smoothgrad_batched_equals_looped(self) -> None:
        model, x = SmallNet().eval(), torch.randn(1, 3, 10, 10)
        n, sigma = 5, 0.2
        batched = S.smoothgrad(model, x, 3, n=n, sigma=sigma, batch_size=3, seed=7)
        noise = torch.randn((n, 3, 10, 10), generator=torch.Generator().manual_seed(7))
        std = sigma * float(x.max() - x.min())
        grads = [direct_gradient(model, x + std * noise[i : i + 1], 3, "logit") for i in range(n)]
        expected = torch.cat(grads).abs().mean(0).sum(0)
        torch.testing.assert_close(batched, expected, atol=1e-6, rtol=1e-5)

    def test_smoothgrad_sigma_zero_is_vanilla(self) -> None:
        model, x = SmallNet().eval(), torch.randn(1, 3, 10, 10)
        torch.testing.assert_close(
            S.smoothgrad(model, x, 1, n=3, sigma=0.0), S.vanilla_saliency(model, x, 1)
        )

    def test_smoothgrad_smoke_real_model(self, lite0: LoadedModel, x_cat: torch.Tensor) -> None:
        seen: list[float] = []
        result = S.compute_saliency(
            lite0.model, x_cat, 285, "smoothgrad", n=3, batch_size=2,
            progress=lambda f, _t: seen.append(f),
        )  # fmt: skip
        assert result.images == 3 and result.saliency.shape == (224, 224)
        assert seen == pytest.approx([2 / 3, 1.0])

    @pytest.mark.parametrize("baseline", ["black", "blur"])
    def test_ig_completeness(self, baseline: str) -> None:
        model, x = SmallNet().eval(), torch.randn(1, 3, 10, 10)
        result = S.compute_saliency(
            model, x, 4, "integrated_gradients", steps=64, baseline=baseline,
            black_level=-2.0, batch_size=16,
        )  # fmt: skip
        total, delta = result.completeness
        assert total == pytest.approx(delta, rel=1e-2, abs=1e-3)
        assert result.images == 64

    def test_ig_batch_size_does_not_matter(self) -> None:
        model, x = SmallNet().eval(), torch.randn(1, 3, 10, 10)
        a = S.integrated_gradients(model, x, 2, steps=8, batch_size=8, black_level=-1.0)
        b = S.integrated_gradients(model, x, 2, steps=8, batch_size=3, black_level=-1.0)
        torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-5)

    def test_ig_smoke_real_model(self, lite0: LoadedModel, x_cat: torch.Tensor) -> None:
        saliency = S.integrated_gradients(
            lite0.model, x_cat, 285, steps=2, black_level=lite0.black_level()
        )
        assert saliency.shape == (224, 224) and saliency.max() > 0

    def test_exception(self) -> None:
        model, x = SmallNet().eval(), torch.randn(1, 3, 10, 10)
        with pytest.raises(ValueError, match="n >= 1"):
            S.smoothgrad(model, x, 0, n=0)
        with pytest.raises(ValueError, match="sigma must be >= 0"):
            S.smoothgrad(model, x, 0, sigma=-1.0)
        with pytest.raises(ValueError, match="steps >= 1"):
            S.integrated_gradients(model, x, 0, steps=0)
        with pytest.raises(ValueError, match="baseline must be one of"):
            S.integrated_gradients(model, x, 0, baseline="white")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="class index 7 is out of range"):
            S.smoothgrad(model, x, 7, n=2)


class TestScaleAndOverlay:
    def test_all_zero_map_gives_all_zero_image(self) -> None:
        with np.errstate(all="raise"):
            out = S.scale_percentile(torch.zeros(5, 7))
        assert out.dtype == np.uint8 and out.shape == (5, 7) and not out.any()

    def test_matches_reference(self) -> None:
        s = np.random.default_rng(0).random((20, 30)) ** 3
        expected = np.round(np.clip(s / (np.percentile(s, 99) + 1e-12), 0, 1) * 255)
        np.testing.assert_array_equal(S.scale_percentile(s, 99), expected.astype(np.uint8))

    @settings(max_examples=40, deadline=None)
    @given(
        s=arrays(
            np.float32,
            st.tuples(st.integers(1, 16), st.integers(1, 16)),
            elements=st.floats(0, 1e6, width=32),
        ),
        percentile=st.floats(1, 100),
    )
    def test_property_never_divides_by_zero(self, s: np.ndarray, percentile: float) -> None:
        with np.errstate(all="raise"):
            out = S.scale_percentile(s, percentile)
        assert out.shape == s.shape and out.dtype == np.uint8
        order = np.argsort(s, axis=None, kind="stable")
        assert (np.diff(out.ravel()[order].astype(int)) >= 0).all()  # monotone
        if s.max() > 0:
            # s / (p + 1e-12) reaches 255 once p is far above the 1e-12 guard (p >= 1e-9: 254.7)
            assert out.max() == 255 or np.percentile(s, percentile) < 1e-9

    def test_exception(self) -> None:
        with pytest.raises(ValueError, match="2-D map"):
            S.scale_percentile(np.zeros((2, 2, 2)))
        with pytest.raises(ValueError, match="percentile must be in"):
            S.scale_percentile(np.zeros((2, 2)), percentile=0)
        with pytest.raises(ValueError, match="NaN"):
            S.scale_percentile(np.full((2, 2), np.nan))
        with pytest.raises(ValueError, match="colormap must be one of"):
            S.overlay(np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4), np.uint8), 0.5, "rainbowz")
        with pytest.raises(ValueError, match="alpha must be in"):
            S.overlay(np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4), np.uint8), 1.5)

    def test_overlay_matches_cv2(self) -> None:
        rng = np.random.default_rng(1)
        image = rng.integers(0, 256, (8, 10, 3), dtype=np.uint8)
        sal = rng.integers(0, 256, (8, 10), dtype=np.uint8)
        heat = cv2.cvtColor(cv2.applyColorMap(sal, cv2.COLORMAP_JET), cv2.COLOR_BGR2RGB)
        expected = cv2.addWeighted(image, 0.7, heat, 0.3, 0.0)
        np.testing.assert_array_equal(S.overlay(image, sal, 0.3, "jet"), expected)
        np.testing.assert_array_equal(S.overlay(image, sal, 0.0), image)
        # a smaller map is resized to the image
        assert S.overlay(image, sal[:4, :5], 0.5).shape == image.shape

    def test_png_round_trip(self) -> None:
        picture = np.random.default_rng(2).integers(0, 256, (6, 5, 3), dtype=np.uint8)
        decoded = cv2.cvtColor(
            cv2.imdecode(np.frombuffer(S.png_bytes(picture), np.uint8), cv2.IMREAD_COLOR),
            cv2.COLOR_BGR2RGB,
        )
        np.testing.assert_array_equal(decoded, picture)


class TestRandomization:
    def test_spearman_matches_scipy(self) -> None:
        scipy_stats = pytest.importorskip("scipy.stats")
        rng = np.random.default_rng(3)
        a = rng.integers(0, 5, 200).astype(float)  # many ties
        b = a + rng.normal(0, 2, 200)
        assert S.spearman(a, b) == pytest.approx(scipy_stats.spearmanr(a, b).statistic, abs=1e-12)
        np.testing.assert_allclose(S.rankdata(a), scipy_stats.rankdata(a))
        assert S.spearman(a, a) == pytest.approx(1.0)
        assert np.isnan(S.spearman(np.zeros(5), np.arange(5)))

    @settings(max_examples=30, deadline=None)
    @given(a=arrays(np.float64, st.integers(2, 40), elements=st.floats(-10, 10)))
    def test_property_spearman_of_monotone_map_is_one(self, a: np.ndarray) -> None:
        if np.unique(a).size < 2:
            return
        assert S.spearman(a, 2 * a) == pytest.approx(1.0)  # scaling by 2 is exact
        assert S.spearman(a, -a) == pytest.approx(-1.0)

    def test_layers_top_down(self, lite0: LoadedModel) -> None:
        layers = S.randomizable_layers(lite0.model)
        assert layers[:4] == ["_fc", "_bn1", "_conv_head", "_blocks.15"]
        assert layers[-1] == "_conv_stem" and len(layers) == 21

    def test_randomization_lowers_correlation(
        self, lite0: LoadedModel, x_cat: torch.Tensor
    ) -> None:
        before = {k: v.clone() for k, v in lite0.model.state_dict().items()}
        steps: list[float] = []
        result = S.randomization_test(
            lite0.model, x_cat, 285, "vanilla", 3, progress=lambda f, _t: steps.append(f)
        )
        assert result.layers == ("_fc", "_bn1", "_conv_head")
        assert len(result.correlations) == 3 and len(result.maps) == 3
        assert max(result.correlations) < 0.8, result.correlations
        assert result.correlations[-1] < 0.6
        assert steps[-1] == pytest.approx(1.0)
        after = lite0.model.state_dict()
        assert all(torch.equal(before[k], after[k]) for k in before)  # the original is untouched
        reading = S.read_randomization(result)
        assert "passes" in reading
        # a template the page translates, with the numbers as its values
        assert isinstance(reading, T) and "{first}" in reading.template
        assert reading.args["layer"] == "_fc" and reading.args["k"] == 3
        # a control: the unrandomized model reproduces its own map exactly
        again = S.vanilla_saliency(lite0.model, x_cat, 285)
        assert S.spearman(again, S.vanilla_saliency(lite0.model, x_cat, 285)) == 1.0

    def test_exception(self, lite0: LoadedModel, x_cat: torch.Tensor) -> None:
        with pytest.raises(ValueError, match="unknown layer name.*'_head'"):
            S.randomization_test(lite0.model, x_cat, 285, "vanilla", ["_head"])
        with pytest.raises(ValueError, match=r"must be in 1\.\.21, got 0"):
            S.randomization_test(lite0.model, x_cat, 285, "vanilla", 0)
        with pytest.raises(ValueError, match="method must be one of"):
            S.randomization_test(lite0.model, x_cat, 285, "gradcam", 1)


class TestSnippet:
    @pytest.mark.parametrize(
        ("objective", "reduce"), [("logit", "max"), ("loss", "sum")]
    )  # fmt: skip
    def test_vanilla_snippet_runs_and_matches(
        self, lite0: LoadedModel, x_cat: torch.Tensor, objective: str, reduce: str
    ) -> None:
        code = S.snippet_for("vanilla", target=285, objective=objective, reduce=reduce)
        namespace: dict = {}
        exec(compile(code, "<snippet>", "exec"), namespace)
        expected = S.vanilla_saliency(lite0.model, x_cat, 285, objective=objective, reduce=reduce)
        torch.testing.assert_close(namespace["saliency"], expected, atol=1e-6, rtol=0)
        assert namespace["picture"].shape == (224, 224, 3)

    def test_smoothgrad_snippet_runs_and_matches(
        self, lite0: LoadedModel, x_cat: torch.Tensor
    ) -> None:
        code = S.snippet_for("smoothgrad", target=None, n=2, sigma=0.1, seed=3)
        namespace: dict = {}
        exec(compile(code, "<snippet>", "exec"), namespace)
        assert namespace["target"] == 285
        expected = S.smoothgrad(lite0.model, x_cat, 285, n=2, sigma=0.1, seed=3)
        torch.testing.assert_close(namespace["saliency"], expected, atol=1e-6, rtol=0)

    def test_every_method_snippet_compiles(self) -> None:
        for method in S.METHODS:
            compile(S.snippet_for(method), "<snippet>", "exec")
        code = S.snippet_for("vanilla", custom_file="mine.pt", architecture="resnet18")
        compile(code, "<snippet>", "exec")
        assert "load_custom_model" in code


def notes_formula(s: np.ndarray) -> np.ndarray:
    """The issue's formula, written independently: np.uint8(clip(255 (s - P1) / (P99 - P1)))."""
    p1, p99 = np.percentile(s, 1), np.percentile(s, 99)
    return np.clip(255 * (s - p1) / (p99 - p1), 0, 255).astype(np.uint8)


class TestNotesRecipe:
    """000:2: loss gradient, sum |grad| over channels, cvglue.scale_min_max(.., 99), uint8."""

    def test_hand_computed_example(self) -> None:
        s = np.arange(101, dtype=np.float32)  # P1 = 1, P99 = 99 (linear interpolation)
        out = S.scale_like_notes(s)
        assert out.dtype == np.uint8
        # 255 * 49 / 98 = 127.5 -> 127 (truncated); 255 * 1 / 98 = 2.6 -> 2; 0 and 1 clip to 0
        assert [int(out[i]) for i in (0, 1, 2, 50, 98, 99, 100)] == [0, 0, 2, 127, 252, 255, 255]
        # the app divides by P99 and rounds: 50 / 99 * 255 = 128.8 -> 129
        assert int(S.scale_percentile(s.reshape(1, -1), 99)[0, 50]) == 129

    def test_keeps_the_notes_shape_and_float32(self) -> None:
        s = np.random.default_rng(4).random((1, 1, 6, 5), dtype=np.float32)
        scaled = S.cvglue_scale_min_max(s, 0, 255, percentile=99)
        assert scaled.shape == (1, 1, 6, 5) and scaled.dtype == np.float32
        assert scaled.min() == 0 and scaled.max() == 255
        assert S.cvglue_scale_min_max(s, -1.0, 1.0).min() == -1.0  # percentile 100 = min-max

    def test_matches_reference_on_chelsea(self, lite0: LoadedModel, x_cat: torch.Tensor) -> None:
        sal = S.vanilla_saliency(lite0.model, x_cat, 285, objective="loss", reduce="sum")
        ours = S.scale_like_notes(sal)
        np.testing.assert_array_equal(ours, notes_formula(sal.numpy()))
        # the notes' own steps: loss.backward(), x.grad, keepdims, [0].transpose, np.uint8
        xx = x_cat.clone().requires_grad_(True)
        F.cross_entropy(lite0.model.forward(xx), torch.tensor([285])).backward()
        saliency_map = torch.sum(torch.abs(xx.grad), axis=1, keepdims=True).detach().numpy()
        scaled = np.uint8(notes_formula(saliency_map)[0].transpose((1, 2, 0)))
        np.testing.assert_array_equal(ours, scaled[..., 0])

    def test_app_default_differs_from_the_notes(
        self, lite0: LoadedModel, x_cat: torch.Tensor
    ) -> None:
        loss_map = S.vanilla_saliency(lite0.model, x_cat, 285, objective="loss", reduce="sum")
        same_map = S.compare_scalings(loss_map)
        # measured on chelsea: up to 8 grey levels apart, 98.9% of the pixels differ
        assert same_map.max_diff is not None and 6 <= same_map.max_diff <= 10
        assert same_map.share_differing is not None and same_map.share_differing > 0.9
        assert 0 < same_map.p_low < same_map.p_high
        np.testing.assert_array_equal(same_map.notes, S.scale_like_notes(loss_map))
        np.testing.assert_array_equal(same_map.app, S.scale_percentile(loss_map, 99))
        # the whole default recipe (class score, /P99, rounded) is far from the notes' map
        score_map = S.vanilla_saliency(lite0.model, x_cat, 285, objective="logit", reduce="sum")
        full = np.abs(S.scale_percentile(score_map, 99).astype(int) - same_map.notes.astype(int))
        assert full.max() > 100

    @settings(max_examples=60, deadline=None)
    @given(
        s=arrays(
            st.sampled_from([np.float32, np.float64]),
            st.tuples(st.integers(1, 16), st.integers(1, 16)),
            elements=st.floats(0, 1e6, width=32),
        )
    )
    def test_property_bit_for_bit(self, s: np.ndarray) -> None:
        if np.percentile(s, 99) == np.percentile(s, 1):
            with pytest.raises(ValueError, match="undefined"):
                S.scale_like_notes(s)
            return
        np.testing.assert_array_equal(S.scale_like_notes(s), notes_formula(s))

    def test_flat_map(self) -> None:
        flat = np.full((4, 4), 0.25, dtype=np.float32)
        with np.errstate(all="ignore"):  # why the app refuses: the formula gives 0 / 0 = NaN
            assert np.isnan(255 * (flat - 0.25) / (0.25 - 0.25)).all()
        with pytest.raises(ValueError, match=r"undefined for this map: P99 == P1 == 0\.25"):
            S.scale_like_notes(flat)
        compared = S.compare_scalings(flat)
        assert compared.notes is None and compared.max_diff is None
        assert "divide by zero" in (compared.notes_error or "")
        assert compared.app.max() == 255  # the app: 0.25 / (0.25 + 1e-12) -> full colour

    def test_exception(self) -> None:
        with pytest.raises(ValueError, match=r"percentile must be in \(50, 100\]"):
            S.cvglue_scale_min_max(np.arange(4.0), 0, 255, percentile=50)
        with pytest.raises(ValueError, match="max_v must be greater than min_v"):
            S.cvglue_scale_min_max(np.arange(4.0), 255, 0)
        with pytest.raises(ValueError, match="NaN or Inf"):
            S.scale_like_notes(np.array([0.0, np.inf]))
        with pytest.raises(ValueError, match="empty"):
            S.scale_like_notes(np.zeros((0, 3)))
        with pytest.raises(ValueError, match="recipe must be one of"):
            S.snippet_for(recipe="cvglue")

    def test_notes_snippet_runs_and_matches(self, lite0: LoadedModel, x_cat: torch.Tensor) -> None:
        code = S.snippet_for("smoothgrad", target=285, recipe="notes")  # method is ignored
        assert "loss.backward()" in code
        assert "scale_min_max(saliency_map, 0, 255, percentile=99)" in code
        namespace: dict = {}
        exec(compile(code, "<snippet>", "exec"), namespace)
        expected = S.vanilla_saliency(lite0.model, x_cat, 285, objective="loss", reduce="sum")
        torch.testing.assert_close(namespace["saliency"], expected, atol=0, rtol=0)
        np.testing.assert_array_equal(namespace["saliency_u8"], S.scale_like_notes(expected))
        assert namespace["picture"].shape == (224, 224, 3)
        assert all(p.grad is None for p in lite0.model.parameters())  # frozen: x.grad only


class TestNotesCallout:
    def test_retain_grad_callout(self) -> None:
        (callout,) = S.notes_callouts()
        assert callout.key == "saliency_retain_grad" and str(callout.ref) == "000:2"
        assert callout.verdict == "wrong" and not callout.run.raised
        lines = callout.run.output.splitlines()
        second_time = "RuntimeError: Trying to backward through the graph a second time"
        assert second_time in lines[0] and second_time in lines[1]
        assert "h.grad kept" in lines[1] and lines[2].endswith("second backward works")
        assert "retain_grad() does not prevent it" in callout.today_text
        assert "loss.backward(retain_graph=True)" in callout.today_text
        # today is the catalog's template; the live error message is its value
        assert "{message}" in callout.today
        assert dict(callout.today_args)["message"].startswith("Trying to backward through")

    def test_sentence_follows_the_run(self) -> None:
        err = "RuntimeError: Trying to backward through the graph a second time"
        ok = "second backward works"
        verdict, _ = S.read_retain_run(f"A x: {err}\nB x: h.grad kept; {err}\nC x: {ok}")
        assert verdict == "wrong"
        # if retain_grad() ever kept the graph, the page would say the notes are right
        verdict, text = S.read_retain_run(f"A x: {err}\nB x: h.grad kept; {ok}\nC x: {ok}")
        assert verdict == "incomplete" and "as the notes say" in text
        verdict, _ = S.read_retain_run(f"A x: {ok}\nB x: {ok}\nC x: {ok}")
        assert verdict == "out of date"
        with pytest.raises(ValueError, match="lines A, B and C"):
            S.read_retain_run("nothing")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_matches_cpu(lite0: LoadedModel, chelsea: np.ndarray) -> None:
    gpu = load_model("efficientnet_lite0", device="cuda:0")
    x_gpu = gpu.preprocess(chelsea)
    assert x_gpu.device.type == "cuda"
    on_gpu = S.vanilla_saliency(gpu.model, x_gpu, 285, reduce="max")
    on_cpu = S.vanilla_saliency(lite0.model, lite0.preprocess(chelsea), 285, reduce="max")
    assert S.spearman(on_gpu, on_cpu) > 0.99
    assert S.smoothgrad(gpu.model, x_gpu, 285, n=4).shape == (224, 224)


class TestEstimateRun:
    def test_images_per_method(self):
        assert S.estimate_run("vanilla", per_image_ms=100.0).images == 1
        assert S.estimate_run("grad_x_input", per_image_ms=100.0).images == 1
        assert S.estimate_run("smoothgrad", n=25, per_image_ms=100.0).images == 25
        assert S.estimate_run("integrated_gradients", steps=64, per_image_ms=100.0).images == 64

    def test_seconds_from_the_measured_pass(self):
        estimate = S.estimate_run("smoothgrad", n=25, per_image_ms=120.0)
        assert estimate.seconds == pytest.approx(3.0)

    def test_matches_a_real_run(self):
        model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 10))
        x = torch.rand(1, 3, 8, 8)
        result = S.compute_saliency(model, x, 1, "smoothgrad", n=6, batch_size=4)
        per_image = (result.forward_ms + result.backward_ms) / result.images
        assert S.estimate_run("smoothgrad", n=6, per_image_ms=per_image).images == result.images

    @pytest.mark.parametrize(
        "kwargs, message",
        [
            ({"method": "gradcam"}, "method"),
            ({"method": "smoothgrad", "n": 0}, "n >= 1"),
            ({"method": "integrated_gradients", "steps": 0}, "steps >= 1"),
            ({"method": "vanilla", "per_image_ms": float("nan")}, "per_image_ms"),
            ({"method": "vanilla", "per_image_ms": -1.0}, "per_image_ms"),
        ],
    )
    def test_exception(self, kwargs, message):
        kwargs = {"per_image_ms": 100.0, **kwargs}
        method = kwargs.pop("method")
        with pytest.raises(ValueError, match=message):
            S.estimate_run(method, **kwargs)


class TestEstimateSanity:
    def test_one_run_per_map(self):
        # the original map and one per randomized layer, each a full run of the method
        ig = S.estimate_sanity("integrated_gradients", 21, steps=128, per_image_ms=160.0)
        assert ig.images == 22 * 128
        assert ig.seconds == pytest.approx(22 * 128 * 0.16)
        assert S.estimate_sanity("vanilla", 6, per_image_ms=100.0).images == 7
        assert S.estimate_sanity("smoothgrad", 2, n=5, per_image_ms=100.0).images == 15

    def test_exception(self):
        with pytest.raises(ValueError, match="layers >= 1, got 0"):
            S.estimate_sanity("vanilla", 0, per_image_ms=100.0)
        with pytest.raises(ValueError, match="method"):
            S.estimate_sanity("nope", 2, per_image_ms=100.0)

    def test_counts_the_images_a_real_test_sends(self):
        model = torch.nn.Sequential(
            torch.nn.Conv2d(3, 4, 3), torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 10)
        )
        x = torch.rand(1, 3, 8, 8)
        sent: list[int] = []
        real = S.compute_saliency

        def counting(*args, **kwargs):
            result = real(*args, **kwargs)
            sent.append(result.images)
            return result

        import unittest.mock

        with unittest.mock.patch.object(S, "compute_saliency", counting):
            S.randomization_test(model, x, 1, "smoothgrad", 2, n=3)
        assert sum(sent) == S.estimate_sanity("smoothgrad", 2, n=3, per_image_ms=1.0).images
