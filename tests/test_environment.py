"""Tests for core/environment.py: the live facts behind the Home page's environment panel."""

from __future__ import annotations

import os
import sys
from importlib import metadata
from types import SimpleNamespace

import cv2
import pynvml
import pytest
import torch
import torchvision

from core import environment
from core.environment import (
    NOT_AVAILABLE,
    EnvFact,
    available_devices,
    collect_environment,
    nvml_driver_version,
)

REQUIRED = [
    ("Versions", "torch.__version__"),
    ("Versions", "torch.version.cuda"),
    ("Versions", "cuDNN"),
    ("Versions", "torchvision"),
    ("Versions", "OpenCV (cv2)"),
    ("Versions", "streamlit"),
    ("CUDA", "torch.cuda.is_available()"),
    ("CUDA", "device count"),
    ("NVML", "driver version"),
    ("CPU", "torch.get_num_threads()"),
]


def by_name(facts: list[EnvFact]) -> dict[tuple[str, str], EnvFact]:
    return {(fact.group, fact.name): fact for fact in facts}


def fake_gpus(monkeypatch, count: int) -> None:
    """Pretend PyTorch sees ``count`` GPUs, without touching a driver."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    monkeypatch.setattr(
        torch.cuda,
        "get_device_properties",
        lambda index: SimpleNamespace(name=f"Fake GPU {index}", total_memory=80 * 2**30),
    )


class TestCollectEnvironment:
    def test_smoke(self):
        facts = collect_environment()
        assert facts and all(isinstance(fact, EnvFact) for fact in facts)

    @pytest.mark.parametrize(("group", "name"), REQUIRED)
    def test_required_rows(self, group, name):
        assert (group, name) in by_name(collect_environment())

    def test_every_row_has_a_value_or_a_reason(self):
        for fact in collect_environment():
            assert fact.value is not None or fact.note, fact
            assert fact.shown == (fact.value if fact.value is not None else NOT_AVAILABLE)

    def test_matches_live_calls(self):
        rows = by_name(collect_environment())
        assert rows["Versions", "torch.__version__"].value == torch.__version__
        assert rows["Versions", "torch.version.cuda"].value == torch.version.cuda
        assert rows["Versions", "torchvision"].value == torchvision.__version__
        assert rows["Versions", "OpenCV (cv2)"].value == cv2.__version__
        assert rows["Versions", "streamlit"].value == metadata.version("streamlit")
        assert rows["CUDA", "torch.cuda.is_available()"].value == str(torch.cuda.is_available())
        assert rows["CPU", "torch.get_num_threads()"].value == str(torch.get_num_threads())
        assert rows["CPU", "os.cpu_count()"].value == str(os.cpu_count())
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        assert rows["Versions", "cuDNN"].value == (str(cudnn) if cudnn else None)
        assert rows["Reproducibility", "torch.backends.cudnn.deterministic"].value == str(
            torch.backends.cudnn.deterministic
        )

    def test_values_are_read_live(self, monkeypatch):
        # not cached at import: a changed thread count shows on the next call
        before = torch.get_num_threads()
        monkeypatch.setattr(torch, "get_num_threads", lambda: before + 5)
        rows = by_name(collect_environment())
        assert rows["CPU", "torch.get_num_threads()"].value == str(before + 5)

    @pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU machine")
    def test_no_gpu_here(self):
        rows = by_name(collect_environment())
        cuda = rows["CUDA", "torch.cuda.is_available()"]
        assert cuda.value == "False"
        assert cuda.note  # says why
        assert rows["CUDA", "device count"].value == "0"
        assert not any(fact.group.startswith("GPU ") for fact in rows.values())

    def test_cuda_unavailable_reasons(self, monkeypatch):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        monkeypatch.setattr(torch.version, "cuda", "12.4")
        row = by_name(collect_environment())["CUDA", "torch.cuda.is_available()"]
        assert (row.value, row.note) == ("False", "no NVIDIA GPU or driver was found")
        monkeypatch.setattr(torch.version, "cuda", None)
        rows = by_name(collect_environment())
        assert "no CUDA support" in rows["CUDA", "torch.cuda.is_available()"].note
        assert rows["Versions", "torch.version.cuda"].value is None
        assert "CPU-only" in rows["Versions", "torch.version.cuda"].note

    def test_cudnn_missing(self, monkeypatch):
        monkeypatch.setattr(torch.backends.cudnn, "is_available", lambda: False)
        row = by_name(collect_environment())["Versions", "cuDNN"]
        assert row.value is None and row.shown == NOT_AVAILABLE and row.note

    def test_package_missing(self, monkeypatch):
        real_version = metadata.version

        def version(name):
            if name == "streamlit":
                raise metadata.PackageNotFoundError(name)
            return real_version(name)

        monkeypatch.setattr(environment.metadata, "version", version)
        row = by_name(collect_environment())["Versions", "streamlit"]
        assert row.value is None and "not installed" in row.note

    def test_gpu_rows_with_fake_gpus(self, monkeypatch):
        fake_gpus(monkeypatch, 2)
        monkeypatch.setattr(
            environment, "nvml_driver_version", lambda: ("550.54.15", "")
        )  # keep NVML out of it
        rows = by_name(collect_environment())
        assert rows["CUDA", "torch.cuda.is_available()"].value == "True"
        assert rows["CUDA", "device count"].value == "2"
        assert rows["GPU 0", "name"].value == "Fake GPU 0"
        assert rows["GPU 1", "name"].value == "Fake GPU 1"
        assert rows["GPU 1", "total memory"].value == "80.0 GiB"
        assert rows["NVML", "driver version"].value == "550.54.15"

    @pytest.mark.cuda
    @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
    def test_real_gpu_rows(self):
        rows = by_name(collect_environment())
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            assert rows[f"GPU {index}", "name"].value == props.name
            assert rows[f"GPU {index}", "total memory"].value.endswith("GiB")
        assert rows["NVML", "driver version"].value  # a machine with a GPU has a driver


class TestAvailableDevices:
    def test_matches_live_calls(self):
        expected = ["cpu"]
        if torch.cuda.is_available():
            expected += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
        assert available_devices() == expected

    def test_cpu_only(self, monkeypatch):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        assert available_devices() == ["cpu"]

    def test_with_gpus(self, monkeypatch):
        fake_gpus(monkeypatch, 3)
        assert available_devices() == ["cpu", "cuda:0", "cuda:1", "cuda:2"]

    def test_devices_are_valid_torch_devices(self):
        for name in available_devices():
            assert str(torch.device(name)) == name


class TestNvml:
    def test_library_not_found(self, monkeypatch):
        def fail():
            raise pynvml.NVMLError_LibraryNotFound()

        monkeypatch.setattr(pynvml, "nvmlInit", fail)
        version, reason = nvml_driver_version()
        assert version is None
        assert "NVML could not start" in reason and "Not Found" in reason
        row = by_name(collect_environment())["NVML", "driver version"]
        assert row.value is None and row.shown == NOT_AVAILABLE and row.note == reason

    def test_module_missing(self, monkeypatch):
        monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` fail
        version, reason = nvml_driver_version()
        assert version is None and "not installed" in reason

    def test_success_decodes_bytes_and_shuts_down(self, monkeypatch):
        calls = []
        monkeypatch.setattr(pynvml, "nvmlInit", lambda: calls.append("init"))
        monkeypatch.setattr(pynvml, "nvmlSystemGetDriverVersion", lambda: b"550.54.15")
        monkeypatch.setattr(pynvml, "nvmlShutdown", lambda: calls.append("shutdown"))
        assert nvml_driver_version() == ("550.54.15", "")
        assert calls == ["init", "shutdown"]

    def test_read_failure_still_shuts_down(self, monkeypatch):
        calls = []

        def fail():
            raise pynvml.NVMLError_NotSupported()

        monkeypatch.setattr(pynvml, "nvmlInit", lambda: calls.append("init"))
        monkeypatch.setattr(pynvml, "nvmlSystemGetDriverVersion", fail)
        monkeypatch.setattr(pynvml, "nvmlShutdown", lambda: calls.append("shutdown"))
        version, reason = nvml_driver_version()
        assert version is None and "could not read the driver version" in reason
        assert calls == ["init", "shutdown"]

    @pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU machine")
    def test_live_without_driver(self):
        version, reason = nvml_driver_version()
        assert version is None and reason
