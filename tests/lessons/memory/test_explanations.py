"""The memory page's words and the pure pieces of its controls: explanations, the Allocate
form's request, the shared GPU's measuring device, the snippet log, the tables' rows."""

from __future__ import annotations

import dataclasses
import doctest

import pytest

from core.text import T
from lessons.memory import backends, cuda_snippet, explanations, figures, gpu_memory
from lessons.memory.allocator_sim import MiB
from lessons.memory.backends import SimulatedGpu, TensorLedger
from lessons.memory.gpu_memory import NvmlProcess
from lessons.memory.scenarios import Step, run_scenario


@pytest.mark.parametrize("module", [explanations, backends, figures, gpu_memory, cuda_snippet])
def test_docstring_examples(module):
    assert doctest.testmod(module).failed == 0


# ------------------------------------------------------------------ explanations
def test_metric_cells_follow_the_state():
    gpu = SimulatedGpu(8)
    cells = explanations.metric_cells(gpu.state())
    assert [value for _label, value, _help in cells] == [
        "0 bytes",
        "0 bytes",
        "512.00 MiB",  # the simulated CUDA context
        "512.00 MiB",
        0,
    ]
    assert cells[2][2] == "NVML's number, what nvidia-smi shows (simulated)"
    unread = dataclasses.replace(gpu.state(), device_used=None, simulated=False)
    cells = explanations.metric_cells(unread)
    assert cells[2][1] == cells[3][1] == "n/a" and isinstance(cells[2][1], T)
    assert cells[2][2] == "NVML's number, what nvidia-smi shows"
    assert cells[3][2].template == "The grey band: {what}."
    assert cells[3][2].args["what"] == figures.BAND_LABEL


def test_simulated_notice_says_when_there_is_no_gpu():
    gpu = SimulatedGpu(24)
    assert "(no GPU here)" in explanations.simulated_notice(gpu, has_gpu=False)
    assert "(no GPU here)" not in explanations.simulated_notice(gpu, has_gpu=True)
    assert explanations.real_device_notice("cuda:1").startswith("Real device cuda:1:")


# ------------------------------------------------------------------ the Allocate form
def test_form_request_by_size_and_by_shape():
    assert backends.form_request(False, 3.0, "MB") == backends.AllocationRequest(
        3 * MiB, "3 MB", None, "uint8"
    )
    ask = backends.form_request(True, shape_text="(3, 224, 224)", dtype="float16")
    assert (ask.nbytes, ask.shape, ask.dtype) == (3 * 224 * 224 * 2, (3, 224, 224), "float16")


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"by_shape": False, "size": None, "unit": "GB"}, "size is empty"),
        ({"by_shape": True, "shape_text": "ten, 3"}, "shape must be comma-separated"),
        ({"by_shape": False, "size": 9.0, "unit": "GB", "max_bytes": MiB}, "Refused: 9.00 GiB"),
    ],
)
def test_form_request_exception(form, message):
    with pytest.raises(ValueError, match=message):
        backends.form_request(**form)


def test_refusal_message_adds_a_hint_unless_refused():
    with pytest.raises(ValueError) as shape_error:
        backends.parse_shape("ten, 3")
    message = backends.refusal_message(shape_error.value)
    assert message.endswith(". Hint: a positive size, or a shape like '1024, 1024'.")
    with pytest.raises(ValueError) as too_big:
        backends.request_bytes(9.0, "GB", max_bytes=MiB)
    refused = backends.refusal_message(too_big.value)
    assert refused.startswith("Refused: 9.00 GiB") and "Hint" not in refused
    assert refused.endswith("you asked for 9 GB.")


def test_is_usable_shape_refuses_long_or_unparsable_text():
    assert backends.is_usable_shape("1024, 1024")
    assert not backends.is_usable_shape("ten, 3")
    assert not backends.is_usable_shape("7" * (backends.SHAPE_MAX_CHARS + 1))


@pytest.mark.parametrize(
    ("device", "policy", "expected"),
    [
        ("cuda:0", "exclusive", "cuda:0"),
        ("cuda:0", "shared", "cpu"),
        ("cuda:0", "bogus", "cpu"),  # the page shows the setting's error at the top
        ("cpu", "exclusive", "cpu"),
    ],
)
def test_measuring_device(device, policy, expected):
    assert backends.measuring_device(device, {backends.GPU_MEMORY_ENV: policy}) == expected


# ------------------------------------------------------------------ the snippet log
def test_snippet_log_restarts_with_a_scenario_and_forgets_a_backend():
    gpu, ledger, log = SimulatedGpu(8), TensorLedger(), cuda_snippet.SnippetLog()
    log.add(gpu.key, [Step("alloc", name="t9", nbytes=4)])
    run = run_scenario("reuse", gpu, ledger)
    log.restart(gpu.key, run, {h.id for h in ledger.held(gpu.key)})
    assert log.steps[gpu.key] == list(run.scenario.steps)
    assert sorted(log.name(h.id) for h in ledger.held(gpu.key)) == ["a", "b", "c", "d"]
    assert log.name(999) == "t999"
    assert "t9 = alloc(" not in log.snippet(gpu.key, "cuda:0")
    log.forget(gpu.key)
    assert log.snippet(gpu.key, "cuda:0") is None


# ------------------------------------------------------------------ tables' rows
def test_process_rows_mark_the_server_and_translatable_texts():
    rows = gpu_memory.process_rows((NvmlProcess(1, 2 * MiB), NvmlProcess(2, None)), own_pid=2)
    assert rows == [
        {"pid": 1, "who": "", "used": "2.00 MiB"},
        {"pid": 2, "who": "this app's server", "used": "n/a"},
    ]
    assert all(isinstance(k, T) for k in rows[0] if k != "pid")
    assert isinstance(rows[1]["who"], T) and not isinstance(rows[0]["used"], T)
