"""Matcher corpus for the autograd and the shapes-and-indexing entries.

``CASES`` = (expected entry key, how to run, program). Each program makes the entry's mistake
another way than the entry's own snippet (other shapes, numbers, dtypes, names, operations), so
the message torch prints differs from the entry's text where torch's wording has anything to
vary. Every program runs as-is and raises. ``AMONG_MATCHES`` holds the programs whose message
is another entry's word for word (see there).

The programs that switch gradients off call ``torch.set_grad_enabled(True)`` in a ``finally``:
grad mode belongs to the thread, and a test that runs them on its own thread must get it back.
"""

from __future__ import annotations

CASES: tuple[tuple[str, str, str], ...] = (
    # -- autograd ---------------------------------------------------------------------------
    (
        "backward-twice",
        "live",
        "import torch\n"
        "lin = torch.nn.Linear(3, 3)\n"
        "h = lin(torch.ones(2, 3)).tanh()\n"
        "h.sum().backward()\n"
        "(h * h).mean().backward()  # goes back through tanh and lin a second time\n",
    ),
    (
        "backward-twice",
        "live",
        "import torch\n"
        "x = torch.ones(5, dtype=torch.float64, requires_grad=True)\n"
        "y = x.exp()\n"
        "torch.autograd.grad(y.sum(), x)\n"
        "torch.autograd.grad(y.sum(), x)\n",
    ),
    (
        "non-leaf",
        "live",
        "import torch\n"
        "p = torch.nn.Parameter(torch.ones(2, 2)) * 0.5\n"
        "opt = torch.optim.Adam([p], lr=1e-3)\n",
    ),
    (
        "non-leaf",
        "live",
        "import torch\n"
        "w = torch.randn(5, 2, requires_grad=True).double()\n"
        "opt = torch.optim.SGD([{'params': [w], 'lr': 0.01}])\n",
    ),
    (
        "inplace",
        "live",
        "import torch\n"
        "x = torch.ones(7, requires_grad=True)\n"
        "y = x.exp()\n"
        "y.add_(1)\n"
        "y.sum().backward()\n",
    ),
    (
        "inplace",
        "live",
        "import torch\n"
        "lin = torch.nn.Linear(5, 4).double()\n"
        "h = torch.sigmoid(lin(torch.ones(3, 5, dtype=torch.float64)))\n"
        "torch.relu_(h)\n"
        "h.sum().backward()\n",
    ),
    (
        "inplace",
        "live",
        "import torch\n"
        "w = torch.ones(4, requires_grad=True)\n"
        "a = torch.full((4,), 2.0, requires_grad=True)\n"
        "y = (w * a).sum()\n"
        "with torch.no_grad():\n"
        "    w.add_(1)  # an optimizer step before backward\n"
        "y.backward()\n",
    ),
    (
        "no-grad-fn",
        "live",
        "import torch\n"
        "model = torch.nn.Linear(6, 2)\n"
        "loss = model(torch.ones(3, 6)).detach().pow(2).mean()\n"
        "loss.backward()\n",
    ),
    (
        "no-grad-fn",
        "live",
        "import torch\n"
        "x = torch.linspace(0, 1, 10, requires_grad=True)\n"
        "pred = torch.tensor((x * 3).tolist())  # rebuilt from Python numbers: no graph\n"
        "torch.autograd.grad(pred.sum(), x)\n",
    ),
    (
        "no-grad-fn",
        "live",
        "import torch\n"
        "model = torch.nn.Conv2d(1, 1, 3)\n"
        "with torch.no_grad():\n"
        "    out = model(torch.ones(1, 1, 5, 5))\n"
        "out.mean().backward()\n",
    ),
    (
        "numpy-requires-grad",
        "live",
        "import torch\nmodel = torch.nn.Linear(4, 2)\nprint(model.weight.numpy())\n",
    ),
    (
        "numpy-requires-grad",
        "live",
        "import torch\n"
        "net = torch.nn.Conv2d(3, 4, 1)\n"
        "features = net(torch.ones(2, 3, 5, 5, dtype=torch.float32))\n"
        "print(features.cpu().numpy().shape)\n",
    ),
    # -- shapes and indexing ----------------------------------------------------------------
    (
        "device-side-assert",
        "live",
        "import torch\n"
        "import torch.nn.functional as F\n"
        "logp = F.log_softmax(torch.zeros(6, 5), dim=1)\n"
        "F.nll_loss(logp, torch.tensor([0, 1, 2, 3, 4, 10]))\n",
    ),
    (
        "device-side-assert",
        "live",
        "import torch\n"
        "import torch.nn.functional as F\n"
        "F.cross_entropy(torch.zeros(3, 4), torch.tensor([0, -1, 2]))  # -1 is not ignore_index\n",
    ),
    (
        "device-side-assert",
        "live",
        "import torch\n"
        "import torch.nn.functional as F\n"
        "logits = torch.zeros(2, 5, 4, 4)  # segmentation: 5 classes\n"
        "F.cross_entropy(logits, torch.full((2, 4, 4), 255))  # 255 marks 'ignore' in the data\n",
    ),
    (
        "device-side-assert",
        "live",
        "import torch\n"
        "emb = torch.nn.Embedding(100, 8)\n"
        "emb(torch.tensor([[3, 99, 100]]))  # the vocabulary has ids 0..99\n",
    ),
    (
        "device-side-assert",
        "live",
        "import torch\nx = torch.arange(10.0)\nx[torch.tensor([2, 12])]\n",
    ),
    (
        "gather-invalid-index",
        "live",
        "import torch\n"
        "x = torch.arange(12).reshape(4, 3)\n"
        "x.gather(0, torch.tensor([[7, 0, 0]]))\n",
    ),
    (
        "gather-invalid-index",
        "live",
        "import torch\n"
        "labels = torch.tensor([[5], [0], [1]])\n"
        "torch.zeros(3, 5).scatter_(1, labels, 1.0)  # one-hot with one class too few\n",
    ),
    (
        "batch-of-one",
        "live",
        "import torch\n"
        "head = torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(1), torch.nn.BatchNorm2d(8))\n"
        "head(torch.ones(1, 8, 7, 7))\n",
    ),
    (
        "batch-of-one",
        "live",
        "import torch\n"
        "from torch.utils.data import DataLoader, TensorDataset\n"
        "m = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.BatchNorm1d(16))\n"
        "for (xb,) in DataLoader(TensorDataset(torch.ones(9, 3)), batch_size=4):\n"
        "    m(xb)  # 9 = 4 + 4 + 1: the last batch has one sample\n",
    ),
    (
        "quantized-cpu",
        "live",
        "import torch\n"
        "q = torch.quantize_per_tensor(torch.ones(2, 6), 0.5, 2, torch.quint8)\n"
        "torch.softmax(q, dim=-1)\n",
    ),
    (
        "quantized-cpu",
        "live",
        "import torch\n"
        "q = torch.quantize_per_tensor(torch.ones(3, 4), 0.25, 0, torch.quint8)\n"
        "q + q  # a residual add left as a float op\n",
    ),
    (
        "quantized-cpu",
        "live",
        "import torch\n"
        "q = torch.quantize_per_tensor(torch.ones(1, 1, 8), 0.5, 2, torch.qint8)\n"
        "torch.nn.Conv1d(1, 1, 3, bias=False)(q)\n",
    ),
    (
        "bool-negation",
        "live",
        "import torch\na = torch.tensor([[1, 2], [3, 4]])\nvalid = a == 2\nprint(a[-valid])\n",
    ),
    (
        "bool-negation",
        "live",
        "import torch\nkeep = torch.ones(5, dtype=torch.bool)\ndrop = 1 - keep\n",
    ),
    (
        "cat-dimensions",
        "live",
        "import torch\ntorch.cat([torch.zeros(2, 3, 4), torch.zeros(2, 3)], dim=1)\n",
    ),
    (
        "cat-dimensions",
        "live",
        "import torch\n"
        "features = torch.ones(8, 16)\n"
        "bias = torch.zeros(16)\n"
        "torch.concat([features, bias], dim=0)\n",
    ),
    (
        "one-element-scalar",
        "live",
        "import torch\nprint(float(torch.tensor([0.5, 0.25])))\n",
    ),
    (
        "one-element-scalar",
        "live",
        "import torch\ntorch.zeros(3, 2).item()\n",
    ),
    (
        "one-element-scalar",
        "live",
        "import torch\ntorch.tensor([torch.ones(2), torch.zeros(2)])\n",
    ),
    (
        "empty-reduction",
        "live",
        "import torch\ntorch.zeros(3, 0).min(dim=1)\n",
    ),
    (
        "empty-reduction",
        "live",
        "import torch\nscores = torch.tensor([0.1, 0.2, 0.3])\nscores[scores > 0.9].argmax()\n",
    ),
    (
        "empty-reduction",
        "live",
        "import torch\ntorch.empty(0, dtype=torch.float64).max()\n",
    ),
    (
        "zero-dim-cat",
        "live",
        "import torch\ntorch.cat([torch.tensor(3.0), torch.zeros(2)])\n",
    ),
    (
        "zero-dim-cat",
        "live",
        "import torch\n"
        "x = torch.ones(4)\n"
        "losses = [x.mean(), x.sum(), (x * x).mean()]\n"
        "torch.cat(losses)\n",
    ),
    (
        "too-many-indices",
        "live",
        "import torch\nt = torch.tensor(7)\nt[torch.tensor([0])]\n",
    ),
    (
        "too-many-indices",
        "live",
        "import torch\ntorch.zeros(4)[1, 2]\n",
    ),
    (
        "zero-dim-index",
        "live",
        "import torch\n"
        "import torch.nn.functional as F\n"
        "loss = F.mse_loss(torch.ones(3), torch.zeros(3))\n"
        "print(loss[0])\n",
    ),
    (
        "zero-dim-index",
        "live",
        "import torch\n"
        "acc = torch.tensor([0.5, 0.75, 1.0], dtype=torch.float64).mean()\n"
        "print(acc[0])\n",
    ),
    (
        "negative-strides",
        "live",
        "import numpy as np\nimport torch\ntorch.from_numpy(np.flip(np.arange(6)))\n",
    ),
    (
        "negative-strides",
        "live",
        "import numpy as np\n"
        "import torch\n"
        "bgr = np.zeros((4, 4, 3), dtype=np.uint8)\n"
        "torch.as_tensor(bgr[..., ::-1])  # BGR to RGB\n",
    ),
    (
        "view-stride",
        "live",
        "import torch\ntorch.rand(2, 3, 4).permute(0, 2, 1).view(2, -1)\n",
    ),
    (
        "view-stride",
        "live",
        "import torch\ntorch.ones(4, 5, dtype=torch.float16).t().view(-1)\n",
    ),
    (
        "from-array",
        "live",
        "import numpy as np\nimport torch as th\nx = th.from_array(np.ones(3, dtype=np.int64))\n",
    ),
    (
        "from-array",
        "live",
        "import numpy as np\n"
        "import torch\n"
        "img = np.zeros((8, 8, 3), dtype=np.uint8)\n"
        "t = torch.fromarray(img)  # PIL's Image.fromarray, not a torch function\n",
    ),
)

