"""The runner: the app's own snippets, with limits; a run that hangs or dies becomes a message."""

from __future__ import annotations

import time

import pytest

from lessons.errors import runs
from lessons.errors.entry import DOCUMENTED, GPU, Entry
from lessons.errors.runs import capture, captured, run_in_process, run_in_subprocess, run_snippet


def test_in_process_reports_the_error_line_and_the_printed_output():
    result = run_in_process("import torch\nprint('before')\ntorch.ones(2)[5]\nprint('after')\n")
    assert result.status == "raised" and result.line == 3 and result.output == "before"
    assert result.headline == "IndexError: index 5 is out of bounds for dimension 0 with size 2"


def test_in_process_gives_up_waiting_after_its_time_limit():
    start = time.perf_counter()
    result = run_in_process("import time\ntime.sleep(3)\n", timeout_s=0.3)
    assert result.status == "timeout" and "0.3 s" in result.message
    assert time.perf_counter() - start < 2


def test_subprocess_reports_what_the_child_raised_and_printed():
    result = run_in_subprocess("print('hi')\nimport torch\ntorch.zeros(2, 3) @ torch.zeros(2, 3)\n")
    assert result.status == "raised" and result.line == 3 and result.output == "hi"
    assert result.headline.startswith("RuntimeError: mat1 and mat2 shapes cannot be multiplied")


def test_a_hanging_subprocess_is_stopped_with_its_whole_group():
    code = ("import os, time\npid = os.fork()\nif pid == 0:\n    time.sleep(60)\n"
            "print(pid, flush=True)\ntime.sleep(60)\n")  # fmt: skip
    start = time.perf_counter()
    result = run_in_subprocess(code, timeout_s=2)
    assert result.status == "timeout" and "stopped" in result.message
    assert time.perf_counter() - start < 10


def test_a_subprocess_killed_by_a_signal_is_a_message():
    result = run_in_subprocess("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    assert result.status == "died" and "SIGKILL" in result.message


def test_a_subprocess_cannot_take_unbounded_memory():
    code = "import resource\nprint(resource.getrlimit(resource.RLIMIT_AS)[0])\n"
    assert run_in_subprocess(code).output == str(runs.SUBPROCESS_MEMORY_BYTES)
    result = run_in_subprocess(f"x = bytearray({runs.SUBPROCESS_MEMORY_BYTES + 1})\n")
    assert result.status == "raised" and result.headline == "MemoryError"
    assert run_in_subprocess(code, memory_bytes=None).output != str(runs.SUBPROCESS_MEMORY_BYTES)


#: What one live snippet may add to a process's peak memory (they make a few small tensors).
LIVE_PEAK_GROWTH_BYTES = 32 * 1024**2  # measured: at most 7 MiB (backward-twice)


def test_the_live_snippets_stay_small():
    """The live snippets run in the server process, which has no memory cap: measure each one's
    growth of the peak resident memory, in a child that runs them all one after the other."""
    from lessons.errors.catalogue import entries
    from lessons.errors.entry import LIVE

    codes = [getattr(e, which) for e in entries() if e.run == LIVE for which in ("broken", "fixed")]
    measure = (
        "import json, resource, sys, threading, torch\n"
        "codes = json.loads(sys.stdin.read())\n"
        # What a first import costs (an optimizer's first call imports torch._dynamo, about
        # 150 MB, once per process) is not the snippet's memory.
        "import numpy, torch._dynamo, torch.optim, torch.nn.functional, torch.utils.data\n"
        "torch.ones(1) + 1\n"
        "growth = []\n"
        "for code in codes:\n"
        "    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "    def run():\n"
        "        try:\n"
        "            exec(code, {'__name__': '__main__', 'print': lambda *a, **k: None})\n"
        "        except Exception:\n"
        "            pass\n"
        "    worker = threading.Thread(target=run)\n"
        "    worker.start()\n"
        "    worker.join()\n"
        "    growth.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
        "print(json.dumps(growth))\n"
    )  # fmt: skip
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", measure], input=json.dumps(codes), text=True,
                          capture_output=True, timeout=300)  # fmt: skip
    growth_kib = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(growth_kib) == len(codes)
    worst = max(growth_kib) * 1024
    assert worst <= LIVE_PEAK_GROWTH_BYTES, f"a live snippet grew the peak by {worst} bytes"


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_limits_must_be_positive(bad):
    with pytest.raises(ValueError, match="timeout_s must be positive"):
        run_in_process("pass", timeout_s=bad)
    with pytest.raises(ValueError, match="timeout_s must be positive"):
        run_in_subprocess("pass", timeout_s=bad)


def _entry(run: str) -> Entry:
    return Entry(key="k", kind="cuda", title="t", where="000:76", notes_message="m",
                 notes_cause="c", notes_gloss="g", cause="c", fix="f", run=run,
                 broken="import torch\ntorch.zeros(1, device='cuda')\n",
                 fixed="print(1)\n", today="E: t", needs="a GPU")  # fmt: skip


def test_documented_entries_never_run_and_gpu_entries_wait_for_a_gpu(monkeypatch):
    assert run_snippet(_entry(DOCUMENTED), "broken").status == "skipped"
    monkeypatch.setattr(runs.torch.cuda, "is_available", lambda: False)
    assert run_snippet(_entry(GPU), "broken").message == "needs a CUDA GPU"
    with pytest.raises(ValueError, match="'other'"):
        run_snippet(_entry(GPU), "other")


def test_capture_runs_an_entry_once_per_process():
    first = capture("backward-twice", "broken")
    assert captured("backward-twice", "broken") is first
    assert capture("backward-twice", "broken") is first
    with pytest.raises(ValueError, match="no entry is called 'print-hello'"):
        capture("print-hello", "broken")
