"""The matcher against real messages: a corpus of programs run now, unrelated and hostile text.

The corpus (``corpus_*.py`` beside this file) holds programs other than the entries' own (other
shapes, numbers, dtypes, names, paths, worker pids) that make the same mistakes. Each is run
here, as a file, so its traceback is a real one with real paths; the matcher must rank the
expected entry first from the whole traceback and from its error line alone.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.errors.catalogue import entry_by_key
from lessons.errors.matching import (
    MAX_QUERY_CHARS,
    find,
    last_error_line,
    stable_text,
    wrapping_error_line,
)  # fmt: skip

HERE = Path(__file__).parent
CORPUS = tuple(
    case
    for path in sorted(HERE.glob("corpus_*.py"))
    for case in importlib.import_module(f"tests.lessons.errors.{path.stem}").CASES
)


def _traceback_in_process(code: str) -> str:
    """Run ``code`` as if it were /home/student/train.py; its traceback as Python prints it."""
    try:
        exec(compile(code, "/home/student/train.py", "exec"), {"__name__": "__corpus__"})
    except Exception as exc:  # the corpus programs raise on purpose
        return "".join(traceback.format_exception(exc))
    raise AssertionError(f"the corpus program did not raise:\n{code}")


def _traceback_in_subprocess(code: str, folder: Path, index: int) -> str:
    script = folder / f"train_{index}.py"
    script.write_text(code, encoding="utf-8")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=folder)  # fmt: skip
    assert done.returncode != 0, f"the corpus program did not fail:\n{code}"
    return done.stderr


@pytest.fixture(scope="module")
def tracebacks(tmp_path_factory) -> list[tuple[str, str]]:
    """``(expected key, real traceback)`` for every corpus case."""
    folder = tmp_path_factory.mktemp("corpus")
    found: dict[int, tuple[str, str]] = {}
    in_subprocess = [(i, c) for i, c in enumerate(CORPUS) if c[1] == "subprocess"]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {i: pool.submit(_traceback_in_subprocess, code, folder, i)
                   for i, (_key, _run, code) in in_subprocess}  # fmt: skip
        for i, (key, run, code) in enumerate(CORPUS):
            if run != "subprocess":
                found[i] = (key, _traceback_in_process(code))
        for i, future in futures.items():
            found[i] = (CORPUS[i][0], future.result())
    return [found[i] for i in range(len(CORPUS))]


@pytest.mark.parametrize("key, run, code", [
    case for path in sorted(HERE.glob("corpus_*.py"))
    for case in getattr(importlib.import_module(f"tests.lessons.errors.{path.stem}"),
                        "AMONG_MATCHES", ())
])  # fmt: skip
def test_a_message_two_entries_share_offers_both(key, run, code):
    """Two entries whose messages are the same word for word (the notes tell two stories of one
    message): the matcher cannot tell them apart and offers both."""
    assert run == "live"
    text = _traceback_in_process(code)
    assert key in [match.key for match in find(text).matches]


def test_the_corpus_is_large_and_names_real_entries():
    assert len(CORPUS) >= 40, len(CORPUS)
    for key, run, _code in CORPUS:
        entry_by_key(key)
        assert run in ("live", "subprocess"), run


def test_every_real_traceback_finds_its_entry_first(tracebacks):
    wrong = []
    for key, text in tracebacks:
        # The error line: for a worker's traceback, the one that wraps the worker's own error.
        for query in (text, wrapping_error_line(text) or last_error_line(text)):
            start = time.perf_counter()
            search = find(query)
            ms = (time.perf_counter() - start) * 1000
            if search.best != key:
                wrong.append((key, search.best, query[-300:], ms))
    assert wrong == [], "\n".join(map(str, wrong))


@pytest.mark.parametrize("text", [
    "hello", "hello world, how are you today?", "KeyError: 'weight'",
    "ZeroDivisionError: division by zero", "ModuleNotFoundError: No module named 'numpyy'",
    "TypeError: 'NoneType' object is not subscriptable",
    "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.csv'",
    "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    d['k']\n"
    "KeyError: 'k'",
])  # fmt: skip
def test_unrelated_text_finds_nothing(text):
    search = find(text)
    assert search.best is None, (text, search.matches)


@pytest.mark.parametrize("text", [
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle)`",
    "ModuleNotFoundError: No module named 'torch.fx'",
    "ModuleNotFoundError: No module named 'torch._dynamo'",
    "AttributeError: module 'torch' has no attribute 'compile'",
    "AttributeError: module 'torch.utils' has no attribute 'data'",
    "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
    "before calling NumCudaDevices() that might have already set an error? Error 802: system "
    "not yet initialized",
    "OSError: [Errno 2] No such file or directory: 'checkpoints/last.pt'",
])  # fmt: skip
def test_a_torch_error_the_catalogue_lacks_is_not_passed_off_as_another(text):
    """Near misses: another CUDA error, another module or attribute, another error number. Each
    reads much like an entry's message; offering that entry would give the wrong advice."""
    search = find(text)
    assert search.best is None, (text, search.matches)


