"""Data loading errors: workers killed or failing, memory refused, hangs, deep recursion."""

from __future__ import annotations

from core.text import N_
from lessons.errors.entry import DOCUMENTED, LIVE, SUBPROCESS, Entry

ENTRIES: tuple[Entry, ...] = (
    Entry(
        key="worker-killed",
        kind="data",
        title=N_("A DataLoader worker killed by a signal"),
        where="000:76",
        notes_message="RuntimeError: DataLoader worker (pid 6741) is killed by signal: Killed.",
        notes_cause=(
            "原因不明，可能是因为数据不允许多线程处理，或者共享内存不足，可降低 batchsize 试试。"
        ),
        notes_gloss=N_(
            "Cause unknown: maybe the data cannot be handled by several threads, or shared "
            "memory is short; try a smaller batch size."
        ),
        cause=N_(
            "A worker process ended on a signal it did not send itself. 'Killed' is SIGKILL, "
            "which comes from outside the program: nearly always the kernel's out-of-memory "
            "killer (the machine's or the container's memory limit), since every worker holds its "
            "own batches and its own copy of what it touched. 'Bus error' (SIGBUS) instead points "
            "to a /dev/shm too small for the batches the workers hand over through shared memory "
            "(Docker gives 64 MB by default). The main process notices the dead worker and raises; "
            "today its traceback ends with 'exited unexpectedly', the 'killed by signal' line is "
            "the exception printed above it."
        ),
        fix=N_(
            "Find out who killed it: dmesg or the container's events show 'Out of memory: Killed "
            "process'. Then use less memory: fewer workers (num_workers), a smaller "
            "prefetch_factor or batch size, data kept in numpy arrays or tensors rather than "
            "Python lists of objects, or more memory for the container. For 'Bus error' give "
            "Docker more shared memory (--shm-size=2g, or --ipc=host)."
        ),
        run=SUBPROCESS,
        broken=(
            "import os\n"
            "import signal\n"
            "import time\n"
            "\n"
            "import torch\n"
            "from torch.utils.data import DataLoader, Dataset\n"
            "\n"
            "\n"
            "class Squares(Dataset):\n"
            "    def __len__(self):\n"
            "        return 8\n"
            "\n"
            "    def __getitem__(self, i):\n"
            "        # What the out-of-memory killer does to a worker that grew too big, by hand.\n"
            "        time.sleep(0.5)\n"
            "        os.kill(os.getpid(), signal.SIGKILL)\n"
            "        return torch.tensor([float(i * i)])\n"
            "\n"
            "\n"
            "loader = DataLoader(Squares(), batch_size=4, num_workers=1)\n"
            "for batch in loader:\n"
            "    print(batch.flatten().tolist())\n"
        ),
        fixed=(
            "import torch\n"
            "from torch.utils.data import DataLoader, Dataset\n"
            "\n"
            "\n"
            "class Squares(Dataset):\n"
            "    def __len__(self):\n"
            "        return 8\n"
            "\n"
            "    def __getitem__(self, i):\n"
            "        # A worker with the memory it needs: nothing kills it.\n"
            "        return torch.tensor([float(i * i)])\n"
            "\n"
            "\n"
            "loader = DataLoader(Squares(), batch_size=4, num_workers=1)\n"
            "for batch in loader:\n"
            "    print(batch.flatten().tolist())\n"
        ),
        today="RuntimeError: DataLoader worker (pid(s) 889) exited unexpectedly",
        notes_differ=N_(
            "The notes leave the cause open and suspect multi-threading. A worker is a process, "
            "and 'Killed' is SIGKILL from outside it, in practice the out-of-memory killer; a "
            "smaller batch size helps only because it needs less memory. Today's traceback ends "
            "with 'exited unexpectedly' rather than the line the notes quote."
        ),
        also=(
            "RuntimeError: DataLoader worker (pid 6741) is killed by signal: Bus error.",
            "RuntimeError: DataLoader worker (pid(s) 6741, 6742) exited unexpectedly",
            "ERROR: Unexpected bus error encountered in worker. This might be caused by "
            "insufficient shared memory (shm).",
        ),
    ),
    Entry(
        key="cannot-allocate-memory",
        kind="data",
        title=N_("Cannot allocate memory (errno 12)"),
        where="000:76",
        notes_message="OSError: [Errno 12] Cannot allocate memory",
        notes_cause=(
            "当 num_workers > 0 时，CPU 内存使用会慢慢增加，直到爆掉，"
            "一个方法是 数据集的__init__时 不使用 Python lists（或 numpy arrays of type object）"
            "来保存数据，改用普通的 numpy array 或 tensor。"
        ),
        notes_gloss=N_(
            "With num_workers > 0 the CPU memory use grows slowly until it blows up; one way out "
            "is not to keep the data in Python lists (or numpy arrays of dtype object) in the "
            "dataset's __init__, but in plain numpy arrays or tensors."
        ),
        cause=N_(
            "Errno 12 (ENOMEM) is the kernel refusing a request for memory. In a training script "
            "it is most often os.fork() when the DataLoader starts its workers (every epoch, "
            "unless persistent_workers=True): the kernel will not promise a child as much memory "
            "again as the parent already holds (strict overcommit, little free RAM and swap), or "
            "any mapping beyond a limit. The notes' mechanism is real: a forked worker that "
            "reads Python objects writes their reference counts, so each worker gradually copies "
            "the pages of a big list or dict of objects, and memory grows with workers and "
            "epochs until the next request is refused. The snippet shows the refusal itself: a "
            "process allowed 1 GiB of address space asks for 2 GiB."
        ),
        fix=N_(
            "Keep the dataset's samples in numpy arrays or tensors (or an array of offsets into "
            "one bytes buffer) instead of Python lists or dicts of objects, so reading them in a "
            "worker touches no reference counts; use fewer workers, persistent_workers=True so "
            "they are forked once, and free what the main process does not need before the "
            "loader starts. In the snippet: ask for what the limit allows."
        ),
        run=SUBPROCESS,
        broken=(
            "import mmap\n"
            "import resource\n"
            "\n"
            "# Run it as a script, not in a notebook: it lowers its own process's limit.\n"
            "# A machine whose memory is used up, in small: this process may map 1 GiB in all.\n"
            "_, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
            "resource.setrlimit(resource.RLIMIT_AS, (2**30, hard))\n"
            "\n"
            "# Asking the kernel for 2 GiB: it refuses with ENOMEM, errno 12.\n"
            "buffer = mmap.mmap(-1, 2 * 2**30)\n"
            "print(len(buffer) // 2**20, 'MiB mapped')\n"
        ),
        fixed=(
            "import mmap\n"
            "import resource\n"
            "\n"
            "# A machine whose memory is used up, in small: this process may map 1 GiB in all.\n"
            "_, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
            "resource.setrlimit(resource.RLIMIT_AS, (2**30, hard))\n"
            "\n"
            "# Asking for 256 MiB, which fits under the limit.\n"
            "buffer = mmap.mmap(-1, 256 * 2**20)\n"
            "print(len(buffer) // 2**20, 'MiB mapped')\n"
        ),
        today="OSError: [Errno 12] Cannot allocate memory",
        notes_differ=N_(
            "The notes' fix holds, their explanation is loose: workers are processes, not "
            "threads, and no multiprocessing.Array is involved. The memory grows because reading "
            "a Python object in a forked worker writes its reference count, which copies the "
            "page it sits on (copy-on-write triggered by reads)."
        ),
    ),
    Entry(
        key="worker-exception",
        kind="data",
        title=N_("An exception inside a DataLoader worker"),
        where="000:76",
        notes_message="AttributeError: Caught AttributeError in DataLoader worker process 0",
        notes_cause="dataset 里的代码出现错误，比如使用没定义变量什么之类的",
        notes_gloss=N_(
            "The dataset's code has a bug, such as using a variable that was never defined."
        ),
        cause=N_(
            "The worker ran the dataset's __getitem__ (or a transform, or collate_fn) and it "
            "raised. The worker sends the exception to the main process, which raises the same "
            "class with 'Caught ... in DataLoader worker process N' and the worker's traceback "
            "after 'Original Traceback'. The real error is the last line of that traceback."
        ),
        fix=N_(
            "Read the Original Traceback down to its last line and fix the dataset code it "
            "names. To step through it with a debugger, run the loader with num_workers=0: the "
            "same error is then raised directly in the main process."
        ),
        run=SUBPROCESS,
        broken=(
            "import torch\n"
            "from torch.utils.data import DataLoader, Dataset\n"
            "\n"
            "\n"
            "class Pairs(Dataset):\n"
            "    def __init__(self, n):\n"
            "        self.n = n\n"
            "\n"
            "    def __len__(self):\n"
            "        return self.n\n"
            "\n"
            "    def __getitem__(self, i):\n"
            "        # A slip: __init__ set self.n, there is no self.size.\n"
            "        return torch.tensor([float(i), float(i % self.size)])\n"
            "\n"
            "\n"
            "loader = DataLoader(Pairs(6), batch_size=3, num_workers=1)\n"
            "for batch in loader:\n"
            "    print(batch.tolist())\n"
        ),
        fixed=(
            "import torch\n"
            "from torch.utils.data import DataLoader, Dataset\n"
            "\n"
            "\n"
            "class Pairs(Dataset):\n"
            "    def __init__(self, n):\n"
            "        self.n = n\n"
            "\n"
            "    def __len__(self):\n"
            "        return self.n\n"
            "\n"
            "    def __getitem__(self, i):\n"
            "        return torch.tensor([float(i), float(i % self.n)])\n"
            "\n"
            "\n"
            "loader = DataLoader(Pairs(6), batch_size=3, num_workers=1)\n"
            "for batch in loader:\n"
            "    print(batch.tolist())\n"
        ),
        today="AttributeError: Caught AttributeError in DataLoader worker process 0.",
        also=(
            "KeyError: Caught KeyError in DataLoader worker process 0.",
            "IndexError: Caught IndexError in DataLoader worker process 1.",
            "RuntimeError: Caught RuntimeError in DataLoader worker process 0.",
        ),
    ),
    Entry(
        key="transform-hang",
        kind="data",
        title=N_("A DataLoader that hangs in its workers' transforms"),
        where="000:76",
        notes_message="torchvision.tranform 似乎会在多进程中卡住",
        notes_cause="原因不明，更多见 https://pytorch.org/docs/stable/notes/multiprocessing.html",
        notes_gloss=N_(
            "torchvision transforms seem to hang with multiple processes; cause unknown, see "
            "PyTorch's notes on multiprocessing."
        ),
        cause=N_(
            "On Linux the DataLoader starts its workers with fork, which copies only the thread "
            "that calls it. If another thread of the parent held a lock at that moment (the "
            "OpenMP pool behind torch's CPU ops, OpenCV's own thread pool, MKL), the worker "
            "inherits the lock taken and no thread to release it: the first transform that uses "
            "that library in the worker waits forever. Without a deadlock, every worker starting "
            "as many threads as there are cores also slows the loader so much that it looks "
            "stuck."
        ),
        fix=N_(
            "Give each worker one thread: worker_init_fn=lambda _: (torch.set_num_threads(1), "
            "cv2.setNumThreads(0)), and avoid running those libraries in the main process before "
            "the workers start; or start the workers without fork, "
            "DataLoader(..., multiprocessing_context='spawn') (or 'forkserver'). "
            "DataLoader(timeout=60) turns a silent hang into an error that names the wait."
        ),
        run=DOCUMENTED,
        notes_differ=N_(
            "The notes call the cause unknown (and misspell torchvision.transforms). It is "
            "threads and fork: a lock held by a thread of the parent when a worker is forked "
            "stays held in the worker."
        ),
        also=("RuntimeError: DataLoader timed out after 60 seconds",),
        needs=N_(
            "A race that a small CPU snippet does not hit on demand: a parent whose OpenMP or "
            "OpenCV thread pool is busy at the moment the DataLoader forks its workers, and "
            "transforms that use that library in the workers. Such a machine shows no message: "
            "the loop stops, py-spy dump shows the workers waiting on a lock inside libgomp or "
            "cv2 and the main process in self._poll.poll(timeout); with timeout= set, "
            "'DataLoader timed out after N seconds'."
        ),
    ),
    Entry(
        key="recursion-limit",
        kind="data",
        title=N_("maximum recursion depth exceeded"),
        where="000:76",
        notes_message="RecursionError: maximum recursion depth exceeded",
        notes_cause="sys.setrecursionlimit(100000) 解决",
        notes_gloss=N_(
            "A hang at fd_event_list = self._poll.poll(timeout), with RecursionError: maximum "
            "recursion depth exceeded; solved with sys.setrecursionlimit(100000)."
        ),
        cause=N_(
            "Python limits how deep calls may nest (1000 frames by default) so that a runaway "
            "recursion raises instead of overflowing the C stack. A recursive function over deep "
            "data (a long chain, a deeply nested list or dict, pickling a deeply nested object "
            "to send it to a worker) goes past the limit."
        ),
        fix=N_(
            "Walk deep data with a loop (an explicit stack) instead of recursion. Raise the limit "
            "with sys.setrecursionlimit only for a depth you know and that the stack can hold. "
            "For a DataLoader that waits forever, DataLoader(timeout=60) turns the wait into an "
            "error."
        ),
        run=LIVE,
        broken=(
            "def depth(tree):\n"
            "    # One call per level: a list nested 10000 deep needs 10000 frames.\n"
            "    return 0 if not tree else 1 + depth(tree[0])\n"
            "\n"
            "\n"
            "tree = []\n"
            "for _ in range(10_000):\n"
            "    tree = [tree]\n"
            "print(depth(tree))\n"
        ),
        fixed=(
            "def depth(tree):\n"
            "    # One loop turn per level: no frames pile up.\n"
            "    levels = 0\n"
            "    while tree:\n"
            "        tree, levels = tree[0], levels + 1\n"
            "    return levels\n"
            "\n"
            "\n"
            "tree = []\n"
            "for _ in range(10_000):\n"
            "    tree = [tree]\n"
            "print(depth(tree))\n"
        ),
        today="RecursionError: maximum recursion depth exceeded",
        notes_differ=N_(
            "sys.setrecursionlimit(100000) only moves the limit: past what the C stack holds the "
            "interpreter crashes with a segmentation fault instead of raising. The hang at "
            "self._poll.poll(timeout) is the DataLoader's main process waiting for a batch from "
            "a worker that is stuck or gone; it is a symptom, not a recursion problem by itself."
        ),
        also=(
            "RecursionError: maximum recursion depth exceeded while calling a Python object",
            "RecursionError: maximum recursion depth exceeded in comparison",
            "fd_event_list = self._poll.poll(timeout)",
        ),
        also_notes=(("000:76", "fd_event_list = self._poll.poll(timeout) 卡死问题"),),
    ),
)
