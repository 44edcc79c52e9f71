"""Running the catalogue's own snippets, with a time limit, and capturing what torch said.

Only :class:`~lessons.errors.entry.Entry` snippets run here, looked up by the entry's key: text a
visitor pastes is matched (``lessons.errors.matching``), never run. Two ways:

- :func:`run_in_process`: the snippet runs on a fresh thread of the server process (its own
  namespace, ``print`` captured). The page waits at most ``timeout_s``; a snippet still running
  then is reported as such. These are the entries whose snippets allocate a few small CPU
  tensors and return in milliseconds.
- :func:`run_in_subprocess`: the snippet runs in a fresh ``python`` with a wall-clock limit and
  an address-space limit, in a process group of its own that is killed whole on timeout (so a
  DataLoader worker or a second rank cannot outlive it). For worker processes, signals, process
  groups and hangs, which must never touch the server process.

:func:`capture` runs an entry's snippet the way its ``run`` says, once per process (cached).
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Literal

import torch

from core.notes import error_text, exec_captured, snippet_line
from core.text import N_
from lessons.errors.entry import DOCUMENTED, GPU, LIVE, SUBPROCESS, Entry

Status = Literal["raised", "ok", "timeout", "died", "skipped"]
Which = Literal["broken", "fixed"]

#: Seconds an in-process snippet may take (they take milliseconds; the first torch call of a
#: kind may take a second on a cold, busy 2-core server).
IN_PROCESS_TIMEOUT_S = 20.0
#: Seconds a subprocess snippet may take, torch's import (2-4 s here) included.
SUBPROCESS_TIMEOUT_S = 60.0
#: Address space a subprocess snippet may map: importing torch maps about 3.3 GB here; a
#: runaway allocation beyond this fails inside the child with a MemoryError.
SUBPROCESS_MEMORY_BYTES = 8 * 1024**3
#: Why a snippet that shows a mistake of CPU-only machines was not run (the page translates it).
NEEDS_NO_GPU = N_("this machine has a CUDA GPU, where the mistake runs without an error")
#: The child's last line starts with this, then the result as JSON.
_MARK = "@@torch-playground-capture@@"

# The harness caps its own address space first (argv[1] bytes, 0: no cap): a preexec_fn would
# run between fork and exec in a server full of threads, where Python warns it may deadlock.
_HARNESS = f"""
import json, resource, sys, traceback
limit = int(sys.argv[1])
if limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
code = sys.stdin.read()
result = {{"status": "ok", "message": "", "line": None}}
try:
    exec(compile(code, "<snippet>", "exec"), {{"__name__": "__main__"}})
except BaseException as exc:
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<snippet>"]
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    result = {{"status": "raised", "message": message, "line": lines[-1] if lines else None}}
sys.stdout.flush()
print("\\n{_MARK}" + json.dumps(result), flush=True)
"""


@dataclass(frozen=True)
class Capture:
    """What a snippet did when the app ran it.

    ``status``: ``"raised"`` (``message`` is ``"Type: message"``, ``line`` the snippet's line it
    came from), ``"ok"`` (it ran to the end), ``"timeout"`` / ``"died"`` (the run itself failed;
    ``message`` says how, for a person), ``"skipped"`` (not run on this machine: ``message``
    says why). ``output`` is what it printed; ``how`` is the entry's ``run``.
    """

    status: Status
    message: str
    output: str
    line: int | None
    seconds: float
    torch_version: str
    how: str

    @property
    def headline(self) -> str:
        """The message's first line: what the last line of a traceback starts with."""
        return self.message.splitlines()[0] if self.message else ""


def _exec(code: str) -> Capture:
    """Run ``code`` here (``core.notes.exec_captured``: its own namespace, ``print`` captured).

    Not ``core.notes.run_live``: that one holds a process-wide lock while a snippet runs (for
    the notes' seeding recipes), and a snippet that outlived its time limit here would keep it,
    and every lesson's notes boxes with it. These snippets seed nothing."""
    start = time.perf_counter()
    printed, exc = exec_captured(code, "__main__")
    status: Status = "ok" if exc is None else "raised"
    message = "" if exc is None else error_text(exc)
    line = None if exc is None else snippet_line(exc)
    seconds = time.perf_counter() - start
    return Capture(status, message, "".join(printed).rstrip("\n"), line, seconds,
                   torch.__version__, LIVE)  # fmt: skip


def run_in_process(code: str, *, timeout_s: float = IN_PROCESS_TIMEOUT_S) -> Capture:
    """Run the app's ``code`` on a thread of this process; wait at most ``timeout_s`` seconds.

    A fresh thread each time: grad mode belongs to a thread, and one snippet switches it off.
    There is no memory cap in a process shared by every visitor; the live snippets allocate a
    few small tensors (tests/lessons/errors/test_runs.py measures them). Raises ValueError for a
    ``timeout_s`` that is not positive."""
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be positive, got {timeout_s!r}")
    done: list[Capture] = []
    worker = threading.Thread(target=lambda: done.append(_exec(code)), daemon=True)
    worker.start()
    worker.join(timeout_s)
    if not done:
        return Capture("timeout", f"did not finish within {timeout_s:g} s", "", None, timeout_s,
                       torch.__version__, LIVE)  # fmt: skip
    return done[0]


