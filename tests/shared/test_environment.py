"""Tests for core/environment.py: the live facts behind the Home page's environment panel."""

from __future__ import annotations

import inspect
import os
import sys
from importlib import metadata
from types import SimpleNamespace

import cv2
import pynvml
import pytest
import torch
import torchvision

from core import environment, seeding
from core.environment import (
    NOT_AVAILABLE,
    EnvFact,
    available_devices,
    collect_environment,
    nvml_driver_version,
)
from core.notes import NotesCallout, NotesRef, normalise_notes_text, notes_lines
from tests.notes_marks import needs_notes
from tests.sources import sources

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


# ------------------------------------------------------------------------------------------
# torch.cuda.is_available(): NVML only with PYTORCH_NVML_BASED_CUDA_CHECK=1
# ------------------------------------------------------------------------------------------


class TestCudaCheck:
    def test_docstring_no_longer_claims_nvml_by_default(self):
        doc = " ".join(available_devices.__doc__.split())
        assert "NVML where it can" not in doc
        assert "PYTORCH_NVML_BASED_CUDA_CHECK=1" in doc
        assert "cudaGetDeviceCount" in doc

    def test_no_module_claims_is_available_asks_nvml(self):
        # The wrong claim lived in more than one docstring; none may bring it back.
        for path in sources("core/**/*.py", "lessons/**/*.py", "ui/*.py"):
            text = " ".join(path.read_text().split())
            assert "is_available()`` asks NVML" not in text, path
            assert "NVML where it can" not in text, path

    def test_installed_torch_gates_nvml_on_the_variable(self):
        source = inspect.getsource(torch.cuda.is_available)
        assert "_nvml_based_avail()" in source
        assert 'os.getenv("PYTORCH_NVML_BASED_CUDA_CHECK") == "1"' in inspect.getsource(
            torch.cuda._nvml_based_avail
        )

    @pytest.mark.skipif(not torch.cuda._is_compiled(), reason="a CPU-only torch never asks")
    @pytest.mark.parametrize(
        ("value", "expected"), [(None, "runtime"), ("0", "runtime"), ("1", "nvml")]
    )
    def test_which_check_runs(self, monkeypatch, value, expected):
        calls = []
        monkeypatch.setattr(torch._C, "_cuda_getDeviceCount", lambda: calls.append("runtime") or 0)
        monkeypatch.setattr(torch.cuda, "_device_count_nvml", lambda: calls.append("nvml") or 0)
        monkeypatch.setattr(torch.cuda, "_cached_device_count", None)
        monkeypatch.setattr(torch.cuda, "_initialized", False)
        if value is None:
            monkeypatch.delenv(environment.NVML_CHECK_VAR, raising=False)
        else:
            monkeypatch.setenv(environment.NVML_CHECK_VAR, value)
        assert torch.cuda.is_available() is False
        assert calls[0] == expected
        fact = environment.cuda_check_fact()
        assert fact.value == ("unset" if value is None else value)
        if expected == "nvml":
            assert fact.note.startswith("set to 1: is_available() asks NVML")
        else:
            assert "calls the CUDA runtime's cudaGetDeviceCount" in fact.note
            assert "NVML is used only when this is 1" in fact.note

    def test_fact_is_in_the_panel(self, monkeypatch):
        monkeypatch.setenv(environment.NVML_CHECK_VAR, "1")
        rows = by_name(collect_environment())
        assert rows["CUDA", environment.NVML_CHECK_VAR].value == "1"
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
        assert by_name(collect_environment())["CUDA", "CUDA_VISIBLE_DEVICES"].value == "3"


# ------------------------------------------------------------------------------------------
# CUDA_VISIBLE_DEVICES and collect_env, in fresh processes
# ------------------------------------------------------------------------------------------


def fake_case(label: str, count: int | None) -> environment.VisibleDevicesCase:
    run = environment.CommandRun("cmd", 0, "" if count is None else f"{count}\n", "", 0.1)
    return environment.VisibleDevicesCase(label, None, run)


