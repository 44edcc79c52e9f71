"""Live facts about the software and hardware the app runs on.

Every value comes from a call made now; a source that cannot be read yields a
fact whose value is ``None`` and whose ``note`` says why, instead of raising.

Also here: the Home page's live demos of ``CUDA_VISIBLE_DEVICES`` (notes 004:27-36) and
``python -m torch.utils.collect_env`` (notes 002:1289-1330), each run in a fresh Python
subprocess, and the "notes say / PyTorch today does" callouts on seeding and GPU choice.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata

import torch

from core.notes import NotesCallout, NotesRef, run_live, verdict_if
from core.seeding import NOTES_INIT_SEEDS_CODE, deterministic_ops
from core.text import N_, T

NOT_AVAILABLE = N_("not available")
#: What the value column shows for an environment variable that is not set.
UNSET = N_("unset")


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

    ``torch.cuda.is_available()`` asks the CUDA runtime (``cudaGetDeviceCount``, which runs
    ``cuInit``) by default: no CUDA context is created, but the driver is initialised, so a
    process forked afterwards cannot use CUDA. Only with ``PYTORCH_NVML_BASED_CUDA_CHECK=1`` in
    the environment does it ask NVML first (falling back to the runtime when NVML fails); see
    :func:`cuda_check_fact`.
    """
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices += [f"cuda:{index}" for index in range(torch.cuda.device_count())]
    return devices


def _package_version(dist_name: str) -> EnvFact:
    try:
        return EnvFact(N_("Versions"), dist_name, metadata.version(dist_name))
    except metadata.PackageNotFoundError:
        return EnvFact(N_("Versions"), dist_name, None, N_("package is not installed"))


def _version_facts() -> list[EnvFact]:
    import cv2
    import torchvision

    cuda_build = torch.version.cuda
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return [
        EnvFact(N_("Versions"), "torch.__version__", torch.__version__),
        EnvFact(
            N_("Versions"),
            "torch.version.cuda",
            cuda_build,
            "" if cuda_build else N_("this torch build has no CUDA support (CPU-only wheel)"),
        ),
        EnvFact(
            N_("Versions"),
            "cuDNN",
            str(cudnn) if cudnn else None,
            "" if cudnn else N_("cuDNN is not loadable in this build"),
        ),
        EnvFact(N_("Versions"), "torchvision", torchvision.__version__),
        EnvFact(N_("Versions"), "OpenCV (cv2)", cv2.__version__),
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
        EnvFact("CUDA", N_("device count"), str(torch.cuda.device_count() if available else 0)),
        cuda_check_fact(),
        EnvFact(
            "CUDA",
            "CUDA_VISIBLE_DEVICES",
            os.environ.get("CUDA_VISIBLE_DEVICES", UNSET),
            N_(
                "which GPUs this process may see, renumbered from 0; read once, when CUDA "
                "initialises"
            ),
        ),
    ]
    if available:
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            group = T("GPU {index}", index=index)
            facts.append(EnvFact(group, N_("name"), props.name))
            facts.append(
                EnvFact(group, N_("total memory"), f"{props.total_memory / 2**30:.1f} GiB")
            )
    return facts


NVML_CHECK_VAR = "PYTORCH_NVML_BASED_CUDA_CHECK"


def cuda_check_fact(environ: Mapping[str, str] | None = None) -> EnvFact:
    """Which check ``torch.cuda.is_available()`` makes here, read from the environment now.

    torch (``torch/cuda/__init__.py``) uses NVML only when ``PYTORCH_NVML_BASED_CUDA_CHECK``
    is exactly ``"1"``; otherwise it calls the CUDA runtime's ``cudaGetDeviceCount``.

    Args:
        environ: the environment to read (default ``os.environ``).
    """
    env = os.environ if environ is None else environ
    value = env.get(NVML_CHECK_VAR)
    if value == "1":
        note = N_(
            "set to 1: is_available() asks NVML for the device count (does not initialise "
            "CUDA, so a later fork can still use it), falling back to cudaGetDeviceCount if "
            "NVML fails"
        )
    elif value is None:
        note = N_(
            "unset: is_available() calls the CUDA runtime's "
            "cudaGetDeviceCount (initialises the driver; no context is created, but a process "
            "forked later cannot use CUDA). NVML is used only when this is 1"
        )
    else:
        note = N_(
            "not 1: is_available() calls the CUDA runtime's "
            "cudaGetDeviceCount (initialises the driver; no context is created, but a process "
            "forked later cannot use CUDA). NVML is used only when this is 1"
        )
    return EnvFact("CUDA", NVML_CHECK_VAR, UNSET if value is None else value, note)


