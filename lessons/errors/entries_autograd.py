"""Autograd errors: backward twice, non-leaf tensors, in-place edits, gradients switched off."""

from __future__ import annotations

from core.text import N_
from lessons.errors.entry import LIVE, Entry

ENTRIES: tuple[Entry, ...] = (
    Entry(
        key="backward-twice",
        kind="autograd",
        title=N_("backward() through the same graph twice"),
        where="000:76",
        notes_message="Trying to backward through the graph a second time",
        notes_cause="某些东西多次反传了（如 GAN 的生成图在判别器和生成器反传了两次），或者其他未知原因",
        notes_gloss=N_(
            "Something was back-propagated more than once (a GAN's generated image through both "
            "the discriminator and the generator), or some other unknown reason; "
            "retain_graph=True helps but is slow, .detach() fixes it."
        ),
        cause=N_(
            "backward() frees the tensors the graph saved for the gradient as soon as it has "
            "used them. A second backward() through any part of the same graph finds them gone."
        ),
        fix=N_(
            "Build the graph again for each backward (run the forward again), or detach what the "
            "second loss must not reach back through. retain_graph=True on the first backward() "
            "keeps the saved tensors, at the cost of their memory, when you really need both."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "w = torch.ones(3, requires_grad=True)\n"
            "loss = (w * w).sum()\n"
            "loss.backward()\n"
            "loss.backward()\n"
        ),
        fixed=(
            "import torch\n"
            "w = torch.ones(3, requires_grad=True)\n"
            "loss = (w * w).sum()\n"
            "loss.backward(retain_graph=True)\n"
            "loss.backward()\n"
            "print(w.grad)\n"
        ),
        today=(
            "RuntimeError: Trying to backward through the graph a second time (or directly "
            "access saved tensors after they have already been freed). Saved intermediate values "
            "of the graph are freed when you call .backward() or autograd.grad(). Specify "
            "retain_graph=True if you need to backward through the graph a second time or if you "
            "need to access saved tensors after calling backward."
        ),
        notes_differ=N_(
            "The notes call the cause partly unknown and suggest find_unused_parameters=True. "
            "The cause is always a second backward through freed buffers; "
            "find_unused_parameters is a DDP option and has nothing to do with it."
        ),
        lesson=("saliency?saliency.method=Vanilla+gradient", N_("Saliency: retain_graph")),
    ),
)
