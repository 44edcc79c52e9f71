"""GPU readings never crash and say why a source is unavailable; backends, ledger, scenarios."""

from __future__ import annotations

import gc
import re
import sys
import types

import pytest
import torch

from lessons.memory import gpu_memory
from lessons.memory.allocator_sim import CachingAllocatorSim, GiB, MiB, SimulatedOutOfMemory
from lessons.memory.backends import (
    SimulatedGpu,
    TensorLedger,
    allocate,
    empty_cache,
    free_all,
    free_tensors,
    parse_shape,
    request_bytes,
    reset_peak,
)
from lessons.memory.cuda_snippet import snippet_for
from lessons.memory.figures import fragmentation_figure, live_chart, live_point, segment_map
from lessons.memory.scenarios import SCENARIOS, run_scenario, run_steps


@pytest.fixture(autouse=True)
def _fresh_nvml():
    gpu_memory.reset_nvml()
    yield
    gpu_memory.reset_nvml()


class TestTorchReading:
    def test_smoke(self):
        reading = gpu_memory.read_torch()
        if torch.cuda.is_available():
            assert reading.available and reading.devices
        else:
            assert not reading.available
            assert reading.reason in (gpu_memory.NO_GPU, gpu_memory.NO_CUDA_BUILD)
            assert not torch.cuda.is_initialized()  # reading created no CUDA context

    def test_no_cuda_build(self, monkeypatch):
        monkeypatch.setattr(torch.version, "cuda", None)
        monkeypatch.setattr(torch.version, "hip", None, raising=False)
        assert gpu_memory.read_torch() == gpu_memory.TorchReading(False, "no CUDA build")

    def test_no_gpu(self, monkeypatch):
        monkeypatch.setattr(torch.version, "cuda", "13.0")
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        reading = gpu_memory.read_torch()
        assert not reading.available and reading.reason == "no GPU"

    def test_uninitialized_gpu_is_not_touched(self, monkeypatch):
        """With a GPU that torch has not used, no call may create a CUDA context."""
        monkeypatch.setattr(torch.version, "cuda", "13.0")
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
        monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)

        def boom(*args, **kwargs):
            raise AssertionError("would create a CUDA context")

        for name in ("mem_get_info", "get_device_name", "memory_stats", "current_device"):
            monkeypatch.setattr(torch.cuda, name, boom)
        reading = gpu_memory.read_torch()
        assert reading.available and not reading.initialized
        assert [d.index for d in reading.devices] == [0, 1]
        assert all(d.free is None and d.reserved == 0 for d in reading.devices)

    def test_driver_fault_is_reported_not_raised(self, monkeypatch):
        monkeypatch.setattr(torch.version, "cuda", "13.0")
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)

        def fault(*args, **kwargs):
            raise RuntimeError("CUDA error: unspecified launch failure")

        monkeypatch.setattr(torch.cuda, "memory_stats", fault)
        reading = gpu_memory.read_torch()
        assert not reading.available and "unspecified launch failure" in reading.reason


class _FakeNvmlError(Exception):
    pass


def _fake_pynvml(init_error: type[Exception] | None = None) -> types.ModuleType:
    mod = types.ModuleType("pynvml")
    mod.NVMLError = _FakeNvmlError
    mod.NVMLError_LibraryNotFound = type("NVMLError_LibraryNotFound", (_FakeNvmlError,), {})
    mod.NVMLError_DriverNotLoaded = type("NVMLError_DriverNotLoaded", (_FakeNvmlError,), {})
    mod.NVMLError_NotSupported = type("NVMLError_NotSupported", (_FakeNvmlError,), {})
    mod.nvmlMemory_v2 = 2
    mod.calls = []

    def init():
        mod.calls.append("init")
        if init_error is not None:
            raise getattr(mod, init_error.__name__)("boom")

    mod.nvmlInit = init
    mod.nvmlShutdown = lambda: mod.calls.append("shutdown")
    mod.nvmlSystemGetDriverVersion = lambda: b"580.65"
    mod.nvmlDeviceGetCount = lambda: 1
    mod.nvmlDeviceGetHandleByIndex = lambda i: f"h{i}"
    mod.nvmlDeviceGetName = lambda h: "NVIDIA Fake 80GB"

    def memory_info(handle, version=None):
        fields = {"total": 80 * GiB, "free": 79 * GiB, "used": GiB}
        if version:
            fields["reserved"] = 300 * MiB
        return types.SimpleNamespace(**fields)

    mod.nvmlDeviceGetMemoryInfo = memory_info
    mod.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(gpu=7, memory=3)

    mod.nvmlDeviceGetComputeRunningProcesses = lambda h: [
        types.SimpleNamespace(pid=1234, usedGpuMemory=600 * MiB),
        types.SimpleNamespace(pid=99, usedGpuMemory=None),
    ]
    return mod


