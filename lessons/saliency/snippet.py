"""The code snippet under the saliency page: Python that reproduces the map the page shows.

Pure module (no Streamlit). :func:`snippet_for` writes the source for the page's current
choices (model or uploaded file, class, method and its parameters, the app's recipe or the
notes'); run on its own, it defines ``saliency`` (H, W), ``saliency_u8`` (H, W) uint8 and
``picture`` (H, W, 3) uint8. Its English ``# comments`` are catalog messages, shown translated
(``ui.code.localized``).

>>> exec(snippet_for("smoothgrad", target=285, n=2))    # defines saliency, picture, ...
"""

from __future__ import annotations

from core.text import N_
from lessons.saliency.maps import METHODS, OBJECTIVES, REDUCTIONS, MapChoice, check_choice
from lessons.saliency.scaling import RECIPES
from lessons.saliency.session import Classifier


def snippet_for(
    method: str = "vanilla",
    *,
    model_name: str = "efficientnet_lite0",
    target: int | None = None,
    objective: str = "logit",
    reduce: str = "sum",
    n: int = 25,
    sigma: float = 0.15,
    steps: int = 32,
    baseline: str = "black",
    percentile: float = 99,
    alpha: float = 0.5,
    colormap: str = "jet",
    sample: str = "chelsea.png",
    device: str = "cpu",
    custom_file: str | None = None,
    architecture: str | None = None,
    seed: int = 0,
    recipe: str = "app",
) -> str:
    """Python source that reproduces the page's map; it defines ``saliency`` (H, W),
    ``saliency_u8`` (H, W) uint8 and ``picture`` (H, W, 3) uint8. Vanilla is spelled out in
    plain torch; the other methods call ``lessons.saliency.maps``. ``target=None`` uses the
    predicted class. ``custom_file``: load an uploaded model file (with ``architecture`` for a
    state_dict) instead of ``model_name``. ``recipe="notes"`` writes out the notes' code (000:2)
    instead:
    ``loss.backward()``, sum of ``|x.grad|`` over channels, ``cvglue.scale_min_max(..., 0, 255,
    percentile=99)`` and ``np.uint8``; ``method``, ``objective``, ``reduce`` and ``percentile``
    are then ignored."""
    check_choice("recipe", recipe, tuple(RECIPES))
    check_choice("method", method, tuple(METHODS))
    check_choice("objective", objective, OBJECTIVES)
    check_choice("reduce", reduce, REDUCTIONS)
    target_line = (
        "target = int(logits.argmax())  # the predicted class"
        if target is None
        else f"target = {int(target)}"
    )
    if custom_file is None:
        import_line = "from lessons.saliency.models import load_model"
        load_line = f"loaded = load_model({model_name!r}, device={device!r})  # eval mode"
    else:
        import_line = "from lessons.saliency.models import load_custom_model"
        load_line = (
            f"with open({custom_file!r}, 'rb') as f:  # your uploaded file\n"
            f"    loaded = load_custom_model(f.read(), filename={custom_file!r}, "
            f"architecture={architecture!r}, device={device!r})"
        )
    head = f"""import os

import skimage.data
import skimage.io
import torch
import torch.nn.functional as F

{import_line}
from lessons.saliency.pictures import overlay
from lessons.saliency.scaling import scale_percentile

{load_line}
image = skimage.io.imread(os.path.join(skimage.data.data_dir, {sample!r}))[..., :3]
x = loaded.preprocess(image)  # (1, 3, H, W); see loaded.describe_preprocessing()
with torch.no_grad():
    logits = loaded.model(x)
{target_line}
"""
    body = _method_body(method, objective, reduce, n=n, sigma=sigma, steps=steps,
                        baseline=baseline, seed=seed)  # fmt: skip
    tail = f"""
saliency_u8 = scale_percentile(saliency, percentile={percentile})  # /(P{percentile:g} + 1e-12)
picture = overlay(loaded.model_view(image), saliency_u8, alpha={alpha}, colormap={colormap!r})
"""
    if recipe == "notes":
        body = _NOTES_RECIPE_BODY
        tail = f"""saliency_u8 = saliency_map[..., 0]  # (H, W) uint8
picture = overlay(loaded.model_view(image), saliency_u8, alpha={alpha}, colormap={colormap!r})
"""
    return head + body + tail