def _why_no_cuda() -> str:
    if torch.version.cuda is None:
        return N_("this torch build has no CUDA support")
    return N_("no NVIDIA GPU or driver was found")


def nvml_driver_version() -> tuple[str | None, str]:
    """The NVIDIA driver version through NVML, or ``(None, reason)``."""
    try:
        import pynvml
    except ImportError:
        return None, N_("nvidia-ml-py (pynvml) is not installed")
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as error:
        return None, T("NVML could not start: {error}", error=str(error))
    try:
        version = pynvml.nvmlSystemGetDriverVersion()
        return (version.decode() if isinstance(version, bytes) else str(version)), ""
    except pynvml.NVMLError as error:
        return None, T("NVML could not read the driver version: {error}", error=str(error))
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
            N_("Reproducibility"),
            "torch.backends.cudnn.deterministic",
            str(torch.backends.cudnn.deterministic),
        ),
        EnvFact(
            N_("Reproducibility"),
            "torch.backends.cudnn.benchmark",
            str(torch.backends.cudnn.benchmark),
        ),
        EnvFact(
            N_("Reproducibility"),
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
    nvml = [EnvFact("NVML", N_("driver version"), driver, reason)]
    return [
        *_version_facts(),
        *_cuda_facts(),
        *nvml,
        *_cpu_facts(),
        *_reproducibility_facts(),
    ]


# --------------------------------------------------------------------------------------------
# Live demos in a fresh Python process
# --------------------------------------------------------------------------------------------

SUBPROCESS_TIMEOUT_S = 240.0


@dataclass(frozen=True)
class CommandRun:
    """One command run in a child process.

    Attributes:
        command: the command as a shell would show it (what the page prints as code).
        returncode: the exit status, ``None`` when it could not run or timed out.
        stdout, stderr: its output (text).
        seconds: wall-clock time.
        error: ``None``, or why it did not finish ("timed out after 240 s", an OSError).
    """

    command: str
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0


def _child_env(updates: Mapping[str, str | None]) -> dict[str, str]:
    env = dict(os.environ)
    for name, value in updates.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def run_python(
    args: list[str],
    command: str,
    env_updates: Mapping[str, str | None] | None = None,
    timeout: float = SUBPROCESS_TIMEOUT_S,
) -> CommandRun:
    """Run ``sys.executable *args`` with ``env_updates`` applied (``None`` removes a variable).

    Never raises for a failing child: a timeout or OSError comes back in ``error``.

    Raises:
        ValueError: ``timeout`` not positive.
    """
    if not timeout > 0:
        raise ValueError(T("timeout must be positive, got {timeout}", timeout=timeout))
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, *args],
            env=_child_env(env_updates or {}),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return CommandRun(
            command,
            None,
            "",
            "",
            time.perf_counter() - start,
            T("timed out after {timeout:g} s", timeout=timeout),
        )
    except OSError as error:
        return CommandRun(command, None, "", "", time.perf_counter() - start, str(error))
    return CommandRun(
        command, done.returncode, done.stdout, done.stderr, time.perf_counter() - start
    )


def collect_env_report(timeout: float = SUBPROCESS_TIMEOUT_S) -> CommandRun:
    """``python -m torch.utils.collect_env`` (notes 002:1289-1330), run now. Takes seconds."""
    return run_python(
        ["-m", "torch.utils.collect_env"], "python -m torch.utils.collect_env", timeout=timeout
    )


#: The notes' GPU choice (004:32-34, in a script; 004:36, on the command line), verbatim.
NOTES_VISIBLE_DEVICES_REF = "004:32-34"
NOTES_VISIBLE_DEVICES_CODE = (
    "import os\n"
    "# GPU号默认是从0开始，按照顺序，优先使用0号设备,然后使用1号设备\n"
    "os.environ['CUDA_VISIBLE_DEVICES'] = '0,1'\n"
)
NOTES_VISIBLE_DEVICES_SHELL_REF = "004:36"
NOTES_VISIBLE_DEVICES_SHELL = "CUDA_VISIBLE_DEVICES=0,1 python train.py"

