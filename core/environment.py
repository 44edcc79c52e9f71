"""Live facts about the software and hardware the app runs on.

Every value comes from a call made now; a source that cannot be read yields a
fact whose value is ``None`` and whose ``note`` says why, instead of raising.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import metadata

import torch

NOT_AVAILABLE = "not available"


@dataclass(frozen=True)
class EnvFact:
    """One row of the environment panel.

    Attributes:
        group: section heading, e.g. ``"Versions"`` or ``"GPU 0"``.
        name: what is measured, e.g. ``"torch.__version__"``.
        value: the reading as text, or ``None`` when it could not be read.
        note: where ``value`` is ``None``, the reason; otherwise an optional remark.
    """

    group: str
    name: str
    value: str | None
    note: str = ""

    @property
    def shown(self) -> str:
        return self.value if self.value is not None else NOT_AVAILABLE


def available_devices() -> list[str]:
    """``["cpu"]`` plus ``"cuda:N"`` for every GPU PyTorch can use.

    ``torch.cuda.is_available()`` asks the driver through NVML where it can, so a
    CPU-only machine gets its answer without creating a CUDA context.
    """
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices += [f"cuda:{index}" for index in range(torch.cuda.device_count())]
    return devices


def _package_version(dist_name: str) -> EnvFact:
    try:
        return EnvFact("Versions", dist_name, metadata.version(dist_name))
    except metadata.PackageNotFoundError:
        return EnvFact("Versions", dist_name, None, "package is not installed")


def _version_facts() -> list[EnvFact]:
    import cv2
    import torchvision

    cuda_build = torch.version.cuda
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return [
        EnvFact("Versions", "torch.__version__", torch.__version__),
        EnvFact(
            "Versions",
            "torch.version.cuda",
            cuda_build,
            "" if cuda_build else "this torch build has no CUDA support (CPU-only wheel)",
        ),
        EnvFact(
            "Versions",
            "cuDNN",
            str(cudnn) if cudnn else None,
            "" if cudnn else "cuDNN is not loadable in this build",
        ),
        EnvFact("Versions", "torchvision", torchvision.__version__),
        EnvFact("Versions", "OpenCV (cv2)", cv2.__version__),
        _package_version("streamlit"),
    ]


def _cuda_facts() -> list[EnvFact]:
    available = torch.cuda.is_available()
    facts = [
        EnvFact(
            "CUDA",
            "torch.cuda.is_available()",
            str(available),
            "" if available else _why_no_cuda(),
        ),
        EnvFact("CUDA", "device count", str(torch.cuda.device_count() if available else 0)),
    ]
    if available:
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            facts.append(EnvFact(f"GPU {index}", "name", props.name))
            facts.append(
                EnvFact(f"GPU {index}", "total memory", f"{props.total_memory / 2**30:.1f} GiB")
            )
    return facts


def _why_no_cuda() -> str:
    if torch.version.cuda is None:
        return "this torch build has no CUDA support"
    return "no NVIDIA GPU or driver was found"


def nvml_driver_version() -> tuple[str | None, str]:
    """The NVIDIA driver version through NVML, or ``(None, reason)``."""
    try:
        import pynvml
    except ImportError:
        return None, "nvidia-ml-py (pynvml) is not installed"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as error:
        return None, f"NVML could not start: {error}"
    try:
        version = pynvml.nvmlSystemGetDriverVersion()
        return (version.decode() if isinstance(version, bytes) else str(version)), ""
    except pynvml.NVMLError as error:
        return None, f"NVML could not read the driver version: {error}"
    finally:
        pynvml.nvmlShutdown()


def _cpu_facts() -> list[EnvFact]:
    return [
        EnvFact("CPU", "torch.get_num_threads()", str(torch.get_num_threads())),
        EnvFact("CPU", "os.cpu_count()", str(os.cpu_count())),
    ]


def _reproducibility_facts() -> list[EnvFact]:
    return [
        EnvFact(
            "Reproducibility",
            "torch.backends.cudnn.deterministic",
            str(torch.backends.cudnn.deterministic),
        ),
        EnvFact(
            "Reproducibility", "torch.backends.cudnn.benchmark", str(torch.backends.cudnn.benchmark)
        ),
        EnvFact(
            "Reproducibility",
            "torch.are_deterministic_algorithms_enabled()",
            str(torch.are_deterministic_algorithms_enabled()),
        ),
    ]


def collect_environment() -> list[EnvFact]:
    """Read every fact shown in the Home page's environment panel.

    Returns:
        Rows grouped as Versions, CUDA, GPU N (one group per GPU), NVML, CPU and
        Reproducibility. Never raises for a missing GPU, driver or NVML library.
    """
    driver, reason = nvml_driver_version()
    nvml = [EnvFact("NVML", "driver version", driver, reason)]
    return [
        *_version_facts(),
        *_cuda_facts(),
        *nvml,
        *_cpu_facts(),
        *_reproducibility_facts(),
    ]
