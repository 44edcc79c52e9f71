"""Matcher corpus for the data loading and the distributed entries.

``CASES`` = (expected entry key, how to run, program). Each program makes the entry's mistake
another way than the entry's own snippet: other datasets, worker counts, signals and exception
classes in the workers, other sizes and ways of mapping memory, other recursive functions, other
models under DDP, another world size and collective on rank 0 only. Worker pids, parameter
names and indices, gloo's source lines and timeouts differ from the entry's text. Every program
runs as-is on a CPU and raises (a subprocess one exits with an error) within a few seconds: the
distributed ones use gloo on the loopback address with a port the kernel hands out and a short
process-group timeout.
"""

from __future__ import annotations

CASES: tuple[tuple[str, str, str], ...] = (
    # -- data: a worker killed or failing, errno 12, deep recursion ---------------------------
    (
        "worker-killed",
        "subprocess",
        "import os\n"
        "import signal\n"
        "import time\n"
        "\n"
        "import torch\n"
        "from torch.utils.data import DataLoader, TensorDataset\n"
        "\n"
        "\n"
        "class Crops(TensorDataset):\n"
        "    def __getitem__(self, index):\n"
        "        if index >= 6:\n"
        "            time.sleep(0.5)\n"
        "            os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would\n"
        "        return super().__getitem__(index)\n"
        "\n"
        "\n"
        "images = torch.rand(12, 3, 8, 8)\n"
        "loader = DataLoader(Crops(images), batch_size=3, num_workers=2)\n"
        "for (batch,) in loader:\n"
        "    print(batch.shape)\n",
    ),
    (
        "worker-killed",
        "subprocess",
        "import os\n"
        "import signal\n"
        "import time\n"
        "\n"
        "import numpy as np\n"
        "from torch.utils.data import DataLoader, Dataset\n"
        "\n"
        "\n"
        "class Tokens(Dataset):\n"
        "    def __len__(self):\n"
        "        return 100\n"
        "\n"
        "    def __getitem__(self, index):\n"
        "        time.sleep(0.5)\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "        return np.full(16, index, dtype=np.int64)\n"
        "\n"
        "\n"
        "for epoch in range(3):\n"
        "    for batch in DataLoader(Tokens(), batch_size=10, num_workers=3, shuffle=True):\n"
        "        print(epoch, batch.sum())\n",
    ),
    (
        "worker-exception",
        "subprocess",
        "import torch\n"
        "from torch.utils.data import DataLoader, Dataset\n"
        "\n"
        "\n"
        "class Scaled(Dataset):\n"
        "    def __len__(self):\n"
        "        return 20\n"
        "\n"
        "    def __getitem__(self, index):\n"
        "        if index < 5:\n"
        "            return torch.full((2, 2), float(index))\n"
        "        return torch.full((2, 2), float(index)) * scale\n"
        "\n"
        "\n"
        "for batch in DataLoader(Scaled(), batch_size=5, num_workers=2):\n"
        "    print(batch.mean())\n",
    ),
    (
        "worker-exception",
        "subprocess",
        "from torch.utils.data import DataLoader, Dataset\n"
        "\n"
        "\n"
        "class Labelled(Dataset):\n"
        "    labels = {'cat': 0, 'dog': 1}\n"
        "\n"
        "    def __init__(self):\n"
        "        self.names = ['cat', 'dog', 'bird', 'cat']\n"
        "\n"
        "    def __len__(self):\n"
        "        return len(self.names)\n"
        "\n"
        "    def __getitem__(self, index):\n"
        "        return self.labels[self.names[index]]\n"
        "\n"
        "\n"
        "for batch in DataLoader(Labelled(), batch_size=4, num_workers=1):\n"
        "    print(batch)\n",
    ),
    (
        "worker-exception",
        "subprocess",
        "import torch\n"
        "from torch.utils.data import DataLoader\n"
        "\n"
        "\n"
        "class Samples(torch.utils.data.Dataset):\n"
        "    def __init__(self, rows):\n"
        "        self.rows = rows\n"
        "\n"
        "    def __len__(self):\n"
        "        return len(self.rows)\n"
        "\n"
        "    def __getitem__(self, index):\n"
        "        return self.rows[index].to_tensor()\n"
        "\n"
        "\n"
        "rows = [torch.arange(4) for _ in range(8)]\n"
        "for batch in DataLoader(Samples(rows), batch_size=2, num_workers=2):\n"
        "    print(batch)\n",
    ),
    (
        "cannot-allocate-memory",
        "subprocess",
        "import mmap\n"
        "import os\n"
        "import resource\n"
        "import tempfile\n"
        "\n"
        "_, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
        "resource.setrlimit(resource.RLIMIT_AS, (512 * 2**20, hard))\n"
        "with tempfile.TemporaryDirectory() as folder:\n"
        "    path = os.path.join(folder, 'shard-00003.bin')\n"
        "    with open(path, 'wb') as shard:\n"
        "        shard.truncate(3 * 2**30)  # 3 GiB of samples, sparse\n"
        "    with open(path, 'rb') as shard:\n"
        "        samples = mmap.mmap(shard.fileno(), 0, access=mmap.ACCESS_READ)\n"
        "        print(len(samples))\n",
    ),
    (
        "cannot-allocate-memory",
        "subprocess",
        "import os\n"
        "import resource\n"
        "import tempfile\n"
        "\n"
        "import numpy as np\n"
        "\n"
        "_, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
        "resource.setrlimit(resource.RLIMIT_AS, (768 * 2**20, hard))\n"
        "with tempfile.TemporaryDirectory() as folder:\n"
        "    path = os.path.join(folder, 'features.f32')\n"
        "    features = np.memmap(path, dtype=np.float32, mode='w+', shape=(500_000, 512))\n"
        "    print(features.shape)\n",
    ),
    (
        "recursion-limit",
        "live",
        "import torch\n"
        "\n"
        "\n"
        "def total(values):\n"
        "    if values.numel() == 0:\n"
        "        return torch.tensor(0.0)\n"
        "    return values[0] + total(values[1:])\n"
        "\n"
        "\n"
        "print(total(torch.linspace(0, 1, 4000)))\n",
    ),
    (
        "recursion-limit",
        "live",
        "def flatten(config, prefix=''):\n"
        "    flat = {}\n"
        "    for key, value in config.items():\n"
        "        if isinstance(value, dict):\n"
        "            flat.update(flatten(value, f'{prefix}{key}.'))\n"
        "        else:\n"
        "            flat[prefix + key] = value\n"
        "    return flat\n"
        "\n"
        "\n"
        "config = {'lr': 0.1}\n"
        "for level in range(3000):\n"
        "    config = {f'block{level}': config}\n"
        "print(len(flatten(config)))\n",
    ),
    # -- distributed: DDP's reducer, a collective on rank 0 only -------------------------
    (
        "mark-ready-once",
        "subprocess",
        "import socket\n"
        "\n"
        "import torch\n"
        "import torch.distributed as dist\n"
        "from torch import nn\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "from torch.utils.checkpoint import checkpoint\n"
        "\n"
        "\n"
        "class Encoder(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.layer = nn.Sequential(nn.Linear(16, 16), nn.GELU())\n"
        "\n"
        "    def forward(self, x):\n"
        "        for _ in range(3):  # one layer applied three times, each call checkpointed\n"
        "            x = checkpoint(self.layer, x, use_reentrant=True)\n"
        "        return x\n"
        "\n"
        "\n"
        "with socket.socket() as probe:\n"
        "    probe.bind(('127.0.0.1', 0))\n"
        "    port = probe.getsockname()[1]\n"
        "address = f'tcp://127.0.0.1:{port}'\n"
        "dist.init_process_group('gloo', init_method=address, rank=0, world_size=1)\n"
        "model = DDP(Encoder(), find_unused_parameters=True)\n"
        "out = model(torch.randn(8, 16, requires_grad=True))\n"
        "out.mean().backward()\n",
    ),
    (
        "mark-ready-once",
        "subprocess",
        "import os\n"
        "import socket\n"
        "\n"
        "import torch\n"
        "import torch.distributed as dist\n"
        "from torch import nn\n"
        "from torch.nn import functional as F\n"
        "from torch.nn.parallel import DistributedDataParallel\n"
        "from torch.utils.checkpoint import checkpoint\n"
        "\n"
        "\n"
        "class Siamese(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.tower = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten())\n"
        "\n"
        "    def forward(self, left, right):\n"
        "        return (checkpoint(self.tower, left, use_reentrant=True),\n"
        "                checkpoint(self.tower, right, use_reentrant=True))\n"
        "\n"
        "\n"
        "with socket.socket() as probe:\n"
        "    probe.bind(('127.0.0.1', 0))\n"
        "    os.environ['MASTER_PORT'] = str(probe.getsockname()[1])\n"
        "os.environ['MASTER_ADDR'] = '127.0.0.1'\n"
        "dist.init_process_group('gloo', rank=0, world_size=1)\n"
        "model = DistributedDataParallel(Siamese(), find_unused_parameters=True)\n"
        "left = torch.randn(2, 1, 6, 6, requires_grad=True)\n"
        "right = torch.randn(2, 1, 6, 6, requires_grad=True)\n"
        "a, b = model(left, right)\n"
        "(1 - F.cosine_similarity(a, b)).mean().backward()\n",
    ),
    (
        "prior-reduction",
        "subprocess",
        "import os\n"
        "import socket\n"
        "\n"
        "import torch\n"
        "import torch.distributed as dist\n"
        "from torch import nn\n"
        "from torch.nn.parallel import DistributedDataParallel\n"
        "\n"
        "\n"
        "class Classifier(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.backbone = nn.Linear(12, 24)\n"
        "        self.head = nn.Linear(24, 5)\n"
        "        self.aux_head = nn.Linear(24, 5)  # defined for a later experiment, never called\n"
        "\n"
        "    def forward(self, x):\n"
        "        return self.head(torch.tanh(self.backbone(x)))\n"
        "\n"
        "\n"
        "with socket.socket() as probe:\n"
        "    probe.bind(('127.0.0.1', 0))\n"
        "    os.environ['MASTER_PORT'] = str(probe.getsockname()[1])\n"
        "os.environ['MASTER_ADDR'] = '127.0.0.1'\n"
        "dist.init_process_group('gloo', rank=0, world_size=1)\n"
        "model = DistributedDataParallel(Classifier())\n"
        "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\n"
        "for step in range(3):\n"
        "    x, y = torch.randn(16, 12), torch.randint(0, 5, (16,))\n"
        "    loss = nn.functional.cross_entropy(model(x), y)\n"
        "    optimizer.zero_grad()\n"
        "    loss.backward()\n"
        "    optimizer.step()\n",
    ),
    (
        "prior-reduction",
        "subprocess",
        "import os\n"
        "import socket\n"
        "\n"
        "import torch\n"
        "import torch.distributed as dist\n"
        "from torch import nn\n"
        "from torch.nn.parallel import DistributedDataParallel\n"
        "\n"
        "\n"
        "class Detector(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.neck = nn.Linear(6, 6)\n"
        "        self.boxes = nn.Linear(6, 4)\n"
        "        self.scores = nn.Linear(6, 1)\n"
        "\n"
        "    def forward(self, x):\n"
        "        h = self.neck(x)\n"
        "        return {'boxes': self.boxes(h), 'scores': self.scores(h)}\n"
        "\n"
        "\n"
        "with socket.socket() as probe:\n"
        "    probe.bind(('127.0.0.1', 0))\n"
        "    os.environ['MASTER_PORT'] = str(probe.getsockname()[1])\n"
        "os.environ['MASTER_ADDR'] = '127.0.0.1'\n"
        "dist.init_process_group('gloo', rank=0, world_size=1)\n"
        "model = DistributedDataParallel(Detector())\n"
        "for step in range(2):\n"
        "    out = model(torch.randn(3, 6))\n"
        "    out['boxes'].abs().sum().backward()  # the scores head is not trained yet\n",
    ),
    (
        "rank0-all-reduce-deadlock",
        "subprocess",
        "import datetime\n"
        "import multiprocessing\n"
        "import os\n"
        "import socket\n"
        "import time\n"
        "\n"
        "import torch\n"
        "import torch.distributed as dist\n"
        "\n"
        "\n"
        "def worker(local_rank, world_size, port, results):\n"
        "    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))\n"
        "    try:\n"
        "        dist.init_process_group('gloo', rank=local_rank, world_size=world_size,\n"
        "                                timeout=datetime.timedelta(seconds=2))\n"
        "        accuracy = torch.tensor([0.5 + local_rank / 10])\n"
        "        if local_rank == 0:\n"
        "            dist.all_reduce(accuracy, op=dist.ReduceOp.SUM)  # for the log, rank 0 only\n"
        "        else:\n"
        "            time.sleep(0.5)  # the next batch\n"
        "        dist.barrier()\n"
        "        results.put((local_rank, None))\n"
        "    except RuntimeError as error:\n"
        "        results.put((local_rank, error))\n"
        "\n"
        "\n"
        "if __name__ == '__main__':\n"
        "    with socket.socket() as probe:\n"
        "        probe.bind(('127.0.0.1', 0))\n"
        "        port = probe.getsockname()[1]\n"
        "    ctx = multiprocessing.get_context('fork')\n"
        "    results = ctx.Queue()\n"
        "    procs = [ctx.Process(target=worker, args=(r, 3, port, results)) for r in range(3)]\n"
        "    for p in procs:\n"
        "        p.start()\n"
        "    outcome = dict(results.get(timeout=20) for _ in procs)\n"
        "    for p in procs:\n"
        "        p.join()\n"
        "    if outcome[0] is not None:\n"
        "        raise outcome[0]\n",
    ),
    (
        "rank0-all-reduce-deadlock",
        "subprocess",
        "import datetime\n"
        "import os\n"
        "import socket\n"
        "import time\n"
        "\n"
        "import torch\n"
        "import torch.distributed as dist\n"
        "import torch.multiprocessing as mp\n"
        "\n"
        "\n"
        "def run(rank, world_size, port, errors):\n"
        "    os.environ['MASTER_ADDR'] = '127.0.0.1'\n"
        "    os.environ['MASTER_PORT'] = str(port)\n"
        "    try:\n"
        "        dist.init_process_group(backend='gloo', rank=rank, world_size=world_size,\n"
        "                                timeout=datetime.timedelta(milliseconds=2500))\n"
        "        weights = torch.zeros(3, 3)\n"
        "        if rank == 0:\n"
        "            weights += 1\n"
        "            dist.broadcast(weights, src=0)  # only rank 0 calls it\n"
        "        time.sleep(rank)  # rank 1 is busy for a second before the barrier\n"
        "        dist.barrier()\n"
        "    except Exception as exc:\n"
        "        errors.put(f'{type(exc).__name__}: {exc}' if rank == 0 else None)\n"
        "        raise\n"
        "\n"
        "\n"
        "with socket.socket() as probe:\n"
        "    probe.bind(('127.0.0.1', 0))\n"
        "    free_port = probe.getsockname()[1]\n"
        "ctx = mp.get_context('fork')\n"
        "errors = ctx.SimpleQueue()\n"
        "ranks = [ctx.Process(target=run, args=(r, 2, free_port, errors)) for r in range(2)]\n"
        "[p.start() for p in ranks]\n"
        "[p.join(20) for p in ranks]\n"
        "messages = [m for m in (errors.get() for _ in range(2)) if m]\n"
        "raise SystemExit(messages[0])\n",
    ),
)
