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
        notes_cause=(
            "某些东西多次反传了（如 GAN 的生成图在判别器和生成器反传了两次），或者其他未知原因"
        ),
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
        lesson=(
            "saliency",
            N_("Saliency: retain_grad() or retain_graph=True, run on a real model"),
        ),
    ),
    Entry(
        key="non-leaf",
        kind="autograd",
        title=N_("An optimizer given a tensor that is not a leaf"),
        where="000:76",
        notes_message="can't optimize a non-leaf Tensor",
        notes_cause=(
            ".cuda() 放在最前面（.requires_grad 或 torch.nn.Parameter 定义前），"
            "也就是不要把搬到显卡内存的操作加入到计算图中"
        ),
        notes_gloss=N_(
            "Put .cuda() first (before .requires_grad or the torch.nn.Parameter is made), that "
            "is, do not let the move to GPU memory become part of the graph."
        ),
        cause=N_(
            "An optimizer updates leaves: tensors made by you with requires_grad=True. Any "
            "operation after requires_grad=True (a .cuda(), a .to(dtype), a * 2) returns a new "
            "tensor computed from the leaf, with a grad_fn; that result is not a leaf, its .grad "
            "stays empty, and the optimizer refuses it."
        ),
        fix=N_(
            "Create the tensor where and as it will live, then ask for its gradient: "
            "torch.zeros(3, device='cuda', requires_grad=True), or x.cuda().requires_grad_(), or "
            "nn.Parameter(x.cuda()). Moving a whole nn.Module with .cuda() is fine: it moves the "
            "parameters in place and they stay leaves."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "# the CPU twin of .cuda() after requires_grad: any op makes a new, non-leaf tensor\n"
            "w = torch.zeros(3, requires_grad=True).to(torch.float64)\n"
            "opt = torch.optim.SGD([w], lr=0.1)\n"
        ),
        fixed=(
            "import torch\n"
            "w = torch.zeros(3, dtype=torch.float64, requires_grad=True)\n"
            "opt = torch.optim.SGD([w], lr=0.1)\n"
            "loss = ((w - 1) ** 2).sum()\n"
            "loss.backward()\n"
            "opt.step()\n"
            "print(w.is_leaf, w)\n"
        ),
        today="ValueError: can't optimize a non-leaf Tensor",
    ),
    Entry(
        key="inplace",
        kind="autograd",
        title=N_("A tensor backward needs was changed in place"),
        where="000:76",
        notes_message=(
            "RuntimeError: one of the variables needed for gradient computation has been "
            "modified by an inplace operation"
        ),
        notes_cause=(
            "可能是 += 这种 inplace 操作以及切片之类的操作合在一起，"
            "导致 tensor 没法整体计算反传导致，需要切开计算图节点，分成两个 tensor 相加"
        ),
        notes_gloss=N_(
            "Probably an in-place operation such as += combined with slicing, so the tensor "
            "cannot be back-propagated as a whole; split the graph node and add two tensors "
            "instead."
        ),
        cause=N_(
            "Some operations save a tensor for their gradient (sigmoid saves its output, a "
            "product its inputs). Each tensor counts its in-place changes; backward() finds the "
            "saved tensor at a later version than the one saved and refuses to use it. The "
            "message names that tensor's type and shape, the operation that saved it, and the "
            "two versions. In-place changes to tensors nothing saved are allowed."
        ),
        fix=N_(
            "Compute a new tensor instead of writing into the saved one (y = y + bump instead of "
            "y[:, 0] += 1), or .clone() before the in-place edit. "
            "torch.autograd.set_detect_anomaly(True) points at the forward line whose saved "
            "tensor was changed."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "x = torch.zeros(2, 3, requires_grad=True)\n"
            "y = x.sigmoid()  # sigmoid saves its output y for the gradient\n"
            "y[:, 0] += 1\n"
            "y.sum().backward()\n"
        ),
        fixed=(
            "import torch\n"
            "x = torch.zeros(2, 3, requires_grad=True)\n"
            "y = x.sigmoid()\n"
            "bump = torch.zeros(2, 3)\n"
            "bump[:, 0] = 1  # in place on a tensor nothing saved: allowed\n"
            "y = y + bump  # a new tensor; the saved y is untouched\n"
            "y.sum().backward()\n"
            "print(x.grad)\n"
        ),
        today=(
            "RuntimeError: one of the variables needed for gradient computation has been "
            "modified by an inplace operation: [torch.FloatTensor [2, 3]], which is output 0 of "
            "Sigmoid, is at version 2; expected version 0 instead. Hint: enable anomaly "
            "detection to find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False)."
        ),
        also=(
            "RuntimeError: one of the variables needed for gradient computation has been "
            "modified by an inplace operation: [torch.cuda.FloatTensor [48, 1]] is at version "
            "16; expected version 14 instead. Hint: enable anomaly detection to find the "
            "operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True).",
        ),
        notes_differ=N_(
            "Slicing is not the cause: any in-place change (+=, .add_(), x[i] = v, an "
            "nn.ReLU(inplace=True)) to a tensor that an operation saved for backward raises it, "
            "and in-place changes to tensors nothing saved are fine."
        ),
        also_notes=(
            (
                "002:1338",
                "one of the variables needed for gradient computation has been modified by an "
                "inplace operation:",
            ),
        ),
        lesson=(
            "indexing?indexing.details_tab=More+pitfalls+from+the+notes"
            "&indexing.notes_demos.tab=in-place+%2B+backward",
            N_("Indexing explainer: in-place + backward, live"),
        ),
    ),
    Entry(
        key="no-grad-fn",
        kind="autograd",
        title=N_("backward() on a result that has no graph"),
        where="000:76",
        notes_message=(
            "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn"
        ),
        notes_cause=(
            "用了不可微操作或者在某个地方可能全局禁用了梯度，也可能是 notebook 问题，重启完事"
        ),
        notes_gloss=N_(
            "A non-differentiable operation was used, or gradients may have been switched off "
            "globally somewhere; it may also be a notebook problem, restart and it is gone."
        ),
        cause=N_(
            "backward() starts from a tensor with no grad_fn that does not require grad, so "
            "there is no graph to go back through. The graph was cut: a non-differentiable step "
            "(argmax, a comparison, a cast to an integer), .detach(), .item() or .numpy() and "
            "back, a torch.no_grad() block, torch.set_grad_enabled(False), or no input required "
            "grad in the first place."
        ),
        fix=N_(
            "Make the loss from differentiable operations on tensors that require grad (a cross "
            "entropy rather than an accuracy), compute it outside torch.no_grad(), and check "
            "loss.requires_grad and loss.grad_fn before backward()."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "torch.manual_seed(0)\n"
            "model = torch.nn.Linear(4, 3)\n"
            "x = torch.randn(8, 4)\n"
            "y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])\n"
            "# argmax has no gradient: the error rate is cut off from the model\n"
            "error_rate = (model(x).argmax(dim=1) != y).float().mean()\n"
            "error_rate.backward()\n"
        ),
        fixed=(
            "import torch\n"
            "torch.manual_seed(0)\n"
            "model = torch.nn.Linear(4, 3)\n"
            "x = torch.randn(8, 4)\n"
            "y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])\n"
            "loss = torch.nn.functional.cross_entropy(model(x), y)\n"
            "loss.backward()\n"
            "print(loss.grad_fn.name(), model.weight.grad.shape)\n"
        ),
        today=(
            "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn"
        ),
        notes_differ=N_(
            "Restarting only helps when an earlier notebook cell switched gradients off for the "
            "whole process; otherwise the same code fails again, because the graph is cut in the "
            "code itself."
        ),
    ),
    Entry(
        key="grad-disabled-globally",
        kind="autograd",
        title=N_("Gradients switched off for the whole thread"),
        where="000:76",
        notes_message="requires_grad 失效，autograd 不计算后续节点的梯度",
        notes_cause="有个检测器的初始代码里设置了 torch.set_grad_enabled(False) 影响了全局导致的",
        notes_gloss=N_(
            "requires_grad stopped working and autograd computed no gradients for later nodes: "
            "a detector's setup code called torch.set_grad_enabled(False), which affected "
            "everything."
        ),
        cause=N_(
            "torch.set_grad_enabled(False) called as a function (not in a with block) switches "
            "gradient recording off for the rest of the thread, for every module imported or "
            "called later. Results then have no grad_fn even though the parameters still "
            "require grad, and backward() fails with the no-grad_fn message, or a loop that "
            "never calls backward() silently trains nothing."
        ),
        fix=N_(
            "Use torch.no_grad() or torch.inference_mode() as a with block around the code "
            "that needs no gradients, so the switch ends with the block. Where a library "
            "switched it off, turn it back on for training with torch.enable_grad() (a with "
            "block) or torch.set_grad_enabled(True); torch.is_grad_enabled() tells which is on."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "torch.set_grad_enabled(False)  # a detector's setup code, far from the training loop\n"
            "model = torch.nn.Linear(4, 1)\n"
            "loss = model(torch.ones(2, 4)).pow(2).mean()\n"
            "print(torch.is_grad_enabled(), model.weight.requires_grad, loss.grad_fn)\n"
            "loss.backward()\n"
        ),
        fixed=(
            "import torch\n"
            "torch.set_grad_enabled(False)  # a detector's setup code, far from the training loop\n"
            "model = torch.nn.Linear(4, 1)\n"
            "with torch.enable_grad():  # the training step records its graph again\n"
            "    loss = model(torch.ones(2, 4)).pow(2).mean()\n"
            "loss.backward()\n"
            "print(loss.grad_fn.name(), model.weight.grad.shape)\n"
        ),
        today=(
            "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn"
        ),
        also=("requires_grad does not work, autograd computes no gradients, grad is None",),
        notes_differ=N_(
            "The switch is per thread, not global to the process: a DataLoader worker or another "
            "thread starts with gradients on. Within the thread that made the call the notes are "
            "right."
        ),
    ),
    Entry(
        key="numpy-requires-grad",
        kind="autograd",
        title=N_(".numpy() on a tensor that requires grad"),
        where="004:100",
        notes_message=(
            "RuntimeError: Can't call numpy() on Variable that requires grad. "
            "Use var.detach().numpy() instead."
        ),
        notes_cause="loss.cpu().numpy()",
        notes_gloss=N_(
            "The notes call loss.cpu().numpy() on a loss that is part of a graph, and show the "
            "working ways on the next lines: .detach().numpy(), .data.numpy(), .item()."
        ),
        cause=N_(
            "A NumPy array shares the tensor's memory but cannot record operations, so changes "
            "made through it would bypass autograd. torch refuses to hand out an array of a "
            "tensor that requires grad while gradients are being recorded."
        ),
        fix=N_(
            "Call .detach() first (x.detach().cpu().numpy()); for a single number such as a loss "
            "use .item()."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
            "loss = (w * w).sum()\n"
            "print(loss.cpu().numpy())\n"
        ),
        fixed=(
            "import torch\n"
            "w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
            "loss = (w * w).sum()\n"
            "print(loss.cpu().detach().numpy(), loss.item())\n"
        ),
        today=(
            "RuntimeError: Can't call numpy() on Tensor that requires grad. "
            "Use tensor.detach().numpy() instead."
        ),
        notes_differ=N_(
            "Variable was merged into Tensor in torch 0.4, so the message now says Tensor and "
            "tensor.detach().numpy(). .data.numpy() still works but skips autograd's checks; "
            ".detach() is the supported way."
        ),
    ),
)