def run_in_subprocess(code: str, *, timeout_s: float = SUBPROCESS_TIMEOUT_S,
                      memory_bytes: int | None = SUBPROCESS_MEMORY_BYTES) -> Capture:  # fmt: skip
    """Run the app's ``code`` in a fresh Python with a time and an address-space limit.

    ``memory_bytes`` None leaves the address space unlimited: the CUDA driver maps far more
    virtual memory than it uses, so a GPU snippet under the limit could fail at CUDA's start.

    The child gets its own session (process group); on timeout the whole group is killed, so
    worker processes it started go too. A child that dies (a signal, an abort) is reported as
    ``"died"`` with what it wrote last. Raises ValueError for a ``timeout_s`` that is not
    positive."""
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be positive, got {timeout_s!r}")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", _HARNESS, str(memory_bytes or 0)], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, err = child.communicate(code, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(child.pid)
        child.communicate()
        stopped = f"did not finish within {timeout_s:g} s and was stopped"
        seconds = time.perf_counter() - start
        return Capture("timeout", stopped, "", None, seconds, torch.__version__, SUBPROCESS)
    finally:
        _kill_group(child.pid)  # workers the snippet left behind
    return _parse_child(out, err, child.returncode, time.perf_counter() - start)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(pid, signal.SIGKILL)


def _ending(returncode: int, err: str) -> str:
    """How a child that left no result ended: the signal that killed it, or its last words."""
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-returncode).name}"
    return (err.strip().splitlines() or [f"exit status {returncode}"])[-1]


def _parse_child(out: str, err: str, returncode: int, seconds: float) -> Capture:
    printed, _, result_line = out.rpartition(_MARK)
    if not result_line:
        how = _ending(returncode, err)
        return Capture("died", f"the process ended without a result ({how})", out.strip(),
                       None, seconds, torch.__version__, SUBPROCESS)  # fmt: skip
    result = json.loads(result_line)
    return Capture(result["status"], result["message"], printed.strip(), result["line"],
                   seconds, torch.__version__, SUBPROCESS)  # fmt: skip


def run_snippet(entry: Entry, which: Which) -> Capture:
    """Run ``entry``'s ``broken`` or ``fixed`` snippet the way ``entry.run`` says (not cached).

    A GPU entry runs in a subprocess where CUDA is present and is skipped elsewhere; a documented
    entry is never run. Raises ValueError for ``which`` other than "broken" / "fixed"."""
    if which not in ("broken", "fixed"):
        raise ValueError(f"which must be 'broken' or 'fixed', got {which!r}")
    code = getattr(entry, which)
    if entry.run == DOCUMENTED:
        return Capture("skipped", "documented only", "", None, 0.0, torch.__version__, DOCUMENTED)
    if entry.run == GPU and not torch.cuda.is_available():
        return Capture("skipped", "needs a CUDA GPU", "", None, 0.0, torch.__version__, GPU)
    if entry.needs_no_gpu and which == "broken" and torch.cuda.is_available():
        return Capture("skipped", NEEDS_NO_GPU, "", None, 0.0, torch.__version__, entry.run)
    if entry.run == LIVE:
        return run_in_process(code)
    if entry.run == SUBPROCESS:
        return run_in_subprocess(code)
    return _as_gpu(run_in_subprocess(code, memory_bytes=None))


def _as_gpu(capture: Capture) -> Capture:
    return Capture(capture.status, capture.message, capture.output, capture.line,
                   capture.seconds, capture.torch_version, GPU)  # fmt: skip


#: Finished captures by (entry key, which), shared by every session of this process.
_CAPTURED: dict[tuple[str, str], Capture] = {}
#: One lock per (key, which): sessions asking for the same capture at once wait for one run.
_LOCKS: collections.defaultdict[tuple[str, str], threading.Lock] = collections.defaultdict(
    threading.Lock
)


def capture(key: str, which: Which) -> Capture:
    """:func:`run_snippet` of the catalogue's entry ``key``, once per process for every session
    (the snippets are fixed, so the answer only changes with torch). A run that timed out is not
    kept: the next visitor tries again. Raises ValueError for a key the catalogue lacks."""
    from lessons.errors.catalogue import entry_by_key  # the catalogue imports entries, not runs

    entry = entry_by_key(key)
    with _LOCKS[(key, which)]:
        if (key, which) not in _CAPTURED:
            result = run_snippet(entry, which)
            if result.status == "timeout":
                return result
            _CAPTURED[(key, which)] = result
        return _CAPTURED[(key, which)]


def captured(key: str, which: Which) -> Capture | None:
    """The capture :func:`capture` already holds for ``(key, which)``, without running it."""
    return _CAPTURED.get((key, which))