class TestNvmlReading:
    def test_smoke_never_raises(self):
        reading = gpu_memory.read_nvml()
        assert reading.available or reading.reason

    @pytest.mark.parametrize(
        ("error", "reason"),
        [
            (type("NVMLError_LibraryNotFound", (), {}), "NVML library not found"),
            (type("NVMLError_DriverNotLoaded", (), {}), "driver not loaded"),
        ],
    )
    def test_exception_typed_reasons(self, monkeypatch, error, reason):
        monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml(error))
        reading = gpu_memory.read_nvml()
        assert reading == gpu_memory.NvmlReading(False, reason)

    def test_not_installed(self, monkeypatch):
        monkeypatch.setitem(sys.modules, "pynvml", None)  # import raises ImportError
        assert gpu_memory.read_nvml().reason == "nvidia-ml-py (pynvml) not installed"

    def test_failure_is_cached_then_retried(self, monkeypatch):
        fake = _fake_pynvml(type("NVMLError_DriverNotLoaded", (), {}))
        monkeypatch.setitem(sys.modules, "pynvml", fake)
        gpu_memory.read_nvml()
        gpu_memory.read_nvml()
        assert fake.calls == ["init"]  # not re-tried on every sample
        monkeypatch.setattr(gpu_memory._NVML, "failed_at", -1e9)
        gpu_memory.read_nvml()
        assert fake.calls == ["init", "init"]

    def test_matches_reference_fake_device(self, monkeypatch):
        fake = _fake_pynvml()
        monkeypatch.setitem(sys.modules, "pynvml", fake)
        reading = gpu_memory.read_nvml()
        assert reading.available and reading.driver_version == "580.65"
        (dev,) = reading.devices
        assert (dev.name, dev.total, dev.used, dev.reserved) == (
            "NVIDIA Fake 80GB",
            80 * GiB,
            GiB,
            300 * MiB,
        )
        assert dev.gpu_utilization == 7
        assert dev.processes == (
            gpu_memory.NvmlProcess(1234, 600 * MiB),
            gpu_memory.NvmlProcess(99, None),
        )
        gpu_memory.read_nvml()
        assert fake.calls == ["init"]  # NVML is started once

    def test_nvml_index_mapping(self):
        assert gpu_memory.nvml_index_for_torch(0, "") == 0
        assert gpu_memory.nvml_index_for_torch(1, "3,5") == 5
        assert gpu_memory.nvml_index_for_torch(0, "GPU-1234-abcd") is None
        assert gpu_memory.nvml_index_for_torch(4, "0,1") is None

    def test_sample(self):
        s = gpu_memory.sample()
        assert s.cost_s >= 0 and s.torch is not None and s.nvml is not None