COUNT_CODE = "import torch; print(torch.cuda.device_count())"
IN_SCRIPT_CODE = (
    "import os; os.environ['CUDA_VISIBLE_DEVICES'] = '-1'; "
    "import torch; print(torch.cuda.device_count())"
)
TOO_LATE_CODE = (
    "import os, torch; "
    "x = torch.zeros(1, device='cuda') if torch.cuda.is_available() else None; "
    "os.environ['CUDA_VISIBLE_DEVICES'] = '-1'; print(torch.cuda.device_count())"
)


@dataclass(frozen=True)
class VisibleDevicesCase:
    """One child process of the ``CUDA_VISIBLE_DEVICES`` demo.

    Attributes:
        label: what the case shows.
        setting: the variable's value in the child's environment (``None``: as inherited).
        run: the child's :class:`CommandRun`; ``count`` is what it printed (last integer).
    """

    label: str
    setting: str | None
    run: CommandRun

    @property
    def count(self) -> int | None:
        try:
            return int(self.run.stdout.split()[-1])
        except (IndexError, ValueError):
            return None


@dataclass(frozen=True)
class VisibleDevicesDemo:
    """Every case, the parent's own device count, and the sentence the page prints."""

    cases: tuple[VisibleDevicesCase, ...]
    parent_count: int
    explanation: str


def _shell(setting: str | None, code: str) -> str:
    prefix = "" if setting is None else f"CUDA_VISIBLE_DEVICES={setting!r} ".replace("'", '"')
    return f'{prefix}python -c "{code}"'


def visible_devices_demo(timeout: float = SUBPROCESS_TIMEOUT_S) -> VisibleDevicesDemo:
    """Run ``torch.cuda.device_count()`` in fresh processes with different
    ``CUDA_VISIBLE_DEVICES`` (notes 004:32-36), all at once, and explain what came back.

    Cases: ``-1`` and ``""`` (hide every GPU); the variable set inside the script before torch
    touches CUDA (the notes' ``os.environ[...]`` way); and set *after* CUDA has initialised
    (too late: no effect). The baseline is this process's own count (the server's environment).
    Takes a few seconds (one torch import per case, run in parallel).
    """
    inherited = os.environ.get("CUDA_VISIBLE_DEVICES")
    plan = [
        (N_("-1: hide every GPU"), "-1", COUNT_CODE, {"CUDA_VISIBLE_DEVICES": "-1"}),
        (N_('"" (empty): hide every GPU'), "", COUNT_CODE, {"CUDA_VISIBLE_DEVICES": ""}),
        (N_("set in the script, before CUDA starts"), inherited, IN_SCRIPT_CODE, {}),
        (N_("set in the script, after CUDA started"), inherited, TOO_LATE_CODE, {}),
    ]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(plan)) as pool:
        futures = [
            pool.submit(
                run_python,
                ["-c", code],
                _shell(env.get("CUDA_VISIBLE_DEVICES"), code),
                env,
                timeout,
            )
            for _, _, code, env in plan
        ]
        runs = [future.result() for future in futures]
    cases = tuple(
        VisibleDevicesCase(label, setting, run)
        for (label, setting, _, _), run in zip(plan, runs, strict=True)
    )
    parent = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return VisibleDevicesDemo(cases, parent, explain_visible_devices(parent, cases))


def explain_visible_devices(parent_count: int, cases: tuple[VisibleDevicesCase, ...]) -> str:
    """The sentence the page prints for the four cases of :func:`visible_devices_demo`.

    A :class:`core.text.T` whose values may be ``T`` sentences themselves (the page translates
    each part)."""
    counts = [case.count for case in cases]
    if len(counts) != 4 or any(count is None for count in counts):
        failed = [case.label for case in cases if case.count is None]
        return T(
            "Some runs printed no device count ({failed}); their output is shown below.",
            failed="; ".join(failed),
        )
    minus_one, empty, in_script, too_late = counts
    if parent_count == 0 and not any(counts):
        return T(
            "Every count is 0: this machine has no GPU PyTorch can use (this server process "
            "sees 0 too), so the variable has nothing to hide and the runs cannot show a "
            "difference. On a machine with N GPUs the -1, empty and in-script runs print 0 "
            "and the last prints N: CUDA reads CUDA_VISIBLE_DEVICES once, when it "
            "initialises, and renumbers the GPUs it lists from 0."
        )
    hidden = minus_one == 0 and empty == 0 and in_script == 0
    if hidden:
        visible = T(
            "With -1, an empty value, or the variable set in the script before any CUDA "
            "call, a process sees 0: only the listed GPUs exist for CUDA. "
        )
    else:
        visible = T(
            "With -1 a process sees {minus_one}, with an empty value {empty}, set in the "
            "script {in_script}. ",
            minus_one=minus_one,
            empty=empty,
            in_script=in_script,
        )
    if too_late == parent_count:
        verdict = T(
            "the variable is read once, when CUDA initialises, so later changes do nothing."
        )
    else:
        verdict = T("the late change took effect here.")
    return T(
        "This server process sees {parent_count} GPU(s). {visible}Set after CUDA had started, "
        "it still sees {too_late}: {verdict}",
        parent_count=parent_count,
        visible=visible,
        too_late=too_late,
        verdict=verdict,
    )