class TestVisibleDevices:
    def test_live_demo(self):
        demo = environment.visible_devices_demo()
        assert [case.label for case in demo.cases] == [
            "-1: hide every GPU",
            '"" (empty): hide every GPU',
            "set in the script, before CUDA starts",
            "set in the script, after CUDA started",
        ]
        assert all(case.run.ok for case in demo.cases), [c.run.stderr for c in demo.cases]
        counts = [case.count for case in demo.cases]
        assert counts[:3] == [0, 0, 0]  # hidden, whatever the machine has
        assert counts[3] == demo.parent_count  # too late: no effect
        assert demo.cases[0].run.command == (
            'CUDA_VISIBLE_DEVICES="-1" python -c "import torch; print(torch.cuda.device_count())"'
        )
        assert demo.cases[1].run.command.startswith('CUDA_VISIBLE_DEVICES="" python -c')
        if demo.parent_count == 0:
            assert demo.explanation.startswith("Every count is 0: this machine has no GPU")
        else:
            assert "the variable is read once, when CUDA initialises" in demo.explanation

    def test_explanations(self):
        cases = tuple(fake_case(str(i), n) for i, n in enumerate([0, 0, 0, 2]))
        text = environment.explain_visible_devices(2, cases)
        assert text.startswith("This server process sees 2 GPU(s).")
        assert "a process sees 0" in text and "still sees 2" in text
        assert "later changes do nothing" in text
        late = tuple(fake_case(str(i), n) for i, n in enumerate([0, 0, 0, 0]))
        assert "the late change took effect" in environment.explain_visible_devices(2, late)
        broken = (fake_case("a", None), *cases[1:])
        assert environment.explain_visible_devices(2, broken).startswith(
            "Some runs printed no device count (a)"
        )

    def test_run_python_reports_failures(self):
        run = environment.run_python(["-c", "import sys; sys.exit(3)"], "exit 3", timeout=60)
        assert (run.returncode, run.ok, run.error) == (3, False, None)
        slow = environment.run_python(["-c", "import time; time.sleep(5)"], "sleep", timeout=0.5)
        assert slow.error == "timed out after 0.5 s" and not slow.ok
        with pytest.raises(ValueError, match="timeout must be positive, got 0"):
            environment.run_python(["-c", "pass"], "x", timeout=0)

    def test_env_updates(self, monkeypatch):
        monkeypatch.setenv("TP_TEST_VAR", "kept")
        code = "import os; print(os.environ.get('TP_TEST_VAR'), os.environ.get('TP_NEW'))"
        run = environment.run_python(
            ["-c", code], "x", {"TP_TEST_VAR": None, "TP_NEW": "1"}, timeout=60
        )
        assert run.stdout.split() == ["None", "1"]

    @needs_notes
    def test_notes_code_is_verbatim(self):
        ref = NotesRef.parse(environment.NOTES_VISIBLE_DEVICES_REF)
        assert normalise_notes_text(environment.NOTES_VISIBLE_DEVICES_CODE) == notes_lines(ref)
        shell = NotesRef.parse(environment.NOTES_VISIBLE_DEVICES_SHELL_REF)
        assert notes_lines(shell) == environment.NOTES_VISIBLE_DEVICES_SHELL


class TestCollectEnv:
    def test_live_report(self):
        report = environment.collect_env_report()
        assert report.ok, report.stderr
        assert report.command == "python -m torch.utils.collect_env"
        assert f"PyTorch version: {torch.__version__}" in report.stdout
        assert f"Is CUDA available: {torch.cuda.is_available()}" in report.stdout


# ------------------------------------------------------------------------------------------
# The notes say / PyTorch today does
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def callouts() -> dict[str, NotesCallout]:
    saved = (torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    result = {callout.key: callout for callout in environment.notes_callouts()}
    assert (torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark) == saved
    return result


class TestCallouts:
    def test_keys_refs_and_verdicts(self, callouts):
        assert {key: (str(c.ref), c.verdict) for key, c in callouts.items()} == {
            "init_seeds_torch_only": ("000:32", "incomplete"),
            "manual_seed_cpu_only": ("004:20", "incomplete"),
            "cudnn_deterministic_not_enough": ("004:22", "incomplete"),
            "cuda_visible_devices_order": ("004:33", "wrong"),
            "collect_env_path": ("002:1289", "out of date"),
        }
        # Each quote is found at its line by tests/shared/test_notes.py (which skips without
        # the notes).

    def test_init_seeds(self, callouts):
        callout = callouts["init_seeds_torch_only"]
        assert not callout.run.raised
        assert callout.run.output.splitlines() == [
            "random repeats after init_seeds(1): False",
            "numpy repeats after init_seeds(1): False",
            "torch repeats after init_seeds(1): True",
        ]
        assert callout.today_text.startswith("Only torch's draws repeat; random and numpy do not")
        assert "only when seed == 0" in callout.today_text

    def test_manual_seed(self, callouts):
        callout = callouts["manual_seed_cpu_only"]
        assert callout.run.output.splitlines()[0].endswith("with: [123]")
        assert "on all devices" in callout.run.output
        assert callout.today_text.startswith(
            "torch.manual_seed seeds every device, not only the CPU"
        )

    def test_cudnn_is_not_enough(self, callouts):
        callout = callouts["cudnn_deterministic_not_enough"]
        assert "use_deterministic_algorithms: False" in callout.run.output
        count = len(seeding.deterministic_ops().made_deterministic)
        assert callout.today_text.startswith(
            "cudnn.deterministic=True leaves torch.are_deterministic_algorithms_enabled() False"
        )
        assert f"Of the {count} operations" in callout.today_text
        if not torch.cuda.is_available():
            assert callout.today_text.endswith("There is no GPU here, so the CUDA run is skipped.")

    def test_device_order(self, callouts):
        callout = callouts["cuda_visible_devices_order"]
        assert "torch.device('cuda').index: None" in callout.run.output
        assert callout.today_text.startswith("PyTorch does not move on to GPU 1")

    def test_collect_env(self, callouts):
        callout = callouts["collect_env_path"]
        assert callout.run.output.splitlines() == [
            "importable as: torch.utils.collect_env",
            "has main(): True",
        ]
        today = callout.today_text
        assert "`python -m torch.utils.collect_env` runs it from any directory" in today

    @pytest.mark.parametrize(
        ("builder", "code_name", "confident"),
        [
            ("_device_order_callout", "DEVICE_ORDER_CODE", "wrong"),
            ("_collect_env_callout", "COLLECT_ENV_CODE", "out of date"),
        ],
    )
    def test_a_failed_check_claims_no_verdict(self, monkeypatch, builder, code_name, confident):
        # A snippet that raises proves nothing about the notes: no confident badge.
        monkeypatch.setattr(environment, code_name, "raise RuntimeError('no check')")
        callout = getattr(environment, builder)()
        assert callout.run.raised
        assert callout.verdict == "incomplete" != confident