class TestBackendsAndLedger:
    def test_smoke_actions_on_simulator(self):
        gpu, ledger = SimulatedGpu(8), TensorLedger()
        result = allocate(gpu, ledger, 4, "x")
        assert result.ok and "512 bytes" in result.message and "2.00 MiB" in result.message
        assert result.after.device_used == 512 * MiB + 2 * MiB  # context + reserved
        assert result.after.not_reserved_used == 512 * MiB
        (held,) = ledger.held()
        freed = free_tensors(gpu, ledger, [held.id])
        assert freed.ok and freed.after.allocated == 0 and freed.after.reserved == 2 * MiB
        emptied = empty_cache(gpu)
        assert emptied.after.reserved == 0 and "released 1 whole free segment" in emptied.message
        assert reset_peak(gpu).after.max_allocated == 0
        assert free_all(gpu, ledger).ok

    def test_exception_inputs(self):
        with pytest.raises(ValueError, match="one of \\(8, 24, 80\\) GB, got 12"):
            SimulatedGpu(12)
        with pytest.raises(ValueError, match="comma-separated"):
            parse_shape("a, b")
        with pytest.raises(ValueError, match=">= 1"):
            parse_shape("3, 0")
        with pytest.raises(ValueError, match="positive number"):
            request_bytes(0, "MB")
        with pytest.raises(ValueError, match="unit must be one of"):
            request_bytes(1, "TB")
        with pytest.raises(ValueError, match="dtype must be one of"):
            request_bytes(shape=(2,), dtype="complex7")

    def test_shape_with_an_empty_piece_is_refused(self):
        """'1024,,' is not (1024,): the message names the empty piece."""
        with pytest.raises(ValueError, match="piece 2 of 2 is empty in '1024,,'"):
            parse_shape("1024,,")
        with pytest.raises(ValueError, match="piece 2 of 3 is empty"):
            parse_shape("1024, , 3")
        with pytest.raises(ValueError, match="piece 1 of 2 is empty"):
            parse_shape(",1024")
        assert parse_shape("(3,)") == (3,)  # Python's one-element tuple keeps working
        assert parse_shape("1024, 1024,") == (1024, 1024)

    def test_size_refusals(self):
        """A cleared size (None), a negative one, and sizes beyond the device (even beyond a
        float) are refused with a message, never allocated or crashed on."""
        with pytest.raises(ValueError, match="size is empty"):
            request_bytes(None, "GB")
        with pytest.raises(ValueError, match="positive number, got -5"):
            request_bytes(-5.0, "MB")
        with pytest.raises(ValueError, match="positive number, got nan"):
            request_bytes(float("nan"), "MB")
        with pytest.raises(ValueError, match=r"Refused: 1\.0e30 GiB is more than the whole "
                           r"device \(8\.00 GiB\); you asked for 1e\+30 GB"):
            request_bytes(1e30, "GB", max_bytes=8 * GiB)
        with pytest.raises(ValueError, match="Refused: an unbounded size"):
            request_bytes(1e308, "GB", max_bytes=8 * GiB)  # 1e308 * 2**30 is inf
        with pytest.raises(ValueError, match=r"Refused: 3\.7e11 GiB"):
            request_bytes(shape=(10**10, 10**10), dtype="float32", max_bytes=8 * GiB)
        assert request_bytes(8.0, "GB", max_bytes=8 * GiB) == (8 * GiB, "8 GB")

    def test_request_bytes(self):
        assert request_bytes(1.5, "KB") == (1536, "1.5 KB")
        assert request_bytes(shape=(1024, 1024), dtype="float32")[0] == 4 * MiB
        assert parse_shape("(3, 224, 224)") == (3, 224, 224)

    def test_refuses_more_than_free_memory(self):
        gpu, ledger = SimulatedGpu(8), TensorLedger()
        result = allocate(gpu, ledger, 9 * GiB)
        assert not result.ok and result.message.startswith("Refused")
        assert gpu.sim.memory_stats()["num_ooms"] == 0  # refused before the allocator

    def test_oom_is_caught_and_explained(self):
        gpu, ledger = SimulatedGpu(8), TensorLedger()
        gpu.limit_reserved(30 * MiB)
        allocate(gpu, ledger, 15 * MiB)
        result = allocate(gpu, ledger, 2 * MiB)  # needs a 20 MiB segment
        assert not result.ok and result.error.startswith("CUDA out of memory")
        assert "Out of memory" in result.message

    def test_simulated_oom_message_reports_the_whole_device(self):
        """As torch does: the total is the GPU's capacity (8 GiB), and 'free' excludes both the
        simulated CUDA context and what the allocator reserved."""
        gpu, ledger = SimulatedGpu(8), TensorLedger()
        gpu.limit_reserved(30 * MiB)
        allocate(gpu, ledger, 15 * MiB)
        error = allocate(gpu, ledger, 2 * MiB).error
        assert "GPU 0 has a total capacity of 8.00 GiB of which 7.48 GiB is free. " in error
        # torch names this process's NVML usage (context + reserved) before the cap
        assert "this process has 528.00 MiB memory in use. 30.00 MiB allowed; " in error
        assert gpu.sim.mem_get_info() == (8 * GiB - 512 * MiB - 16 * MiB, 8 * GiB)

    def test_sessions_cannot_free_each_others_tensors(self):
        gpu = SimulatedGpu(8)
        mine, theirs = TensorLedger(), TensorLedger()
        allocate(gpu, theirs, 1000)
        (held,) = theirs.held()
        with pytest.raises(ValueError, match="not held by this session"):
            mine.free(held.id + 100)
        assert free_tensors(gpu, mine, [held.id]).ok is False
        assert gpu.sim.memory_allocated() == 1024

    def test_tensors_freed_when_session_ends(self):
        gpu = SimulatedGpu(8)
        ledger = TensorLedger()
        allocate(gpu, ledger, 10 * MiB)
        allocate(gpu, ledger, 100)
        assert gpu.sim.memory_allocated() > 0
        del ledger
        gc.collect()
        assert gpu.sim.memory_allocated() == 0

    def test_real_tensor_ledger_drops_references_on_close(self):
        """Same mechanism with real (CPU) tensors: the finalizer drops the last reference."""

        class CpuBackend:
            key, label, simulated = "cpu", "cpu", False

            def block_size(self, handle):
                return handle.untyped_storage().nbytes()

            def release(self, handle):
                del handle

        ledger = TensorLedger()
        tensor = torch.empty(1000)
        ref = __import__("weakref").ref(tensor)
        ledger.add(CpuBackend(), tensor, "x", 4000)
        del tensor
        assert ref() is not None
        ledger.close()
        assert ref() is None and not ledger.alive