#: Programs whose message is the same as another entry's, word for word: the matcher cannot tell
#: them apart, so the expected entry is among the matches (the page lists it under the best one)
#: but not necessarily first. Setting gradients off for the thread and cutting the graph in the
#: code both end in "element 0 of tensors does not require grad and does not have a grad_fn".
AMONG_MATCHES: tuple[tuple[str, str, str], ...] = (
    (
        "grad-disabled-globally",
        "live",
        "import torch\n"
        "torch.set_grad_enabled(False)\n"
        "try:\n"
        "    layers = [torch.nn.Linear(3, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)]\n"
        "    net = torch.nn.Sequential(*layers)\n"
        "    loss = torch.nn.functional.mse_loss(net(torch.ones(5, 3)), torch.zeros(5, 1))\n"
        "    loss.backward()\n"
        "finally:\n"
        "    torch.set_grad_enabled(True)\n",
    ),
    (
        "grad-disabled-globally",
        "live",
        "import torch\n"
        "torch.set_grad_enabled(False)\n"
        "try:\n"
        "    w = torch.zeros(2, 2, dtype=torch.float64, requires_grad=True)\n"
        "    torch.autograd.grad((w + 1).sum(), w)\n"
        "finally:\n"
        "    torch.set_grad_enabled(True)\n",
    ),
)