# --------------------------------------------------------------------------------------------
# The notes say / PyTorch today does
# --------------------------------------------------------------------------------------------

# The notes' init_seeds (000:32) is written once, in core.seeding, and run here as shown there.
INIT_SEEDS_CODE = "import random\n\nimport numpy as np\n" + NOTES_INIT_SEEDS_CODE + """

def draws():
    return random.random(), float(np.random.rand()), float(torch.rand(1))


init_seeds(1)  # any seed but 0 skips the cuDNN lines
first = draws()
init_seeds(1)
second = draws()
for name, a, b in zip(("random", "numpy", "torch"), first, second):
    print(f"{name} repeats after init_seeds(1): {a == b}")
"""

MANUAL_SEED_CODE = """import torch
import torch.cuda

calls = []
original = torch.cuda.manual_seed_all
torch.cuda.manual_seed_all = lambda seed: (calls.append(seed), original(seed))[1]
try:
    torch.manual_seed(123)
finally:
    torch.cuda.manual_seed_all = original
print("torch.manual_seed(123) called torch.cuda.manual_seed_all with:", calls)
print("docstring:", torch.manual_seed.__doc__.split(".")[0].strip())
if torch.cuda.is_available():
    print("torch.cuda.initial_seed():", torch.cuda.initial_seed())
"""

CUDNN_ONLY_CODE = """import torch

with torch.backends.cudnn.flags(enabled=True, benchmark=False, deterministic=True):
    print("cudnn.deterministic:", torch.backends.cudnn.deterministic)
    print("use_deterministic_algorithms:", torch.are_deterministic_algorithms_enabled())
    if torch.cuda.is_available():
        g = torch.Generator(device="cuda").manual_seed(0)
        src = torch.randn(2**20, device="cuda", generator=g)
        index = torch.randint(0, 8, (2**20,), device="cuda", generator=g)
        runs = [torch.zeros(8, device="cuda").index_add_(0, index, src) for _ in range(5)]
        print("5 index_add_ runs bit-identical:", all(torch.equal(runs[0], r) for r in runs))
"""

DEVICE_ORDER_CODE = """import os

import torch

print("CUDA_DEVICE_ORDER:", os.environ.get("CUDA_DEVICE_ORDER", "unset"))
print("torch.device('cuda').index:", torch.device("cuda").index)
if torch.cuda.is_available():
    print("current device:", torch.cuda.current_device())
    print("a new tensor on 'cuda' lands on:", torch.zeros(1, device="cuda").device)
"""

COLLECT_ENV_CODE = """import importlib.util
from pathlib import Path

spec = importlib.util.find_spec("torch.utils.collect_env")
print("importable as:", spec.name if spec else None)
print("has main():", spec is not None and "def main(" in Path(spec.origin).read_text())
"""