class TestScenarios:
    @pytest.mark.parametrize("key", list(SCENARIOS))
    def test_every_scenario_runs_on_simulator(self, key):
        run = run_scenario(key, SimulatedGpu(24), TensorLedger())
        assert len(run.outcomes) == len(SCENARIOS[key].steps)
        assert all(o.message for o in run.outcomes)

    def test_notes_numbers(self):
        gpu, ledger = SimulatedGpu(24), TensorLedger()
        tiny = run_scenario("tiny", gpu, ledger).outcomes[-1]
        assert (tiny.allocated, tiny.reserved) == (512, 2 * MiB)
        reuse = run_scenario("reuse", gpu, ledger).outcomes
        assert [o.reserved for o in reuse[-4:]] == [2 * MiB, 22 * MiB, 22 * MiB, 22 * MiB]
        assert [o.landed_in for o in reuse[-4:]] == [
            "S1: small pool, 2.00 MiB segment",
            "S2: large pool, 20.00 MiB segment",  # 1 MiB + 512 B: not the notes' same block
            "S1: small pool, 2.00 MiB segment",  # exactly 1 MiB: still the small pool
            "S1: small pool, 2.00 MiB segment",
        ]
        partial = run_scenario("partial", gpu, ledger).outcomes[-1]
        assert (partial.allocated, partial.reserved, partial.segments) == (512, 2 * MiB, 1)
        frag = run_scenario("fragmentation", gpu, ledger).outcomes
        oom = next(o for o in frag if o.error)
        assert oom.step.nbytes == 12 * MiB and oom.num_ooms == 1
        saved = frag[-2]
        assert saved.ok and saved.num_alloc_retries == oom.num_alloc_retries + 1
        assert gpu.sim.limit_bytes == gpu.sim.total_bytes  # the cap was removed
        dele = run_scenario("del", gpu, ledger).outcomes
        assert dele[-2].allocated == 0 and dele[-2].device_used == 512 * MiB + 256 * MiB
        assert dele[-1].device_used == 512 * MiB

    def test_exception_unknown_scenario(self):
        with pytest.raises(ValueError, match="unknown scenario 'nope'"):
            run_scenario("nope", SimulatedGpu(8), TensorLedger())

    @pytest.mark.parametrize("key", list(SCENARIOS))
    def test_snippet_reproduces_simulator(self, key):
        """Exec the snippet as-is against a torch stand-in backed by a fresh simulator: every
        line it reports equals the page's numbers for that step."""
        steps = SCENARIOS[key].steps
        expected = [
            (o.allocated, o.reserved, o.segments)
            for o in run_steps(steps, SimulatedGpu(24), TensorLedger())
            if o.step.kind in ("alloc", "free", "free_all", "empty_cache")
        ]
        code = snippet_for(steps)
        compile(code, "<snippet>", "exec")
        printed: list[str] = []
        namespace = {
            "torch": _fake_torch(SimulatedGpu(24).sim),
            "print": lambda *args: printed.append(" ".join(map(str, args))),
        }
        exec(code.replace("import torch\n", "", 1), namespace)
        pattern = re.compile(r"allocated=\s*([\d,]+) reserved=\s*([\d,]+) segments=(\d+)")
        seen = [
            tuple(int(g.replace(",", "")) for g in m.groups())
            for line in printed
            if (m := pattern.search(line))
        ]
        assert seen == expected
        if key == "fragmentation":
            assert any(line.startswith("OutOfMemoryError: CUDA out of memory") for line in printed)


