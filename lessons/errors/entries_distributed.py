"""Distributed errors: DDP's reducer, collectives out of step, Horovod, DataParallel, GPU 0."""

from __future__ import annotations

from core.text import N_
from lessons.errors.entry import DOCUMENTED, SUBPROCESS, Entry

ENTRIES: tuple[Entry, ...] = (
    Entry(
        key="mark-ready-once",
        kind="distributed",
        title=N_("DDP: a variable marked ready twice"),
        where="000:76",
        notes_message="RuntimeError: Expected to mark a variable ready only once.",
        notes_cause=(
            "原因不明，建议不要用 DDP 做太复杂的自定义模型的分布式训练，改用 Deepspeed 或许会有用"
        ),
        notes_gloss=N_(
            "Seen only with some particular models under DDP, cause unknown; the notes advise "
            "against DDP for complex custom models and suggest trying DeepSpeed."
        ),
        cause=N_(
            "DDP's reducer expects each parameter's gradient once per backward pass and starts "
            "its all-reduce when it arrives. A second arrival in the same iteration is this "
            "error. It happens when the same parameters get gradients from several backward "
            "passes inside one: reentrant activation checkpointing "
            "(checkpoint(..., use_reentrant=True)) of a module that forward uses more than once, "
            "or checkpointing with find_unused_parameters=True; or a parameter used outside "
            "forward, shared by two forward/backward passes at once."
        ),
        fix=N_(
            "Checkpoint with use_reentrant=False, the form PyTorch recommends today: its "
            "recomputation runs inside the one backward pass. Or, when the graph is the same "
            "every iteration, DistributedDataParallel(..., static_graph=True). Drop "
            "find_unused_parameters=True where every parameter gets a gradient."
        ),
        run=SUBPROCESS,
        broken=(
            "import os\n"
            "import socket\n"
            "\n"
            "import torch\n"
            "import torch.distributed as dist\n"
            "from torch import nn\n"
            "from torch.nn.parallel import DistributedDataParallel\n"
            "from torch.utils.checkpoint import checkpoint\n"
            "\n"
            "\n"
            "class Twice(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.block = nn.Linear(4, 4)\n"
            "\n"
            "    def forward(self, x):\n"
            "        # One block, checkpointed twice: two reentrant backward passes reach it.\n"
            "        x = checkpoint(self.block, x, use_reentrant=True)\n"
            "        return checkpoint(self.block, x, use_reentrant=True)\n"
            "\n"
            "\n"
            "with socket.socket() as probe:\n"
            "    probe.bind(('127.0.0.1', 0))\n"
            "    os.environ['MASTER_PORT'] = str(probe.getsockname()[1])\n"
            "os.environ['MASTER_ADDR'] = '127.0.0.1'\n"
            "dist.init_process_group('gloo', rank=0, world_size=1)\n"
            "torch.manual_seed(0)\n"
            "model = DistributedDataParallel(Twice(), find_unused_parameters=True)\n"
            "loss = model(torch.randn(3, 4, requires_grad=True)).pow(2).sum()\n"
            "loss.backward()\n"
            "print('loss', loss.item(), 'grad', model.module.block.weight.grad.norm().item())\n"
            "dist.destroy_process_group()\n"
        ),
        fixed=(
            "import os\n"
            "import socket\n"
            "\n"
            "import torch\n"
            "import torch.distributed as dist\n"
            "from torch import nn\n"
            "from torch.nn.parallel import DistributedDataParallel\n"
            "from torch.utils.checkpoint import checkpoint\n"
            "\n"
            "\n"
            "class Twice(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.block = nn.Linear(4, 4)\n"
            "\n"
            "    def forward(self, x):\n"
            "        # The same block, checkpointed twice, without a reentrant backward pass.\n"
            "        x = checkpoint(self.block, x, use_reentrant=False)\n"
            "        return checkpoint(self.block, x, use_reentrant=False)\n"
            "\n"
            "\n"
            "with socket.socket() as probe:\n"
            "    probe.bind(('127.0.0.1', 0))\n"
            "    os.environ['MASTER_PORT'] = str(probe.getsockname()[1])\n"
            "os.environ['MASTER_ADDR'] = '127.0.0.1'\n"
            "dist.init_process_group('gloo', rank=0, world_size=1)\n"
            "torch.manual_seed(0)\n"
            "model = DistributedDataParallel(Twice(), find_unused_parameters=True)\n"
            "loss = model(torch.randn(3, 4, requires_grad=True)).pow(2).sum()\n"
            "loss.backward()\n"
            "print('loss', loss.item(), 'grad', model.module.block.weight.grad.norm().item())\n"
            "dist.destroy_process_group()\n"
        ),
        today=(
            "RuntimeError: Expected to mark a variable ready only once. This error is caused by "
            "one of the following reasons: 1) Use of a module parameter outside the `forward` "
            "function. Please make sure model parameters are not shared across multiple "
            "concurrent forward-backward passes. or try to use _set_static_graph() as a "
            "workaround if this module graph does not change during training loop.2) Reused "
            "parameters in multiple reentrant backward passes. For example, if you use multiple "
            "`checkpoint` functions to wrap the same part of your model, it would result in the "
            "same set of parameters been used by different reentrant backward passes multiple "
            "times, and hence marking a variable ready multiple times. DDP does not support such "
            "use cases in default. You can try to use _set_static_graph() as a workaround if "
            "your module graph does not change over iterations."
        ),
        notes_differ=N_(
            "The cause is not unknown: today's message names both usual ones, a parameter used "
            "outside forward and parameters reused by reentrant backward passes (checkpointing). "
            "Non-reentrant checkpointing or static_graph=True fixes it within DDP; DeepSpeed is "
            "not needed."
        ),
        also=(
            # The message's last line, which a traceback of one rank ends with.
            "Parameter at index 1 with name block.bias has been marked as ready twice. This means "
            "that multiple autograd engine  hooks have fired for this particular parameter during "
            "this iteration.",
        ),
    ),
    Entry(
        key="prior-reduction",
        kind="distributed",
        title=N_("DDP: reduction of the prior iteration not finished"),
        where="000:76",
        notes_message=(
            "RuntimeError: RuntimeErrorExpected to have finished reduction in the prior "
            "iteration before starting a new one."
        ),
        notes_cause=(
            "分布式训练时模型前向输出中存在没有用于计算的输出导致，一种内在的使用缺陷，"
            "需要确保模型输出全部在 loss 计算中用上"
        ),
        notes_gloss=N_(
            "In distributed training, an output of the model's forward is not used to compute "
            "the loss; an inherent limitation: make sure every output of the model takes part "
            "in the loss."
        ),
        cause=N_(
            "With find_unused_parameters=False (the default) DDP waits for a gradient of every "
            "parameter before it finishes the iteration's all-reduce. Parameters that got none "
            "(a head whose output the loss ignores, a branch forward did not take, a frozen "
            "part that still requires grad) leave that reduction unfinished, and the next "
            "forward finds it so."
        ),
        fix=N_(
            "Use every output in the loss, or remove the parts that produce none; freeze unused "
            "parameters with requires_grad_(False) before wrapping. If what goes unused changes "
            "from iteration to iteration, DistributedDataParallel(..., "
            "find_unused_parameters=True) (it walks the graph each iteration, which costs time); "
            "if it is the same every time, static_graph=True."
        ),
        run=SUBPROCESS,
        broken=(
            "import os\n"
            "import socket\n"
            "\n"
            "import torch\n"
            "import torch.distributed as dist\n"
            "from torch import nn\n"
            "from torch.nn.parallel import DistributedDataParallel\n"
            "\n"
            "\n"
            "class TwoHeads(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.body = nn.Linear(4, 8)\n"
            "        self.score = nn.Linear(8, 1)\n"
            "        self.extra = nn.Linear(8, 2)\n"
            "\n"
            "    def forward(self, x):\n"
            "        h = self.body(x).relu()\n"
            "        return self.score(h), self.extra(h)\n"
            "\n"
            "\n"
            "with socket.socket() as probe:\n"
            "    probe.bind(('127.0.0.1', 0))\n"
            "    os.environ['MASTER_PORT'] = str(probe.getsockname()[1])\n"
            "os.environ['MASTER_ADDR'] = '127.0.0.1'\n"
            "dist.init_process_group('gloo', rank=0, world_size=1)\n"
            "torch.manual_seed(0)\n"
            "model = DistributedDataParallel(TwoHeads())\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for step in range(2):\n"
            "    score, extra = model(torch.randn(5, 4))\n"
            "    loss = score.pow(2).mean()  # extra is left out: its head gets no gradient\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    print('step', step, 'loss', loss.item())\n"
            "dist.destroy_process_group()\n"
        ),
        fixed=(
            "import os\n"
            "import socket\n"
            "\n"
            "import torch\n"
            "import torch.distributed as dist\n"
            "from torch import nn\n"
            "from torch.nn.parallel import DistributedDataParallel\n"
            "\n"
            "\n"
            "class TwoHeads(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.body = nn.Linear(4, 8)\n"
            "        self.score = nn.Linear(8, 1)\n"
            "        self.extra = nn.Linear(8, 2)\n"
            "\n"
            "    def forward(self, x):\n"
            "        h = self.body(x).relu()\n"
            "        return self.score(h), self.extra(h)\n"
            "\n"
            "\n"
            "with socket.socket() as probe:\n"
            "    probe.bind(('127.0.0.1', 0))\n"
            "    os.environ['MASTER_PORT'] = str(probe.getsockname()[1])\n"
            "os.environ['MASTER_ADDR'] = '127.0.0.1'\n"
            "dist.init_process_group('gloo', rank=0, world_size=1)\n"
            "torch.manual_seed(0)\n"
            "# DDP told to look for parameters that get no gradient in an iteration.\n"
            "model = DistributedDataParallel(TwoHeads(), find_unused_parameters=True)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for step in range(2):\n"
            "    score, extra = model(torch.randn(5, 4))\n"
            "    loss = score.pow(2).mean()  # extra is left out: its head gets no gradient\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    print('step', step, 'loss', loss.item())\n"
            "dist.destroy_process_group()\n"
        ),
        today=(
            "RuntimeError: Expected to have finished reduction in the prior iteration before "
            "starting a new one. This error indicates that your module has parameters that were "
            "not used in producing loss. You can enable unused parameter detection by passing "
            "the keyword argument `find_unused_parameters=True` to "
            "`torch.nn.parallel.DistributedDataParallel`, and by "
        ),
        notes_differ=N_(
            "The notes hold, though find_unused_parameters=True, the fix today's message "
            "offers first, is missing, and 'RuntimeErrorExpected' is a copying slip for "
            "'RuntimeError: Expected'."
        ),
        also=(
            "RuntimeError: Expected to have finished reduction in the prior iteration before "
            "starting a new one. This error indicates that your module has parameters that were "
            "not used in producing loss. You can enable unused parameter detection by (1) "
            "passing the keyword argument `find_unused_parameters=True` to "
            "`torch.nn.parallel.DistributedDataParallel`; (2) making sure all `forward` function "
            "outputs participate in calculating loss.",
            # The message's last two lines, which a traceback of one rank ends with.
            "Parameter indices which did not receive grad for rank 0: 4 5",
            "In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either "
            "INFO or DETAIL to print out information about which particular parameters did not "
            "receive gradient on this rank as part of this error",
        ),
    ),
    Entry(
        key="rank0-all-reduce-deadlock",
        kind="distributed",
        title=N_("all_reduce on rank 0 only: a deadlock"),
        where="000:76",
        notes_message="",
        notes_cause=(
            "在打印 loss 时为了同步各个 worker 的 loss 值而使用了 torch.distributed.all_reduce()，"
            "但是却放在了打印 loss 的 if local_rank == 0 下面"
        ),
        notes_gloss=N_(
            "py-spy showed the job stuck in SyncBN: to print the loss averaged over the workers, "
            "torch.distributed.all_reduce() was called under the loss printing's "
            "if local_rank == 0, so only worker 0 reached it, and the other workers, waiting in "
            "SyncBN's own all_reduce, never got worker 0 there: a deadlock."
        ),
        cause=N_(
            "A collective (all_reduce, broadcast, barrier, SyncBN's statistics) completes only "
            "when every rank of the group calls it, and ranks pair their collectives by order. A "
            "collective inside if rank == 0 waits for partners that are elsewhere, and they wait "
            "for rank 0 in the next one. Nothing fails until the process group's timeout (30 "
            "minutes by default, 10 for NCCL), so the job just hangs; the snippet sets 3 seconds "
            "and shows the timeout rank 0 gets."
        ),
        fix=N_(
            "Call every collective on every rank, and put only the printing under "
            "if rank == 0. To find the stuck line: py-spy dump --pid on each rank, or "
            "TORCH_DISTRIBUTED_DEBUG=DETAIL, which checks that the ranks' collectives agree."
        ),
        run=SUBPROCESS,
        broken=(
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
            "def train(rank, world_size, errors):\n"
            "    try:\n"
            "        # A short timeout turns a hang into an error (the default is 30 minutes).\n"
            "        dist.init_process_group('gloo', rank=rank, world_size=world_size,\n"
            "                                timeout=datetime.timedelta(seconds=3))\n"
            "        loss = torch.tensor([float(rank + 1)])\n"
            "        if rank == 0:\n"
            "            # Averaging the loss to print it, on rank 0 only: no other rank joins.\n"
            "            dist.all_reduce(loss)\n"
            "            print('mean loss', loss.item() / world_size)\n"
            "        else:\n"
            "            time.sleep(1)  # the other ranks go on with the next step's forward pass\n"
            "        dist.barrier()  # every rank's next collective (SyncBN's all_reduce, say)\n"
            "        dist.destroy_process_group()\n"
            "    except Exception as exc:\n"
            "        errors.put((rank, exc))\n"
            "\n"
            "\n"
            "with socket.socket() as probe:\n"
            "    probe.bind(('127.0.0.1', 0))\n"
            "    os.environ['MASTER_PORT'] = str(probe.getsockname()[1])\n"
            "os.environ['MASTER_ADDR'] = '127.0.0.1'\n"
            "fork = multiprocessing.get_context('fork')\n"
            "errors = fork.Queue()\n"
            "ranks = [fork.Process(target=train, args=(rank, 2, errors)) for rank in range(2)]\n"
            "for process in ranks:\n"
            "    process.start()\n"
            "for process in ranks:\n"
            "    process.join(15)\n"
            "failed = dict(errors.get(timeout=1) for _ in range(errors.qsize()))\n"
            "if failed:\n"
            "    raise failed[min(failed)]  # the lowest rank's error, as its log shows it\n"
            "print('both ranks finished')\n"
        ),
        fixed=(
            "import datetime\n"
            "import multiprocessing\n"
            "import os\n"
            "import socket\n"
            "\n"
            "import torch\n"
            "import torch.distributed as dist\n"
            "\n"
            "\n"
            "def train(rank, world_size, errors):\n"
            "    try:\n"
            "        # A short timeout turns a hang into an error (the default is 30 minutes).\n"
            "        dist.init_process_group('gloo', rank=rank, world_size=world_size,\n"
            "                                timeout=datetime.timedelta(seconds=3))\n"
            "        loss = torch.tensor([float(rank + 1)])\n"
            "        # Every rank joins the all_reduce; only rank 0 prints.\n"
            "        dist.all_reduce(loss)\n"
            "        if rank == 0:\n"
            "            print('mean loss', loss.item() / world_size)\n"
            "        dist.barrier()  # every rank's next collective (SyncBN's all_reduce, say)\n"
            "        dist.destroy_process_group()\n"
            "    except Exception as exc:\n"
            "        errors.put((rank, exc))\n"
            "\n"
            "\n"
            "with socket.socket() as probe:\n"
            "    probe.bind(('127.0.0.1', 0))\n"
            "    os.environ['MASTER_PORT'] = str(probe.getsockname()[1])\n"
            "os.environ['MASTER_ADDR'] = '127.0.0.1'\n"
            "fork = multiprocessing.get_context('fork')\n"
            "errors = fork.Queue()\n"
            "ranks = [fork.Process(target=train, args=(rank, 2, errors)) for rank in range(2)]\n"
            "for process in ranks:\n"
            "    process.start()\n"
            "for process in ranks:\n"
            "    process.join(15)\n"
            "failed = dict(errors.get(timeout=1) for _ in range(errors.qsize()))\n"
            "if failed:\n"
            "    raise failed[min(failed)]  # the lowest rank's error, as its log shows it\n"
            "print('both ranks finished')\n"
        ),
        today=(
            "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
            "unbound_buffer.cc:78] Timed out waiting 3000ms for recv operation to complete"
        ),
        also=(
            "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, "
            "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800310 "
            "milliseconds before timing out.",
        ),
    ),
    Entry(
        key="horovod-zero-grad",
        kind="distributed",
        title=N_("Horovod: zero_grad() between backward() and step()"),
        where="000:55",
        notes_message=(
            "AssertionError: optimizer.zero_grad() was called after loss.backward() but before "
            "optimizer.step() or optimizer.synchronize(). This is prohibited as it can cause a "
            "race condition"
        ),
        notes_cause=(
            "在使用多个 optimizer 时出现，前一个 loss 的 backward 影响了后一个 optimizer，"
            "需要在后一个 optimizer 调用 zero_grad() 前加个 optimizer.synchronize()"
        ),
        notes_gloss=N_(
            "Happens with several optimizers: the backward of the first loss affects the second "
            "optimizer; call optimizer.synchronize() before the second optimizer's zero_grad()."
        ),
        cause=N_(
            "Horovod's DistributedOptimizer starts an asynchronous allreduce for each gradient "
            "as backward() produces it and waits for them in step() or synchronize(). With two "
            "optimizers whose parameters overlap (a GAN's generator loss flows into the "
            "discriminator too), backward() of one loss starts allreduces for the other "
            "optimizer's gradients; zeroing those gradients while the allreduce still writes "
            "them would race, so Horovod refuses."
        ),
        fix=N_(
            "Call optimizer.synchronize() on the optimizer whose gradients backward() touched "
            "before its zero_grad(), then step() inside "
            "with optimizer.skip_synchronize(): (so it does not wait twice); or give each "
            "optimizer parameters the other loss does not reach (detach what crosses over)."
        ),
        run=DOCUMENTED,
        needs=N_(
            "Horovod (pip install horovod, built against torch and MPI or gloo), which this "
            "machine lacks, and a training loop with two hvd.DistributedOptimizer whose "
            "parameters one backward() reaches both of, run on at least two processes "
            "(horovodrun -np 2: on one, Horovod registers no gradient hooks). It stops with this "
            "AssertionError at the second optimizer's zero_grad()."
        ),
    ),
    Entry(
        key="dataparallel-kwargs",
        kind="distributed",
        title=N_("DataParallel hands a replica mismatched inputs"),
        where="000:76",
        notes_message=(
            "DataParallel 封装模型在指针式参数输入时（outputs = model(*inputs, **kwargs)）"
            "遇到了 inputs 顺序错乱？的问题"
        ),
        notes_cause=(
            "只在 2 GPU 时出现，单 GPU 和 8 GPU 都没有出现。"
            "直接用 model.module.forward(*inputs, **kwargs) 没有问题，但是只用了单 GPU"
        ),
        notes_gloss=N_(
            "A model wrapped in DataParallel and called as model(*inputs, **kwargs) seemed to "
            "get its inputs in a scrambled order; only with 2 GPUs, not with 1 or 8. Calling "
            "model.module.forward(*inputs, **kwargs) works, but on one GPU only."
        ),
        cause=N_(
            "DataParallel cuts every tensor in args and kwargs along dim 0 into one chunk per "
            "GPU (lists, tuples and dicts are searched for tensors; anything else is copied "
            "whole), then zips the chunks into one call per GPU. The zip keeps only as many "
            "calls as the input with the fewest chunks allows, and a missing positional or "
            "keyword part becomes empty. So an input whose first dimension is not the batch, or "
            "a batch smaller than the number of GPUs, is cut in the wrong place or into fewer "
            "pieces, and a replica gets pieces that do not belong together; where the cuts fall "
            "depends on the number of GPUs, which is why 1 and 8 GPUs looked fine."
        ),
        fix=N_(
            "Pass only tensors whose dim 0 is the batch, all with the same batch size, of at "
            "least the number of GPUs (DataLoader(drop_last=True)); keep everything else on the "
            "module (a buffer or an attribute) or as a non-tensor argument. Better, use "
            "DistributedDataParallel, one process per GPU, which PyTorch recommends over "
            "DataParallel and which does not split inputs."
        ),
        run=DOCUMENTED,
        notes_differ=N_(
            "The notes leave the cause open. DataParallel's splitting rule explains it: every "
            "tensor argument is split along dim 0. model.module.forward skips the splitting and "
            "with it all but one GPU, as the notes found."
        ),
        needs=N_(
            "Two CUDA GPUs. There, a DataParallel model called with a batch-first tensor and a "
            "keyword tensor whose dim 0 is not the batch gets, on each GPU, half of each: the "
            "second tensor is cut across its own first dimension; with a batch of 1 the second "
            "GPU gets the keyword part alone and no positional input."
        ),
    ),
    Entry(
        key="gpu0-memory-spike",
        kind="distributed",
        title=N_("Every process loads its weights onto GPU 0"),
        where="000:76",
        notes_message="GPU0 显存暴涨是在 amp.initialize() 之后才会出现的",
        notes_cause=(
            "有一个子模型的预训练参数 state_dict 是保存到 cuda:0 的，"
            "所以在读取时每个 worker 都将该子模型参数读到了 cuda:0，进而导致了 GPU0 显存暴涨，"
            "修改为保存到 cpu 中然后在读取后 .cuda() 分配到各个 worker 的 GPU 上则问题解决"
        ),
        notes_gloss=N_(
            "A sub-model's pretrained state_dict had been saved from cuda:0, so every worker "
            "loaded it onto cuda:0 and GPU 0's memory shot up; saving it on the CPU and moving "
            "it with .cuda() to each worker's GPU after loading solved it."
        ),
        cause=N_(
            "torch.load puts every tensor back on the device it was saved from (cuda:0 here) "
            "unless map_location says otherwise. In a job with one process per GPU each process "
            "then creates a CUDA context and a copy of those weights on GPU 0, which runs out "
            "of memory first. A process that calls .cuda() or allocates before "
            "torch.cuda.set_device(local_rank) lands on GPU 0 the same way."
        ),
        fix=N_(
            "torch.load(path, map_location='cpu') (then .to(device)), or "
            "map_location=f'cuda:{local_rank}'; save checkpoints from CPU tensors "
            "({k: v.cpu() for k, v in state_dict.items()}); call "
            "torch.cuda.set_device(local_rank) first thing in every process."
        ),
        run=DOCUMENTED,
        notes_differ=N_(
            "The notes' fix works; map_location fixes it without saving the file again. "
            "amp.initialize() belongs to NVIDIA Apex, which torch.amp has replaced."
        ),
        needs=N_(
            "Several CUDA GPUs and a job with one process per GPU (torchrun) that loads a "
            "checkpoint saved from cuda:0 without map_location. nvidia-smi then lists every "
            "rank's process on GPU 0, whose memory grows with the number of ranks until it "
            "runs out (torch.OutOfMemoryError on GPU 0) while the other GPUs have room."
        ),
        lesson=(
            "memory?memory.notes_tab=map_location+%28000%3A63%29",
            N_("CUDA memory monitor: map_location, each DDP worker"),
        ),
    ),
)