def test_a_line_that_follows_every_cuda_error_says_to_paste_the_one_above():
    search = find("For debugging consider passing CUDA_LAUNCH_BLOCKING=1")
    assert search.best is None and "paste the line above it" in search.refused


def test_the_names_and_numbers_that_name_an_error_still_find_it():
    assert find("ImportError: cannot import name 'container_abcs' from 'torch._six' "
                "(/usr/lib/python3/torch/_six.py)").best == "torch-six"  # fmt: skip
    error_804 = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 804: forward "
                 "compatibility was attempted on non supported HW")  # fmt: skip
    assert find(error_804).best == "cuda-error-804"


@pytest.mark.parametrize("text", [
    "x" * 1_000_000, "a b\n" * 200_000, "\x00\x1b[31m\x7f" * 100_000,
    "**bold** <script>alert(1)</script> [l](javascript:x) $x$ " * 10_000,
    "import pathlib\npathlib.Path('/tmp/pwned-by-the-doctor').touch()\n" * 100,
])  # fmt: skip
def test_hostile_text_is_read_from_its_end_and_never_run(text):
    search = find(text)
    assert search.read_chars == min(len(text), MAX_QUERY_CHARS)
    assert search.best is None
    assert not Path("/tmp/pwned-by-the-doctor").exists()


def test_a_real_message_at_the_end_of_a_huge_paste_is_found():
    text = (
        "noise line\n" * 100_000
        + "RuntimeError: Trying to backward through the graph a second time"
    )
    assert find(text).best == "backward-twice"


def test_limit_is_checked():
    with pytest.raises(ValueError, match="limit must be at least 1, got 0"):
        find("anything at all", limit=0)


@settings(max_examples=50, deadline=None)
@given(
    st.integers(0, 10**9),
    st.integers(1, 4096),
    st.sampled_from(["cpu", "cuda:3"]),
    st.sampled_from(["/home/a/b.py", "C:\\Users\\x\\y.py", "/opt/conda/lib/torch.py"]),
)
def test_what_differs_between_runs_does_not_count(number, size, device, path):
    base = "index 1 is out of bounds for dimension 0 with size 2 at /x/y.cpp:10 on cpu 0x1f"
    varied = (f"index {number} is out of bounds for dimension {size % 7} with size {size} at "
              f"{path}:{size} on {device} {hex(number)}")  # fmt: skip
    assert stable_text(varied) == stable_text(base)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 512), min_size=1, max_size=4))
def test_a_message_with_any_shape_finds_its_entry(shape):
    size = ", ".join(map(str, [1, *shape]))
    text = (
        "ValueError: Expected more than 1 value per channel when training, "
        f"got input size torch.Size([{size}])"
    )
    assert find(text).best == "batch-of-one"


@pytest.mark.parametrize("line, key", [
    ("Check the documentation of torch.load to learn more about types accepted by default with "
     "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.", "load-whole-model"),
    ("RuntimeError: Error building extension 'my_ops'", "extension-cxx-std"),
    ("[rank0]: RuntimeError: Expected to have finished reduction in the prior iteration before "
     "starting a new one.", "prior-reduction"),
])  # fmt: skip
def test_a_tracebacks_literal_last_line_finds_its_entry(line, key):
    assert find(line).best == key