def _init_seeds_callout() -> NotesCallout:
    run = run_live(INIT_SEEDS_CODE)
    repeats = {line.split()[0]: line.endswith("True") for line in run.output.splitlines() if line}
    args: tuple[tuple[str, str], ...] = ()
    if run.raised or set(repeats) != {"random", "numpy", "torch"}:
        today = N_("The check did not run as expected: {detail}.")
        args = (("detail", repr(run.error or run.output)),)
    else:
        unseeded = [name for name in ("random", "numpy") if not repeats[name]]
        if unseeded == ["random", "numpy"] and repeats["torch"]:
            today = N_(
                "Only torch's draws repeat; random and numpy do not, because "
                "init_seeds never seeds them (augmentations and samplers often draw from "
                "them). "
                "torch.manual_seed already seeds every CUDA device, so the two cuda lines are "
                "redundant, and the cuDNN switches are set only when seed == 0: with any other "
                "seed cuDNN may still pick nondeterministic algorithms. The app's seed_everything "
                "seeds all three generators and takes the cuDNN switches as a separate option."
            )
        elif unseeded and repeats["torch"]:
            today = N_(
                "Only torch's draws repeat; {unseeded} do not, because "
                "init_seeds never seeds them (augmentations and samplers often draw from "
                "them). "
                "torch.manual_seed already seeds every CUDA device, so the two cuda lines are "
                "redundant, and the cuDNN switches are set only when seed == 0: with any other "
                "seed cuDNN may still pick nondeterministic algorithms. The app's seed_everything "
                "seeds all three generators and takes the cuDNN switches as a separate option."
            )
            args = (("unseeded", unseeded[0]),)
        else:
            today = N_(
                "Draws that repeat: {repeating}. "
                "torch.manual_seed already seeds every CUDA device, so the two cuda lines are "
                "redundant, and the cuDNN switches are set only when seed == 0: with any other "
                "seed cuDNN may still pick nondeterministic algorithms. The app's seed_everything "
                "seeds all three generators and takes the cuDNN switches as a separate option."
            )
            args = (("repeating", str([n for n, r in repeats.items() if r])),)
    return NotesCallout(
        key="init_seeds_torch_only",
        title=N_("init_seeds seeds torch only, and cuDNN only for seed 0"),
        ref=NotesRef.parse("000:32"),
        quote_zh="def init_seeds(seed=0):\\n torch.manual_seed(seed)\\n "
        "torch.cuda.manual_seed(seed)\\n torch.cuda.manual_seed_all(seed)\\n if seed == 0:",
        gloss_en="A seeding helper: seed torch on the CPU, on the current GPU and on all "
        "GPUs; only if the seed is 0, also make cuDNN deterministic.",
        verdict="incomplete",
        today=today,
        run=run,
        today_args=args,
    )


def _manual_seed_callout() -> NotesCallout:
    run = run_live(MANUAL_SEED_CODE)
    first = run.output.splitlines()[0] if run.output else ""
    args: tuple[tuple[str, str], ...] = ()
    if run.raised:
        today = N_("The check raised: {error}.")
        args = (("error", str(run.error)),)
    elif first.endswith("[123]"):
        today = N_(
            "torch.manual_seed seeds every device, not only the CPU: it called "
            'torch.cuda.manual_seed_all(123) itself (and its docstring says "on all '
            "devices\"). The notes' next line, torch.cuda.manual_seed_all(0), is harmless but "
            "redundant."
        )
    else:
        today = N_(
            "In this torch, torch.manual_seed did not call torch.cuda.manual_seed_all "
            "({first}); seed CUDA separately as the notes do."
        )
        args = (("first", first),)
    return NotesCallout(
        key="manual_seed_cpu_only",
        title=N_("torch.manual_seed is not just for the CPU"),
        ref=NotesRef.parse("004:20"),
        quote_zh="torch.manual_seed(0)# 为 CPU 设置种子用于生成随机数",
        gloss_en="torch.manual_seed(0) sets the seed of the CPU's random number generator.",
        verdict="incomplete",
        today=today,
        run=run,
        today_args=args,
    )


def _cudnn_only_callout(ops_count: int) -> NotesCallout:
    run = run_live(CUDNN_ONLY_CODE)
    lines = dict(line.split(": ", 1) for line in run.output.splitlines() if ": " in line)
    args: tuple[tuple[str, str], ...] = ()
    if run.raised:
        today = N_("The check raised: {error}.")
        args = (("error", str(run.error)),)
    elif lines.get("use_deterministic_algorithms") == "False":
        args = (("ops_count", str(ops_count)),)
        if "5 index_add_ runs bit-identical" not in lines:
            today = N_(
                "cudnn.deterministic=True leaves torch.are_deterministic_algorithms_enabled() "
                "False: it only steers cuDNN's convolution algorithms. Of the "
                "{ops_count} operations that torch.use_deterministic_algorithms' docstring says "
                "it makes deterministic, the rest (scatter_add_ and index_add on CUDA among them) "
                "stay nondeterministic until torch.use_deterministic_algorithms(True). "
                "There is no GPU here, so the CUDA run is skipped."
            )
        elif lines["5 index_add_ runs bit-identical"] == "True":
            today = N_(
                "cudnn.deterministic=True leaves torch.are_deterministic_algorithms_enabled() "
                "False: it only steers cuDNN's convolution algorithms. Of the "
                "{ops_count} operations that torch.use_deterministic_algorithms' docstring says "
                "it makes deterministic, the rest (scatter_add_ and index_add on CUDA among them) "
                "stay nondeterministic until torch.use_deterministic_algorithms(True). "
                "On this GPU, five index_add_ runs of the same input "
                "happened to agree bit for bit this time."
            )
        else:
            today = N_(
                "cudnn.deterministic=True leaves torch.are_deterministic_algorithms_enabled() "
                "False: it only steers cuDNN's convolution algorithms. Of the "
                "{ops_count} operations that torch.use_deterministic_algorithms' docstring says "
                "it makes deterministic, the rest (scatter_add_ and index_add on CUDA among them) "
                "stay nondeterministic until torch.use_deterministic_algorithms(True). "
                "On this GPU, five index_add_ runs of the same input disagreed."
            )
    else:
        today = N_(
            "In this torch, setting cudnn.deterministic also turned on "
            "use_deterministic_algorithms."
        )
    return NotesCallout(
        key="cudnn_deterministic_not_enough",
        title=N_("cudnn.deterministic plus a seed is not the whole recipe"),
        ref=NotesRef.parse("004:22"),
        quote_zh="如果配合上设置 Torch 的随机种子为固定值的话，应该可以保证每次运行网络的时候相同"
        "输入的输出是固定的",
        gloss_en="Together with a fixed torch seed, this should guarantee that the same input "
        "gives the same output every time the network runs.",
        verdict="incomplete",
        today=today,
        run=run,
        today_args=args,
    )


