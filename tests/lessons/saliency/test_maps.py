"""lessons.saliency.maps: gradients vs direct autograd, localization, the methods, their cost,
the randomization test, the notes' retain_grad callout."""

from __future__ import annotations

import copy

import cv2
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from core.text import T
from lessons.saliency import maps as S
from lessons.saliency.models import LoadedModel, load_model
from lessons.saliency.sanity import read_randomization, spearman


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


def quadrant_mass(saliency: np.ndarray) -> np.ndarray:
    """Share of the total saliency in each quadrant: (2, 2) [[TL, TR], [BL, BR]]."""
    s = saliency.astype(np.float64)
    h, w = s.shape
    q = np.array([[s[: h // 2, : w // 2].sum(), s[: h // 2, w // 2 :].sum()],
                  [s[h // 2 :, : w // 2].sum(), s[h // 2 :, w // 2 :].sum()]])  # fmt: skip
    return q / q.sum()


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
    mass = quadrant_mass(saliency.numpy())
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


class TestRandomizationTest:
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
        reading = read_randomization(result)
        assert "passes" in reading
        # a template the page translates, with the numbers as its values
        assert isinstance(reading, T) and "{first}" in reading.template
        assert reading.args["layer"] == "_fc" and reading.args["k"] == 3
        # a control: the unrandomized model reproduces its own map exactly
        again = S.vanilla_saliency(lite0.model, x_cat, 285)
        assert spearman(again, S.vanilla_saliency(lite0.model, x_cat, 285)) == 1.0

    def test_exception(self, lite0: LoadedModel, x_cat: torch.Tensor) -> None:
        with pytest.raises(ValueError, match="unknown layer name.*'_head'"):
            S.randomization_test(lite0.model, x_cat, 285, "vanilla", ["_head"])
        with pytest.raises(ValueError, match=r"must be in 1\.\.21, got 0"):
            S.randomization_test(lite0.model, x_cat, 285, "vanilla", 0)
        with pytest.raises(ValueError, match="method must be one of"):
            S.randomization_test(lite0.model, x_cat, 285, "gradcam", 1)




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
    assert spearman(on_gpu, on_cpu) > 0.99
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


def _choice(**changes: object) -> S.MapChoice:
    values = dict(target=285, recipe="app", method="smoothgrad", objective="logit", reduce="sum",
                  n=4, sigma=0.2, steps=32, baseline="black", percentile=99.0, alpha=0.5,
                  colormap="jet", seed=7)  # fmt: skip
    return S.MapChoice(**{**values, **changes})


class TestMapChoice:
    def test_params_run_the_chosen_map(self) -> None:
        model, x = SmallNet().eval(), torch.randn(1, 3, 10, 10)
        choice = _choice(target=3)
        params = choice.params(black_level=-1.0)
        assert params["seed"] == 7 and params["black_level"] == -1.0
        result = S.compute_saliency(model, x, choice.target, choice.method, **params)
        expected = S.smoothgrad(model, x, 3, n=4, sigma=0.2, seed=7)
        torch.testing.assert_close(result.saliency, expected)

    def test_keys_name_everything_the_map_depends_on(self) -> None:
        choice = _choice()
        key = choice.key("lite0 · cpu", "abc")
        assert key == ("lite0 · cpu", "abc", 285, "smoothgrad", choice.params_key())
        assert choice.key("lite0 · cpu", "abc", "vanilla")[3] == "vanilla"  # the placeholder's
        others = [_choice(seed=8), _choice(n=5), _choice(sigma=0.3), _choice(reduce="max"),
                  _choice(objective="loss"), _choice(steps=16),
                  _choice(baseline="blur")]  # fmt: skip
        assert len({other.params_key() for other in others} | {choice.params_key()}) == 8
        # drawing options do not change the map, so they are not in its key
        assert _choice(alpha=0.9, colormap="bone").key("m", "i") == choice.key("m", "i")

    def test_drawing_is_what_make_pictures_takes_after_the_map(self) -> None:
        assert _choice(alpha=0.3, colormap="bone").drawing() == (False, 99.0, 0.3, "bone")
        assert _choice(recipe="notes", percentile=98.0).drawing()[:2] == (True, 98.0)

    def test_exception(self) -> None:
        with pytest.raises(ValueError, match="method must be one of .*, got 'gradcam'"):
            _choice(method="gradcam")
        with pytest.raises(ValueError, match="recipe must be one of"):
            _choice(recipe="cvglue")
        with pytest.raises(ValueError, match="baseline must be one of"):
            _choice(baseline="white")
