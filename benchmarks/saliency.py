"""Saliency cost on the default offline model (EfficientNet-Lite0, 224x224, CPU).

Run: python -m benchmarks.saliency [--repeats 15] [--device cpu]

Prints the median time of
- a bare forward+backward (torch.autograd.grad of the class score w.r.t. a preprocessed input),
- vanilla_saliency *including* preprocessing from uint8 and percentile scaling, and its ratio to
  the bare time (target <= 1.3),
- SmoothGrad with n=25, batched (batch_size 8, the default; one batch of 25 is slower on a
  small CPU because the activations fall out of cache), and the same samples one at a time,
- the notes' recipe (loss.backward() with trainable parameters, which also computes every
  weight gradient) for comparison.
Bare and full runs are interleaved so that load from other processes hits both alike.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time

import torch
import torch.nn.functional as F

from core.images import load_sample
from lessons.saliency.maps import smoothgrad, vanilla_saliency
from lessons.saliency.models import load_model
from lessons.saliency.scaling import scale_percentile

TARGET = 285  # Egyptian cat


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(fn, device: str) -> float:
    sync(device)
    t0 = time.perf_counter()
    fn()
    sync(device)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--n", type=int, default=25, help="SmoothGrad samples")
    args = parser.parse_args()

    loaded = load_model("efficientnet_lite0", device=args.device)
    model = loaded.model
    image = load_sample("chelsea.png").rgb
    x = loaded.preprocess(image)

    def bare() -> None:
        xx = x.detach().clone().requires_grad_(True)
        torch.autograd.grad(model(xx)[0, TARGET], xx)

    def full() -> None:
        xx = loaded.preprocess(image)
        scale_percentile(vanilla_saliency(model, xx, TARGET, objective="logit", reduce="sum"))

    trainable = copy.deepcopy(model)
    for p in trainable.parameters():
        p.requires_grad_(True)

    def notes_recipe() -> None:
        xx = x.detach().clone().requires_grad_(True)
        loss = F.cross_entropy(trainable(xx), torch.tensor([TARGET], device=x.device))
        loss.backward()
        trainable.zero_grad(set_to_none=True)

    for _ in range(3):  # warm-up (allocator, oneDNN primitive caches)
        bare()
        full()
    bare_t, full_t, notes_t = [], [], []
    for _ in range(args.repeats):
        bare_t.append(timed(bare, args.device))
        full_t.append(timed(full, args.device))
        notes_t.append(timed(notes_recipe, args.device))
    bare_med, full_med = statistics.median(bare_t), statistics.median(full_t)

    sg_batched, sg_one_batch, sg_looped_t, sg_bare = [], [], [], []
    for _ in range(3):  # interleaved, medians
        sg_bare.append(timed(bare, args.device))
        sg_batched.append(timed(lambda: smoothgrad(model, x, TARGET, n=args.n), args.device))
        sg_one_batch.append(
            timed(lambda: smoothgrad(model, x, TARGET, n=args.n, batch_size=args.n), args.device)
        )
        sg_looped_t.append(
            timed(lambda: smoothgrad(model, x, TARGET, n=args.n, batch_size=1), args.device)
        )
    sg_looped = statistics.median(sg_looped_t)

    notes_med = statistics.median(notes_t)
    sg_med = statistics.median(sg_batched)
    rows = [
        ("bare forward+backward (autograd.grad wrt x)", f"{bare_med * 1e3:9.1f} ms"),
        ("vanilla_saliency incl. preprocessing + scaling", f"{full_med * 1e3:9.1f} ms"),
        ("ratio vanilla / bare (target <= 1.3)", f"{full_med / bare_med:9.2f}"),
        ("  same ratio from the fastest runs", f"{min(full_t) / min(bare_t):9.2f}"),
        ("notes' recipe: loss.backward() + weight grads", f"{notes_med * 1e3:9.1f} ms"),
        (f"SmoothGrad n={args.n}, batched (default batch_size 8)", f"{sg_med * 1e3:9.1f} ms"),
        (
            f"SmoothGrad n={args.n}, one batch of {args.n}",
            f"{statistics.median(sg_one_batch) * 1e3:9.1f} ms",
        ),
        (
            f"SmoothGrad n={args.n} / ({args.n} x bare) (< 1: batching pays)",
            f"{sg_med / (args.n * statistics.median(sg_bare)):9.2f}",
        ),
        (f"SmoothGrad n={args.n}, one sample at a time", f"{sg_looped * 1e3:9.1f} ms"),
        ("batched speed-up", f"{sg_looped / sg_med:9.2f}x"),
    ]
    print(
        f"device {args.device}, torch {torch.__version__}, threads {torch.get_num_threads()}, "
        f"efficientnet_lite0 input {tuple(x.shape)}, medians of {args.repeats} runs"
    )
    for label, value in rows:
        print(f"{label:<50} {value}")


if __name__ == "__main__":
    main()
