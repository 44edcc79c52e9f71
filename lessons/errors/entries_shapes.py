"""Shapes and indexing: out-of-range labels and indices, 0-d tensors, cat, view, strides."""

from __future__ import annotations

from core.text import N_
from lessons.errors.entry import LIVE, Entry

ENTRIES: tuple[Entry, ...] = (
    Entry(
        key="device-side-assert",
        kind="shapes",
        title=N_("A device-side assert: a label or an index out of range"),
        where="000:76",
        notes_message="CUDA error: device-side assert triggered",
        notes_cause="输入数据（或标签）的 shape 与运算时期望的 shape 对不上导致",
        notes_gloss=N_(
            "The shape of the input data (or of the labels) does not match the shape the "
            "operation expects."
        ),
        cause=N_(
            "A CUDA kernel checked a value and found it out of range, most often a class label "
            ">= the number of classes (or negative) in cross_entropy / nll_loss, a token id >= "
            "num_embeddings in an Embedding, or an index beyond a dimension in indexing, gather "
            "or scatter. The kernel cannot raise a Python error, so it stops the whole CUDA "
            "context; the error surfaces at a later, unrelated line, and every CUDA call after "
            "it fails too. The same mistake on the CPU raises a plain IndexError naming the "
            "value, which is the snippet here."
        ),
        fix=N_(
            "Run the same batch on the CPU (or with CUDA_LAUNCH_BLOCKING=1) to get the readable "
            "error at the right line. Check labels.min() >= 0 and labels.max() < num_classes "
            "(labels numbered from 1 need - 1), and ids < num_embeddings. After the assert, "
            "restart the process: the CUDA context cannot be used again."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "import torch.nn.functional as F\n"
            "logits = torch.zeros(4, 3)  # 4 samples, 3 classes: labels must be 0, 1 or 2\n"
            "labels = torch.tensor([1, 2, 3, 3])  # classes numbered from 1\n"
            "print(F.cross_entropy(logits, labels))\n"
        ),
        fixed=(
            "import torch\n"
            "import torch.nn.functional as F\n"
            "logits = torch.zeros(4, 3)\n"
            "labels = torch.tensor([1, 2, 3, 3]) - 1  # now 0, 1, 2, 2\n"
            "assert 0 <= labels.min() and labels.max() < logits.shape[1]\n"
            "print(F.cross_entropy(logits, labels))\n"
        ),
        today="IndexError: Target 3 is out of bounds.",
        also=(
            "RuntimeError: CUDA error: device-side assert triggered",
            "torch.AcceleratorError: CUDA error: device-side assert triggered",
            "RuntimeError: cuda runtime error (59) : device-side assert triggered",
            "../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: "
            "block: [0,0,0], thread: [0,0,0] Assertion `t >= 0 && t < n_classes` failed.",
            "../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [0,0,0], "
            'thread: [0,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && "index out of '
            'bounds"` failed.',
            "../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: "
            "block: [0,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
            "IndexError: index 5 is out of bounds for dimension 0 with size 3",
            "IndexError: index out of range in self",
        ),
        notes_differ=N_(
            "A shape mismatch is rarely the cause: shapes are checked on the CPU before a kernel "
            "starts and raise a readable error even on CUDA. The assert is a value out of range "
            "(a label, an index, a token id), which the notes' cause does not mention."
        ),
    ),
    Entry(
        key="gather-invalid-index",
        kind="shapes",
        title=N_("gather (or scatter) with an index past the end of the dimension"),
        where="002:1047",
        notes_message="RuntimeError: Invalid index in gather",
        notes_cause="",
        notes_gloss=N_(
            "The notes quote the message only; the call above it (002:1041) remarks that "
            "input.size(1) - 1 = 2, so the index 3 is out of range, and 002:1057 adds that the "
            "index values must lie between 0 and input.size(1) - 1."
        ),
        cause=N_(
            "Every value of gather's index picks an element along dim, so it must lie in "
            "0 .. input.size(dim) - 1 (negative values are not wrapped either). scatter_ "
            "checks its index the same way."
        ),
        fix=N_(
            "Keep the index inside the dimension: clamp it, fix the off-by-one that produced it, "
            "or gather along the dimension you meant. On CUDA the same mistake is a device-side "
            "assert; run it on the CPU to read which index was wrong."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "x = torch.tensor([[1, 2, 3], [4, 5, 6]])\n"
            "print(torch.gather(x, 1, torch.tensor([[0, 0], [3, 0]])))  # dim 1 has 0, 1, 2\n"
        ),
        fixed=(
            "import torch\n"
            "x = torch.tensor([[1, 2, 3], [4, 5, 6]])\n"
            "print(torch.gather(x, 1, torch.tensor([[0, 0], [2, 0]])))\n"
        ),
        today="RuntimeError: index 3 is out of bounds for dimension 1 with size 3",
        also=(
            "RuntimeError: Invalid index in gather at "
            "C:\\w\\1\\s\\tmp_conda_3.7_160731\\conda\\conda-bld\\pytorch_1570810122324\\work"
            "\\aten\\src\\TH/generic/THTensorEvenMoreMath.cpp:657",
            "RuntimeError: Invalid index in scatter",
            "/pytorch/aten/src/ATen/native/cuda/ScatterGatherKernel.cu:115: operator(): "
            "block: [0,0,0], thread: [1,0,0] Assertion `idx_dim >= 0 && idx_dim < index_size "
            '&& "index out of bounds"` failed.',
        ),
        notes_differ=N_(
            "The wording is torch 1.3's (the TH library it names is gone). Today the message "
            "says which index, which dimension and its size."
        ),
    ),
    Entry(
        key="batch-of-one",
        kind="shapes",
        title=N_("BatchNorm in training mode on a batch of one"),
        where="000:76",
        notes_message="ValueError: Expected more than 1 value per channel when training",
        notes_cause=(
            "因为对 1x1 的 feature map 做 batchnorm，"
            "如果 batch 为 1 则 1 channel 只有一个数据于是报错。"
            "如果是训练则需要设置高于 1 的 batchsize，同时 dataloader 要 drop last。"
        ),
        notes_gloss=N_(
            "Batch norm over a 1x1 feature map with a batch of 1 leaves one value per channel, "
            "hence the error. For training use a batch size above 1, and let the DataLoader "
            "drop the last (incomplete) batch."
        ),
        cause=N_(
            "In training mode BatchNorm normalises each channel with the mean and variance of "
            "the batch. With one value per channel (batch 1 and no spatial positions) the "
            "variance is 0 and the result meaningless, so torch refuses."
        ),
        fix=N_(
            "Train with batches of at least 2 values per channel (DataLoader(drop_last=True) "
            "drops a last batch of one); for inference call model.eval(), which uses the "
            "running statistics and accepts a batch of one."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "bn = torch.nn.BatchNorm1d(4)  # a new module is in training mode\n"
            "x = torch.arange(4.0).reshape(1, 4)  # a batch of one sample\n"
            "print(bn(x))\n"
        ),
        fixed=(
            "import torch\n"
            "bn = torch.nn.BatchNorm1d(4)\n"
            "x = torch.arange(8.0).reshape(2, 4)  # training: two samples per batch\n"
            "print(bn(x))\n"
            "bn.eval()  # inference: running statistics, a batch of one is fine\n"
            "print(bn(x[:1]))\n"
        ),
        today=(
            "ValueError: Expected more than 1 value per channel when training, "
            "got input size torch.Size([1, 4])"
        ),
        lesson=(
            "batchnorm?batchnorm.notes_tab=A+batch+of+one",
            N_("BatchNorm explorer: a batch of one, and drop_last"),
        ),
    ),
    Entry(
        key="quantized-cpu",
        kind="shapes",
        title=N_("A float operation on a quantized tensor"),
        where="000:76",
        notes_message=(
            "RuntimeError: Could not run 'aten::thnn_conv2d_forward' with arguments from the "
            "'QuantizedCPU' backend."
        ),
        notes_cause=(
            "QAT 量化时经常出现的问题，因为 QAT 时是 fp32 伪量化训练，"
            "而转换后推理时是 int8 真量化，"
            "所以可能是量化推理引擎不支持该算子，或者是这个算子 QAT 时是没有被量化的"
            "（训练时设置了 module.qconfig = None），应该在运算前经过 DeQuantStub"
        ),
        notes_gloss=N_(
            "Common with quantization-aware training: QAT trains in fp32 with fake "
            "quantization, while the converted model runs real int8. Either the quantized "
            "engine lacks the operator, or the module was not quantized during QAT (its qconfig "
            "was set to None); put a DeQuantStub before it."
        ),
        cause=N_(
            "After conversion the activations are quantized tensors (QuantizedCPU). A module "
            "left in float (qconfig = None, or an op the quantized engine lacks) receives one "
            "and calls a float kernel, which has no QuantizedCPU version."
        ),
        fix=N_(
            "Dequantize before the float part: a DeQuantStub in front of it in the model "
            "(convert turns it into a DeQuantize), or x.dequantize() by hand; put a QuantStub "
            "after it if quantized layers follow."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "x = torch.linspace(0, 1, 16).reshape(1, 1, 4, 4)\n"
            "q = torch.quantize_per_tensor(x, scale=0.1, zero_point=0, dtype=torch.quint8)\n"
            "conv = torch.nn.Conv2d(1, 2, 3, bias=False)  # a float layer left unquantized\n"
            "print(conv(q).shape)\n"
        ),
        fixed=(
            "import torch\n"
            "x = torch.linspace(0, 1, 16).reshape(1, 1, 4, 4)\n"
            "q = torch.quantize_per_tensor(x, scale=0.1, zero_point=0, dtype=torch.quint8)\n"
            "conv = torch.nn.Conv2d(1, 2, 3, bias=False)\n"
            "print(conv(q.dequantize()).shape)  # what DeQuantStub does after convert\n"
        ),
        today=(
            "NotImplementedError: Could not run 'aten::_slow_conv2d_forward' with arguments "
            "from the 'QuantizedCPU' backend. This could be because the operator doesn't exist "
            "for this backend, or was omitted during the selective/custom build process (if "
            "using custom build). If you are a Facebook employee using PyTorch on mobile, please "
            "visit https://fburl.com/ptmfixes for possible resolutions. "
            "'aten::_slow_conv2d_forward' is only available for these backends: [CPU, CUDA, "
            "Meta, BackendSelect, Python, FuncTorchDynamicLayerBackMode, Functionalize, "
            "Conjugate, Negative, ZeroTensor, ADInplaceOrView, AutogradOther, AutogradCPU, "
            "AutogradCUDA, AutogradHIP, AutogradXLA, AutogradMPS, AutogradIPU, AutogradXPU, "
            "AutogradHPU, AutogradVE, AutogradLazy, AutogradMTIA, AutogradMAIA, "
            "AutogradPrivateUse1, AutogradPrivateUse2, AutogradPrivateUse3, AutogradMeta, "
            "AutogradNestedTensor, Tracer, AutocastCPU, AutocastMTIA, AutocastMAIA, AutocastXPU, "
            "AutocastMPS, AutocastCUDA, FuncTorchBatched, BatchedNestedTensor, FuncTorchVmapMode, "
            "Batched, VmapMode, FuncTorchGradWrapper, PythonTLSSnapshot, "
            "FuncTorchDynamicLayerFrontMode, PreDispatch, PythonDispatcher]."
        ),
        also=(
            "NotImplementedError: Could not run 'aten::_softmax.out' with arguments from the "
            "'QuantizedCPU' backend.",
            "NotImplementedError: Could not run 'aten::add.out' with arguments from the "
            "'QuantizedCPU' backend.",
        ),
        notes_differ=N_(
            "The convolution's kernel is now aten::_slow_conv2d_forward (thnn_conv2d_forward was "
            "renamed) and the error is a NotImplementedError; any float op (softmax, add) on a "
            "quantized tensor fails the same way. torch now warns that quantize_per_tensor and "
            "the quantized dtypes are deprecated, in favour of the torchao library."
        ),
    ),
    Entry(
        key="bool-negation",
        kind="shapes",
        title=N_("Minus on a bool mask"),
        where="002:40",
        notes_message=(
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        ),
        notes_cause="use the `~` or `logical_not()` operator instead.",
        notes_gloss=N_(
            "The notes keep only the end of the message, which is its fix: use ~ or logical_not()."
        ),
        cause=N_(
            "A comparison returns a bool tensor. -mask (and 1 - mask) worked on the uint8 masks "
            "of torch before 1.2; on bool it is refused, because minus is arithmetic and the "
            "intent is a logical not."
        ),
        fix=N_(
            "Invert a mask with ~mask or mask.logical_not(); for the difference of two masks "
            "use ^ (logical_xor) or a & ~b."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "x = torch.tensor([-2.0, 3.0, -1.0, 4.0])\n"
            "positive = x > 0\n"
            "print(x[-positive])\n"
        ),
        fixed=(
            "import torch\n"
            "x = torch.tensor([-2.0, 3.0, -1.0, 4.0])\n"
            "positive = x > 0\n"
            "print(x[~positive], x[positive.logical_not()])\n"
        ),
        today=(
            "NotImplementedError: Negation, the `-` operator, on a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        ),
        also=(
            "RuntimeError: Negation, the `-` operator, on a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
            "NotImplementedError: Subtraction, the `-` operator, with a bool tensor is not "
            "supported. If you are trying to invert a mask, use the `~` or `logical_not()` "
            "operator instead.",
            "NotImplementedError: Subtraction, the `-` operator, with two bool tensors is not "
            "supported. Use the `^` or `logical_xor()` operator instead.",
        ),
        notes_differ=N_(
            "The error is a NotImplementedError today (a RuntimeError in older versions)."
        ),
    ),
    Entry(
        key="cat-dimensions",
        kind="shapes",
        title=N_("torch.cat of tensors with different numbers of dimensions"),
        where="002:99",
        notes_message="RuntimeError: Tensors must have same number of dimensions: got 2 and 1",
        notes_cause="",
        notes_gloss=N_(
            "The notes quote the traceback of torch.cat([tmp_c_inds, tmp_b_inds.squeeze(1)]): "
            "one tensor of index pairs from torch.nonzero, shape (n, 1), and one squeezed to "
            "(n,). A few lines on (002:108-110) they squeeze every nonzero result with "
            ".squeeze(1) so the cat works whether it is empty or not."
        ),
        cause=N_(
            "torch.cat joins tensors along an existing dimension, so all must have the same "
            "number of dimensions. torch.nonzero(mask) returns shape (n, 1) for a 1-D mask; "
            "squeezing one result and not the other mixes 2-D and 1-D."
        ),
        fix=N_(
            "Bring them to the same rank first: .squeeze(1) all of them, .unsqueeze() the "
            "smaller one, or use torch.nonzero(mask, as_tuple=True)[0], which is 1-D; "
            "torch.stack if you meant a new dimension."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "a = torch.tensor([3, -1, 4, -1, 5])\n"
            "pos = torch.nonzero(a > 0)  # shape (3, 1)\n"
            "neg = torch.nonzero(a < 0).squeeze(1)  # shape (2,)\n"
            "print(torch.cat([pos, neg]))\n"
        ),
        fixed=(
            "import torch\n"
            "a = torch.tensor([3, -1, 4, -1, 5])\n"
            "pos = torch.nonzero(a > 0).squeeze(1)  # shape (3,)\n"
            "neg = torch.nonzero(a < 0).squeeze(1)  # shape (2,)\n"
            "print(torch.cat([pos, neg]))\n"
        ),
        today="RuntimeError: Tensors must have same number of dimensions: got 2 and 1",
        also=(
            "RuntimeError: invalid argument 0: Tensors must have same number of dimensions: "
            "got 1 and 2 at C:\\Users\\builder\\AppData\\Local\\Temp\\pip-req-build-e5c8dddg"
            "\\aten\\src\\TH/generic/THTensor.cpp:603",
        ),
        notes_differ=N_(
            "One exception the notes stumbled on (002:101) still holds: an empty 1-D tensor of "
            "shape (0,) is skipped by torch.cat, so cat of (0, 1) and (0,) works while (0, 1) "
            "and (2,) fails. Do not rely on it; squeeze both."
        ),
        also_notes=(
            (
                "002:136",
                "RuntimeError: invalid argument 0: Tensors must have same number of dimensions: "
                "got 1 and 2",
            ),
        ),
    ),
    Entry(
        key="one-element-scalar",
        kind="shapes",
        title=N_(".item() or float() on a tensor that is not one element"),
        where="002:148",
        notes_message="ValueError: only one element tensors can be converted to Python scalars",
        notes_cause="",
        notes_gloss=N_(
            "The notes quote the message without a cause; the lines before it (002:138-147) "
            "show the tensor: torch.Size([0, 1]), numel() 0, and tmp_2_inds.item() raising."
        ),
        cause=N_(
            ".item(), float(), int() and bool() turn a tensor into one Python number, so the "
            "tensor must hold exactly one element (any shape: (), (1,), (1, 1)). An empty "
            "result, such as torch.nonzero of a mask with no True, has none."
        ),
        fix=N_(
            "Check t.numel() == 1 first (or handle the empty case), reduce to one value "
            "(.sum(), .max()), or convert all values with .tolist()."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "scores = torch.tensor([0.2, 0.1, 0.4])\n"
            "hits = torch.nonzero(scores > 0.5)  # shape (0, 1): nothing passes\n"
            "print(hits.item())\n"
        ),
        fixed=(
            "import torch\n"
            "scores = torch.tensor([0.2, 0.1, 0.4])\n"
            "hits = torch.nonzero(scores > 0.5)\n"
            "print(hits.item() if hits.numel() == 1 else hits.flatten().tolist())\n"
        ),
        today="RuntimeError: a Tensor with 0 elements cannot be converted to Scalar",
        also=(
            "ValueError: only one element tensors can be converted to Python scalars",
            "RuntimeError: a Tensor with 2 elements cannot be converted to Scalar",
        ),
        notes_differ=N_(
            ".item() now raises a RuntimeError that says how many elements there are; the "
            "notes' ValueError is what float(), int(), math functions and torch.tensor([...]) "
            "of several-element tensors still raise."
        ),
    ),
    Entry(
        key="empty-reduction",
        kind="shapes",
        title=N_("max() of an empty tensor"),
        where="002:548",
        notes_message=(
            "RuntimeError: cannot perform reduction function max on tensor with no elements "
            "because the operation does not have an identity"
        ),
        notes_cause="",
        notes_gloss=N_(
            "The notes quote the message; the lines around it (002:542-554) say only non-empty "
            "tensors can take torch.max(), so check first: if tmp_a.numel(): ..."
        ),
        cause=N_(
            "max, min, argmax and amax have no value to return for zero elements (unlike sum, "
            "whose empty result is 0). Reducing over a dimension of size 0 is refused."
        ),
        fix=N_(
            "Check t.numel() (or t.shape[dim]) before reducing and handle the empty case; or "
            "pass a default, e.g. torch.cat([t, torch.tensor([fill])]).max()."
        ),
        run=LIVE,
        broken=(
            "import torch\ntmp_a = torch.tensor([])\nmax_tmp_a, argmax_tmp_a = tmp_a.max(dim=0)\n"
        ),
        fixed=(
            "import torch\n"
            "tmp_a = torch.tensor([])\n"
            "if tmp_a.numel():\n"
            "    print(tmp_a.max(dim=0))\n"
            "else:\n"
            '    print("this tensor is empty")\n'
        ),
        today="IndexError: max(): Expected reduction dim 0 to have non-zero size.",
        also=(
            "RuntimeError: max(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument.",
            "IndexError: argmax(): Expected reduction dim to be specified for input.numel() == 0.",
        ),
        notes_differ=N_(
            "The wording changed: with a dim it is now an IndexError naming the dimension of "
            "size 0, without one a RuntimeError asking for a dim."
        ),
    ),
    Entry(
        key="zero-dim-cat",
        kind="shapes",
        title=N_("torch.cat of a 0-d tensor"),
        where="002:589",
        notes_message=(
            "RuntimeError: zero-dimensional tensor (at position 2) cannot be concatenated"
        ),
        notes_cause="",
        notes_gloss=N_(
            "The notes quote the message; the line before the call (002:581) says a tensor of "
            "shape torch.Size([]) cannot be concatenated with other tensors."
        ),
        cause=N_(
            "A 0-d tensor (shape torch.Size([]), what t[0], t.sum() or torch.tensor(7) give) has "
            "no dimension to concatenate along."
        ),
        fix=N_(
            "Give it one dimension first: t.reshape(1), t.unsqueeze(0) or "
            "torch.atleast_1d(t); or collect scalars with torch.stack."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "tmp_a = torch.tensor([1.0, 2.0])\n"
            "tmp_b = tmp_a.sum()  # 0-d: torch.Size([])\n"
            "print(torch.cat((tmp_a, tmp_a, tmp_b)))\n"
        ),
        fixed=(
            "import torch\n"
            "tmp_a = torch.tensor([1.0, 2.0])\n"
            "tmp_b = tmp_a.sum()\n"
            "print(torch.cat((tmp_a, tmp_a, tmp_b.reshape(1))))\n"
        ),
        today="RuntimeError: zero-dimensional tensor (at position 2) cannot be concatenated",
    ),
    Entry(
        key="too-many-indices",
        kind="shapes",
        title=N_("A mask or index applied to a 0-d tensor"),
        where="002:645",
        notes_message="IndexError: too many indices for tensor of dimension 0",
        notes_cause="",
        notes_gloss=N_(
            "The notes quote the message here; 002:596 explains it: tmp_sub_a_1[mask_sub_a_2] "
            "fails when tmp_sub_a_1 has shape torch.Size([]) and the mask torch.Size([1]); one "
            "way out is torch.tensor([tmp_sub_a_1])."
        ),
        cause=N_(
            "t[0] of a 1-D tensor is 0-d: it has no dimension left to index. A mask or an index "
            "of one dimension is one index too many for it."
        ),
        fix=N_(
            "Keep the dimension when you take the element (t[0:1] or t[[0]] instead of t[0]), "
            "or give the 0-d tensor one with .reshape(1) before indexing it."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "tmp_a = torch.tensor([5, 3, 8])\n"
            "tmp_sub_a_1 = tmp_a[0]  # torch.Size([])\n"
            "mask = tmp_a[tmp_a == 5] > 4  # torch.Size([1])\n"
            "print(tmp_sub_a_1[mask])\n"
        ),
        fixed=(
            "import torch\n"
            "tmp_a = torch.tensor([5, 3, 8])\n"
            "tmp_sub_a_1 = tmp_a[0:1]  # torch.Size([1]): the dimension is kept\n"
            "mask = tmp_a[tmp_a == 5] > 4\n"
            "print(tmp_sub_a_1[mask])\n"
        ),
        today="IndexError: too many indices for tensor of dimension 0",
        also=("IndexError: too many indices for tensor of dimension 1",),
        also_notes=(
            ("002:594", "导致IndexError: too many indices for tensor of dimension 0错误的情形有"),
            (
                "002:618",
                "建议使用tmp_a[inds_a] > thr 而不是tmp_a[mask_a] > thr, "
                "以免报错IndexError: too many indices for tensor of dimension 0",
            ),
        ),
    ),
    Entry(
        key="zero-dim-index",
        kind="shapes",
        title=N_("[0] on a 0-d tensor such as a loss"),
        where="004:99",
        notes_message=(
            "IndexError: invalid index of a 0-dim tensor. Use tensor.item() to convert a 0-dim "
            "tensor to a Python number"
        ),
        notes_cause="loss.cpu().data[0]",
        notes_gloss=N_(
            "The notes show loss.cpu().data[0], the way a loss was read before torch 0.4, "
            "raising this; the lines after it read the loss with .item()."
        ),
        cause=N_(
            "Since torch 0.4 a reduction such as a loss is a 0-d tensor (shape torch.Size([])), "
            "not a tensor of one element, and a 0-d tensor has no dimension to index with [0]."
        ),
        fix=N_("Read the number with loss.item(); keep the tensor as it is to compute with it."),
        run=LIVE,
        broken=(
            "import torch\n"
            "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
            "loss = (w * w).sum()\n"
            "print(loss.cpu().data[0])\n"
        ),
        fixed=(
            "import torch\n"
            "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
            "loss = (w * w).sum()\n"
            "print(loss.cpu().item())\n"
        ),
        today=(
            "IndexError: invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
            "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
        ),
        notes_differ=N_(
            "The message now also names tensor.item<T>() for C++; the cause and the fix are "
            "the same."
        ),
    ),
    Entry(
        key="negative-strides",
        kind="shapes",
        title=N_("torch.from_numpy of a flipped NumPy array"),
        where="004:93",
        notes_message="",
        notes_cause=(
            "tensor = torch.from_numpy(ndarray.copy()).float() # If ndarray has negative stride."
        ),
        notes_gloss=N_(
            "The notes give only the fix: copy the array first if it has a negative stride."
        ),
        cause=N_(
            "A reversed NumPy view (a[::-1], np.flip, an image's BGR-to-RGB [..., ::-1]) walks "
            "memory backwards: its stride is negative. Tensors cannot have negative strides, and "
            "torch.from_numpy shares memory, so it cannot convert such a view without a copy; "
            "torch.tensor and torch.as_tensor refuse it too."
        ),
        fix=N_(
            "Copy it into a forward layout first: a.copy() or np.ascontiguousarray(a); or "
            "convert the unflipped array and flip the tensor with torch.flip."
        ),
        run=LIVE,
        broken=(
            "import numpy as np\n"
            "import torch\n"
            "image = np.arange(12, dtype=np.float32).reshape(3, 4)\n"
            "mirrored = image[:, ::-1]  # a view with a negative stride\n"
            "print(torch.from_numpy(mirrored))\n"
        ),
        fixed=(
            "import numpy as np\n"
            "import torch\n"
            "image = np.arange(12, dtype=np.float32).reshape(3, 4)\n"
            "mirrored = image[:, ::-1]\n"
            "print(torch.from_numpy(mirrored.copy()))\n"
        ),
        today=(
            "ValueError: At least one stride in the given numpy array is negative, and tensors "
            "with negative strides are not currently supported. (You can probably work around "
            "this by making a copy of your array  with array.copy().)"
        ),
    ),
    Entry(
        key="view-stride",
        kind="shapes",
        title=N_("view() of a transposed (non-contiguous) tensor"),
        where="004:132",
        notes_message="view size is not compatible with input tensor's size",
        notes_cause="",
        notes_gloss=N_(
            "The notes say this view fails with the exception; 004:119 explains that view only "
            "works on contiguous tensors, and transpose or permute make a tensor non-contiguous."
        ),
        cause=N_(
            "view() reinterprets the same memory with a new shape, which is possible only when "
            "the new dimensions can be expressed with strides of the old layout. After "
            "transpose/permute/t() the elements are no longer in row-major order, so merging "
            "the swapped dimensions needs a copy, which view never makes."
        ),
        fix=N_(
            "Use reshape(), which views when it can and copies when it must, or call "
            ".contiguous() before view()."
        ),
        run=LIVE,
        broken=(
            "import torch\n"
            "tensor = torch.arange(24).reshape(6, 4)\n"
            "tensor = torch.transpose(tensor, 1, 0)  # (4, 6), not contiguous\n"
            "print(tensor.view(6, -1))\n"
        ),
        fixed=(
            "import torch\n"
            "tensor = torch.arange(24).reshape(6, 4)\n"
            "tensor = torch.transpose(tensor, 1, 0)\n"
            "print(tensor.reshape(6, -1).shape, tensor.contiguous().view(6, -1).shape)\n"
        ),
        today=(
            "RuntimeError: view size is not compatible with input tensor's size and stride (at "
            "least one dimension spans across two contiguous subspaces). Use .reshape(...) "
            "instead."
        ),
        notes_differ=N_(
            "The notes' own lines do not raise: 004:131 rebinds tensor to the result of "
            "torch.reshape, a contiguous copy, so the view on 004:132 succeeds. The view fails "
            "only when it is called on the transposed tensor itself, as here."
        ),
    ),
    Entry(
        key="from-array",
        kind="shapes",
        title=N_("torch.from_array does not exist"),
        where="000:39",
        notes_message="",
        notes_cause="# 3. 用 numpy 预处理，最后转成 Tensor\\ntorch.from_array(a)",
        notes_gloss=N_(
            "3. Preprocess with NumPy and turn the result into a tensor at the end: "
            "torch.from_array(a)."
        ),
        cause=N_(
            "torch has no from_array. The NumPy-to-tensor functions are torch.from_numpy "
            "(shares the array's memory), torch.as_tensor (shares when it can) and torch.tensor "
            "(always copies). The name is easy to mix up with PIL's Image.fromarray."
        ),
        fix=N_("Use torch.from_numpy(a), or torch.as_tensor(a) to accept lists and arrays alike."),
        run=LIVE,
        broken=(
            "import numpy as np\n"
            "import torch\n"
            "a = np.zeros((2, 3), dtype=np.float32)\n"
            "print(torch.from_array(a))\n"
        ),
        fixed=(
            "import numpy as np\n"
            "import torch\n"
            "a = np.zeros((2, 3), dtype=np.float32)\n"
            "print(torch.from_numpy(a), torch.as_tensor(a).dtype)\n"
        ),
        today="AttributeError: module 'torch' has no attribute 'from_array'",
        also=("AttributeError: module 'torch' has no attribute 'fromarray'",),
        notes_differ=N_(
            "The notes' code is wrong: torch.from_array never existed; the function is "
            "torch.from_numpy."
        ),
    ),
)