class _FakeTensor:
    """Holds a simulator block; CPython frees it at ``del`` like a CUDA tensor's storage."""

    def __init__(self, sim, handle):
        self._sim = sim
        self._handle = handle

    def __del__(self):
        self._sim.free(self._handle)


def _fake_torch(sim: CachingAllocatorSim):
    class OOM(Exception):
        pass

    def empty(size, dtype=None, device=None):
        numel = 1
        for s in size if isinstance(size, tuple) else (size,):
            numel *= s
        nbytes = numel * dtype.itemsize
        try:
            return _FakeTensor(sim, sim.malloc(nbytes))
        except SimulatedOutOfMemory as err:
            raise OOM(str(err)) from None

    cuda = types.SimpleNamespace(
        memory_allocated=lambda dev=None: sim.memory_allocated(),
        memory_reserved=lambda dev=None: sim.memory_reserved(),
        memory_stats=lambda dev=None: sim.memory_stats(),
        empty_cache=sim.empty_cache,
        reset_peak_memory_stats=lambda dev=None: sim.reset_peak_memory_stats(),
        max_memory_allocated=lambda dev=None: sim.max_memory_allocated(),
        mem_get_info=lambda dev=None: sim.mem_get_info(),
        # torch's fraction is of the whole device; the simulator's of what it may reserve
        set_per_process_memory_fraction=lambda f, dev=None: sim.set_memory_fraction(
            min(f * sim.capacity_bytes / sim.total_bytes, 1.0)
        ),
    )
    return types.SimpleNamespace(
        device=lambda s: s,
        empty=empty,
        cuda=cuda,
        OutOfMemoryError=OOM,
        uint8=torch.uint8,
        float32=torch.float32,
        float16=torch.float16,
        bfloat16=torch.bfloat16,
        float64=torch.float64,
        int64=torch.int64,
        int32=torch.int32,
        int8=torch.int8,
        bool=torch.bool,
    )


class TestFigures:
    def test_figures_smoke(self):
        gpu, ledger = SimulatedGpu(8), TensorLedger()
        run_scenario("partial", gpu, ledger)
        allocate(gpu, ledger, 5 * MiB)
        state = gpu.state()
        seg_fig = segment_map(gpu.snapshot())
        names = {t.name for t in seg_fig.data}
        assert any("inactive split" in n for n in names) and any("allocated" in n for n in names)
        assert len(fragmentation_figure(state).data) == 1
        chart = live_chart([live_point(0.0, state), live_point(1.0, state)], 60.0)
        band = [a.text for a in chart.layout.annotations if "outside PyTorch" in a.text]
        assert band == [
            "<b>outside PyTorch's cache: 512.00 MiB</b><br>CUDA context, other processes "
            "(not to scale)"
        ]
        assert segment_map([]).data  # empty snapshot still draws

    def test_live_chart_is_scaled_to_the_session_not_the_context(self):
        """The first scenario reserves 2 MiB beside a 512 MiB context. The axis is
        scaled to the 2 MiB (the context is a separate band with its size), so the reserved
        line is not flattened to the floor."""
        gpu, ledger = SimulatedGpu(24), TensorLedger()
        run_scenario("tiny", gpu, ledger)
        state = gpu.state()
        chart = live_chart([live_point(0.0, state), live_point(1.0, state)], 60.0)
        low, high = chart.layout.yaxis.range
        reserved = next(t for t in chart.data if t.name.startswith("reserved"))
        assert low == 0 and reserved.y[-1] == 2.0
        assert chart.layout.yaxis.title.text == "MiB (device 24.00 GiB)"
        assert 0.5 * high <= reserved.y[-1] <= 0.75 * high  # the curve fills the plot ...
        assert max(t.y[-1] for t in chart.data) < 512  # ... and no trace carries the context
        assert reserved.customdata[-1] == "2.00 MiB"  # hover in the allocator's own format
        empty = live_chart([], 60.0)
        assert empty.layout.yaxis.range == (0, 1.0) and not empty.layout.shapes

    def test_segment_map_shows_a_tiny_live_tensor(self):
        """The 'partial' lesson: one 512 B block pins a 2 MiB segment. At true scale it is 0.02 %
        of the row, invisible under its cached neighbours; it must be drawn visibly, on top."""
        gpu, ledger = SimulatedGpu(8), TensorLedger()
        run_scenario("partial", gpu, ledger)
        fig = segment_map(gpu.snapshot())
        allocated = next(t for t in fig.data if t.name.startswith("allocated"))
        assert fig.data[-1] is allocated  # overlay: the last trace is drawn on top
        assert min(allocated.x) >= 0.5  # percent of the segment row
        assert "block 512 bytes" in allocated.hovertext[0]  # hover keeps the true size