def _device_order_callout() -> NotesCallout:
    run = run_live(DEVICE_ORDER_CODE)
    # Only a run that confirmed "one current device" may call the notes wrong.
    confirmed = not run.raised and "torch.device('cuda').index: None" in run.output
    args: tuple[tuple[str, str], ...] = ()
    if run.raised:
        today = N_("The check raised: {error}.")
        args = (("error", str(run.error)),)
    elif confirmed:
        today = N_(
            "PyTorch does not move on to GPU 1 when GPU 0 is busy or full: torch.device('cuda') "
            "has no index and means the current device, cuda:0 unless torch.cuda.set_device "
            "says otherwise. A second GPU is used only when you put tensors or a model there "
            "(or use DistributedDataParallel). The visible GPUs are renumbered from 0 in the "
            "order CUDA_VISIBLE_DEVICES lists them, and CUDA numbers GPUs fastest first unless "
            "CUDA_DEVICE_ORDER=PCI_BUS_ID, so cuda:0 need not be nvidia-smi's GPU 0."
        )
    else:
        today = N_("torch.device('cuda') carries an index here: {output}.")
        args = (("output", repr(run.output)),)
    return NotesCallout(
        key="cuda_visible_devices_order",
        title=N_("GPU 0 first, then GPU 1? No: one current device"),
        ref=NotesRef.parse("004:33"),
        quote_zh="GPU号默认是从0开始，按照顺序，优先使用0号设备,然后使用1号设备",
        gloss_en="GPU numbers start at 0 and follow the order: device 0 is used first, then "
        "device 1.",
        verdict=verdict_if(confirmed, "wrong"),
        today=today,
        run=run,
        today_args=args,
    )


def _collect_env_callout() -> NotesCallout:
    run = run_live(COLLECT_ENV_CODE)
    importable = not run.raised and "importable as: torch.utils.collect_env" in run.output
    args: tuple[tuple[str, str], ...] = ()
    if importable:
        today = N_(
            "No need to find site-packages: collect_env is a module of the installed torch, "
            "so `python -m torch.utils.collect_env` runs it from any directory (the button "
            "below does, live)."
        )
    else:
        today = N_("torch.utils.collect_env is not importable here: {detail}.")
        args = (("detail", repr(run.error or run.output)),)
    return NotesCallout(
        key="collect_env_path",
        title=N_("collect_env: no need to cd into site-packages"),
        ref=NotesRef.parse("002:1289"),
        quote_zh="进入以下路径，运行命令python collect_env.py，便可获取当前的环境信息",
        gloss_en="Go to the following path and run `python collect_env.py` to get the "
        "current environment information.",
        verdict=verdict_if(importable, "out of date"),
        today=today,
        run=run,
        today_args=args,
    )


def notes_callouts() -> list[NotesCallout]:
    """Where the notes' seeding and GPU-choice advice is wrong or dated, checked live."""
    try:
        ops_count = len(deterministic_ops().made_deterministic)
    except ValueError:
        ops_count = 0
    return [
        _init_seeds_callout(),
        _manual_seed_callout(),
        _cudnn_only_callout(ops_count),
        _device_order_callout(),
        _collect_env_callout(),
    ]