def snippet_of(choice: MapChoice, model: Classifier) -> str:
    """:func:`snippet_for` the page's ``choice`` of map, made with ``model`` (a registry model
    by its name, an uploaded one by its file and architecture) on its device."""
    c, loaded = choice, model.loaded
    return snippet_for(c.method, model_name=loaded.name, custom_file=model.upload_name,
                       architecture=model.architecture, target=c.target, objective=c.objective,
                       reduce=c.reduce, n=c.n, sigma=c.sigma, steps=c.steps, baseline=c.baseline,
                       percentile=c.percentile, alpha=c.alpha, colormap=c.colormap,
                       device=loaded.device, seed=c.seed, recipe=c.recipe)  # fmt: skip


def _method_body(
    method: str, objective: str, reduce: str, *, n: int, sigma: float, steps: int,
    baseline: str, seed: int,
) -> str:  # fmt: skip
    """The lines of :func:`snippet_for` that compute ``saliency`` (H, W) from ``x`` and
    ``target``: vanilla spelled out in plain torch, the other methods through
    ``lessons.saliency.maps``."""
    reduce_expr = "grad.abs().sum(dim=1)[0]" if reduce == "sum" else "grad.abs().amax(dim=1)[0]"
    # whole comments (marked), so a Chinese page shows them translated (ui.code.localized)
    reduce_comment = (
        N_("|grad| summed over channels") if reduce == "sum" else N_("|grad|, max over channels")
    )
    if objective == "logit":
        score_line = "score = loaded.model(x)[0, target]  # class score (Simonyan et al.)"
    else:
        score_line = (
            "score = F.cross_entropy(loaded.model(x), torch.tensor([target], device=x.device))"
        )
    bodies = {
        "vanilla": f"""
x = x.clone().requires_grad_(True)
{score_line}
(grad,) = torch.autograd.grad(score, x)  # no parameter .grad is written
saliency = {reduce_expr}.cpu()  # {reduce_comment}
""",
        "grad_x_input": f"""
from lessons.saliency.maps import grad_x_input

saliency = grad_x_input(loaded.model, x, target, objective={objective!r}, reduce={reduce!r})
""",
        "smoothgrad": f"""
from lessons.saliency.maps import smoothgrad

saliency = smoothgrad(
    loaded.model, x, target, n={n}, sigma={sigma}, seed={seed},
    objective={objective!r}, reduce={reduce!r},
)
""",
        "integrated_gradients": f"""
from lessons.saliency.maps import integrated_gradients

saliency = integrated_gradients(
    loaded.model, x, target, steps={steps}, baseline={baseline!r},
    black_level=loaded.black_level(), objective={objective!r}, reduce={reduce!r},
)
""",
    }
    return bodies[method]


_NOTES_RECIPE_BODY = """
# The notes' recipe (000:2), made runnable. The notes leave the model and target_loss open;
# here target_loss is the cross-entropy against the explained class.
import numpy as np

from lessons.saliency.scaling import (
    cvglue_scale_min_max as scale_min_max,  # = cvglue.scale_min_max
)

model = loaded.model  # parameters are frozen (requires_grad=False): backward fills x.grad only
x = x.clone().requires_grad_(True)
y = model.forward(x)
loss = F.cross_entropy(y, torch.tensor([target], device=x.device))  # target_loss(y)
loss.backward()  # frees the graph's saved tensors; a second backward() needs retain_graph=True
saliency = torch.sum(torch.abs(x.grad), axis=1)[0].detach().cpu()  # (H, W), before scaling

saliency_map = torch.sum(torch.abs(x.grad), axis=1, keepdims=True)
saliency_map = saliency_map.detach().cpu().numpy()
saliency_map = scale_min_max(saliency_map, 0, 255, percentile=99)  # P1..P99 -> 0..255, clipped
saliency_map = np.uint8(saliency_map[0].transpose((1, 2, 0)))  # (H, W, 1), truncated
"""
