"""torch.load and map_location (the notes, 000:63 and 000:76): lessons.memory.map_location."""

from __future__ import annotations

import io
import re

import pytest
import torch

from core.notes import run_live
from lessons.memory import map_location as ml

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_saved_state_dict_carries_the_device_tag():
    raw, rewritten = ml.saved_state_dict("cuda:0")
    assert rewritten == (not torch.cuda.is_available())
    seen: list[str] = []
    state = torch.load(
        io.BytesIO(raw), weights_only=True, map_location=lambda s, loc: seen.append(loc) or s
    )
    assert seen == ["cuda:0", "cuda:0"]
    assert state["weight"].shape == (256, 256)
    assert state["weight"][1, 0].item() == pytest.approx(256 / 1e4)
    cpu_raw, cpu_rewritten = ml.saved_state_dict("cpu")
    assert not cpu_rewritten
    with pytest.raises(ValueError, match="no device tag 'cuda:7'"):
        ml.retag_archive(cpu_raw, "cuda:7", "cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU-only outcomes")
def test_map_location_demo_on_cpu():
    demo = ml.map_location_demo(world_size=3)
    assert demo.rewritten and demo.location_tags == ("cuda:0", "cuda:0")
    assert demo.nbytes == (256 * 256 + 256) * 4
    outcomes = [(a.device, (a.error or "").split(":")[0]) for a in demo.attempts]
    assert outcomes == [
        (None, "RuntimeError"),
        ("cpu", ""),
        ("cpu", ""),
        ("cpu", ""),
        (None, "RuntimeError"),
    ]
    assert "Attempting to deserialize object on a CUDA device" in demo.attempts[0].error
    assert [(w.default_device, w.mapped_device) for w in demo.workers] == [
        ("cuda:0", "cuda:0"),
        ("cuda:0", "cuda:1"),
        ("cuda:0", "cuda:2"),
    ]
    assert demo.gpu0_bytes_without_map_location == 3 * demo.nbytes


@pytest.mark.cuda
@needs_cuda
def test_cuda_map_location_demo():
    demo = ml.map_location_demo(world_size=2)
    assert not demo.rewritten
    assert demo.attempts[0].device == "cuda:0" and demo.attempts[1].device == "cpu"


def test_map_location_snippet_runs():
    run = run_live(ml.MAP_LOCATION_SNIPPET)
    assert not run.raised, run.error
    lines = run.output.splitlines()
    assert lines[0] == "device tags in the file: ['cuda:0']"
    assert lines[2:] == ["['map_location'] -> cpu", "['map_location'] -> cpu"]
    if not torch.cuda.is_available():
        assert lines[1].startswith("no map_location -> Attempting to deserialize object on a CUDA")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"world_size": 0}, "world_size must be 1..16, got 0"),
        ({"saved_device": "gpu0"}, "saved_device must look like 'cuda:0', got 'gpu0'"),
    ],
)
def test_map_location_exception(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        ml.map_location_demo(**kwargs)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU-only outcomes")
def test_map_location_rows_and_texts():
    demo = ml.map_location_demo(world_size=2)
    attempts = ml.attempt_rows(demo)
    assert [row["lands on"] for row in attempts] == ["raises", "cpu", "cpu", "cpu", "raises"]
    assert attempts[0]["error"].startswith("RuntimeError: ") and attempts[1]["error"] == ""
    workers = ml.worker_rows(demo)
    assert [(w["no map_location"], w["map_location=f'cuda:{rank}'"]) for w in workers] == [
        ("cuda:0", "cuda:0"),
        ("cuda:0", "cuda:1"),
    ]
    text = ml.ballooning_text(demo)
    assert "each of the 2 worker processes" in text and "f'cuda:{local_rank}'" in text
    assert ml.rewritten_notice(demo).endswith("reads the tags ['cuda:0'].")