def test_exception_real_backend_without_gpu():
    from lessons.memory.backends import TorchCudaBackend

    with pytest.raises(ValueError, match="device must look like 'cuda:N', got 'cpu'"):
        TorchCudaBackend("cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="cannot use cuda:0: no GPU|no CUDA build"):
            TorchCudaBackend("cuda:0")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_backend_actions_and_session_cleanup():
    from lessons.memory.backends import TorchCudaBackend

    gpu, ledger = TorchCudaBackend("cuda:0"), TensorLedger()
    before = torch.cuda.memory_allocated(0)
    result = allocate(gpu, ledger, 4, "x")
    assert result.ok and result.held[0].block == 512
    assert torch.cuda.memory_allocated(0) == before + 512
    state = gpu.state()
    assert state.device_total is not None and state.segments >= 1
    assert gpu.snapshot()
    run = run_scenario("tiny", gpu, ledger)
    assert run.outcomes[-1].ok
    ledger.close()  # the session ends: its tensors go
    gc.collect()
    assert torch.cuda.memory_allocated(0) == before
    assert empty_cache(gpu).ok


def test_other_device_errors_are_reported_not_raised():
    from lessons.memory.backends import BackendError

    class Faulty(SimulatedGpu):
        def allocate(self, nbytes, shape, dtype):
            raise BackendError("the device refused the allocation: CUDA error: ECC error")

    result = allocate(Faulty(8), TensorLedger(), 1000)
    assert not result.ok and "ECC error" in result.message


# ------------------------------------------------------------------ a GPU shared by a class
class TestSharedGpuPolicy:
    def test_default_is_shared_with_a_1_gib_quota(self):
        from lessons.memory.backends import gpu_memory_policy, session_quota

        assert gpu_memory_policy({}) == "shared"
        assert session_quota({}) == 2**30
        assert session_quota({"TP_GPU_SESSION_QUOTA_MIB": "256"}) == 256 * 2**20

    def test_exclusive_has_no_quota(self):
        from lessons.memory.backends import gpu_memory_policy, session_quota

        env = {"TP_GPU_MEMORY": "Exclusive"}
        assert gpu_memory_policy(env) == "exclusive"
        assert session_quota(env) is None

    @pytest.mark.parametrize(
        "env",
        [{"TP_GPU_MEMORY": "mine"}, {"TP_GPU_SESSION_QUOTA_MIB": "-1"},
         {"TP_GPU_SESSION_QUOTA_MIB": "lots"}],
    )
    def test_exception(self, env):
        from lessons.memory.backends import session_quota

        with pytest.raises(ValueError, match="TP_GPU"):
            session_quota(env)

    def test_process_wide_calls_only_on_the_simulator_when_shared(self):
        from lessons.memory.backends import SimulatedGpu, process_wide_calls_allowed

        class RealDevice:
            simulated = False

        assert process_wide_calls_allowed(SimulatedGpu(8), "shared")
        assert not process_wide_calls_allowed(RealDevice(), "shared")
        assert process_wide_calls_allowed(RealDevice(), "exclusive")

    def test_allocate_refuses_past_the_session_quota(self):
        from lessons.memory.backends import SimulatedGpu, TensorLedger, allocate

        gpu, ledger = SimulatedGpu(8), TensorLedger()
        quota = 100 * 2**20
        assert allocate(gpu, ledger, 60 * 2**20, quota=quota).ok
        refused = allocate(gpu, ledger, 60 * 2**20, quota=quota)
        assert not refused.ok and "quota" in refused.message
        assert refused.before == refused.after  # nothing was allocated
        assert allocate(gpu, ledger, 30 * 2**20, quota=quota).ok
        assert allocate(gpu, ledger, 60 * 2**20).ok  # exclusive: no quota
