"""Seeding every random number generator the app uses, and what the determinism switches do.

Two things live here:

* :func:`seed_everything`: one seed for Python's ``random``, NumPy's global generator and
  torch (CPU and every CUDA device), optionally with the notes' cuDNN switches
  (``cudnn.deterministic = True``, ``cudnn.benchmark = False``, notes 004:23 and 004:26). These
  generators are process-wide, so the app itself never calls it while serving: a server's
  sessions share one process, and one session's seeding would reseed another's draws mid-run.
  Computations take the session's seed and draw from private generators
  (``torch.Generator().manual_seed(seed)``, ``np.random.default_rng(seed)``); snippets shown
  to users call ``torch.manual_seed(seed)``, which is right in a script of their own.
* :func:`deterministic_ops`: the two lists in ``torch.use_deterministic_algorithms.__doc__``
  of the *installed* torch (operations that switch to a deterministic algorithm under the flag,
  and operations that raise ``RuntimeError`` instead), parsed so that the Home page's wording
  follows the torch it runs on.

Nothing here imports Streamlit.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from core.text import N_, T

MAX_SEED = 2**32 - 1


def seed_everything(seed: int, *, cudnn_deterministic: bool | None = None) -> int:
    """Seed Python's ``random``, NumPy's global generator and torch (CPU and all CUDA devices).

    ``torch.manual_seed`` also seeds every CUDA device (it calls
    ``torch.cuda.manual_seed_all``), lazily, without creating a CUDA context on machines that
    have none.

    Args:
        seed: an integer in ``[0, 2**32 - 1]`` (NumPy's limit).
        cudnn_deterministic: ``None`` (default) leaves the cuDNN flags as they are. ``True``
            applies the notes' recipe (004:23, 004:26): ``torch.backends.cudnn.deterministic =
            True`` and ``torch.backends.cudnn.benchmark = False``, so cuDNN convolutions pick
            deterministic algorithms (slower on a GPU; no effect on the CPU, where cuDNN is not
            used). ``False`` restores PyTorch's defaults (both flags ``False``). The flags are
            process-wide, like the generators.

    Returns:
        The seed that was applied.

    Raises:
        ValueError: if ``seed`` is not an integer in range, or ``cudnn_deterministic`` is not
            ``None``/``True``/``False``. Nothing is changed then.

    >>> seed_everything(0)
    0
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(T("seed must be an integer, got {seed!r}", seed=seed))
    if not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(
            T("seed must be between 0 and {max_seed}, got {seed}", max_seed=MAX_SEED, seed=seed)
        )
    if cudnn_deterministic is not None and not isinstance(cudnn_deterministic, bool):
        raise ValueError(
            T(
                "cudnn_deterministic must be None, True or False, got {value!r}",
                value=cudnn_deterministic,
            )
        )
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed)
    _seed_torch(seed)
    if cudnn_deterministic is not None:
        torch.backends.cudnn.deterministic = cudnn_deterministic
        torch.backends.cudnn.benchmark = False
    return seed


def set_cudnn_flags(deterministic: bool) -> bool:
    """Set the notes' cuDNN switches where cuDNN is used, and say whether they were set.

    ``deterministic=True`` sets ``torch.backends.cudnn.deterministic = True`` and
    ``benchmark = False`` (notes 004:23, 004:26); ``False`` restores PyTorch's defaults (both
    ``False``). The flags are process-wide (torch has no per-thread or per-session setting): on
    a server shared by a class, the last choice applies to every session's convolutions. Without
    a CUDA device cuDNN is never used, so nothing is changed there and ``False`` is returned.

    Raises:
        ValueError: if ``deterministic`` is not a bool.
    """
    if not isinstance(deterministic, bool):
        raise ValueError(
            T("cudnn_deterministic must be None, True or False, got {value!r}", value=deterministic)
        )
    if not (torch.cuda.is_available() and torch.backends.cudnn.is_available()):
        return False
    torch.backends.cudnn.deterministic = deterministic
    torch.backends.cudnn.benchmark = False
    return True


def _seed_torch(seed: int) -> None:
    """``torch.manual_seed(seed)``, without its cost where there is no accelerator.

    ``torch.manual_seed`` also queues a lazy seed for CUDA, XPU and MTIA, and each queued call
    records ``traceback.format_stack()``: about 0.1 ms alone and several ms per page run with a
    class of sessions on the server's one GIL (``benchmarks/classroom.py``). Without an
    accelerator those queues never run, so seeding the CPU generator is the same thing.
    """
    if torch.accelerator.is_available():
        torch.manual_seed(seed)  # every device, lazily where not initialised yet
    else:
        torch.random.default_generator.manual_seed(seed)


def seeding_snippet(seed: int, *, cudnn_deterministic: bool = False) -> str:
    """Plain Python that does what ``seed_everything(seed, cudnn_deterministic=...)`` does.

    It ends by printing one draw from each generator, so a reader can check that two runs agree.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(T("seed must be an integer, got {seed!r}", seed=seed))
    if not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(
            T("seed must be between 0 and {max_seed}, got {seed}", max_seed=MAX_SEED, seed=seed)
        )
    cudnn = (
        "torch.backends.cudnn.deterministic = True  # notes 004:23: deterministic convolutions\n"
        "torch.backends.cudnn.benchmark = False  # notes 004:26: no per-shape algorithm search\n"
        if cudnn_deterministic
        else "# cuDNN flags left as they are (PyTorch's defaults: deterministic=False, "
        "benchmark=False)\n"
    )
    return (
        "import random\n\n"
        "import numpy as np\n"
        "import torch\n\n"
        f"seed = {int(seed)}\n"
        "random.seed(seed)  # Python's random: the notes' recipes (004:19-21, 000:32) skip it\n"
        "np.random.seed(seed)  # NumPy's global generator\n"
        "torch.manual_seed(seed)  # torch on the CPU *and* every CUDA device\n"
        f"{cudnn}"
        "print(random.random(), float(np.random.rand()), float(torch.rand(1)))\n"
    )


# --------------------------------------------------------------------------------------------
# torch.use_deterministic_algorithms: its docstring's two lists
# --------------------------------------------------------------------------------------------

MADE_DETERMINISTIC_HEADER = "will act deterministically when ``mode=True``:"
RAISES_HEADER = "will throw a :class:`RuntimeError` when ``mode=True``:"
LISTS_END = "In addition"

#: Operations the app's pages use (or that students meet first), looked up in both lists to
#: give the Home page its examples. Each is shown in whichever list the installed torch puts it.
EXAMPLE_OPS: tuple[str, ...] = (
    "torch.Tensor.scatter_add_",
    "torch.index_add",
    "torch.gather",
    "torch.nn.Conv2d",
    "torch.nn.functional.grid_sample",
    "torch.nn.functional.interpolate",
    "torch.nn.AdaptiveAvgPool2d",
    "torch.Tensor.put_",
    "torch.histc",
)

_ITEM_RE = re.compile(r"^\*\s+:(?:class|func|meth|attr):`([^`]+)`\s*(.*)$")


@dataclass(frozen=True)
class DeterministicOp:
    """One bullet of the docstring: an operation and the condition it applies under.

    Attributes:
        name: dotted name as the docstring writes it, e.g. ``"torch.Tensor.scatter_add_"``.
        condition: the rest of the bullet, markup removed, e.g. ``"when called on a CUDA
            tensor"``; ``""`` when the bullet has none (``torch.nn.MaxUnpool1d``).
    """

    name: str
    condition: str

    def __str__(self) -> str:
        return f"{self.name} {self.condition}".strip()


@dataclass(frozen=True)
class DeterministicOps:
    """The two lists of ``torch.use_deterministic_algorithms.__doc__``.

    Attributes:
        made_deterministic: operations that switch to a deterministic algorithm under
            ``torch.use_deterministic_algorithms(True)``.
        raise_error: operations that raise ``RuntimeError`` under it (no deterministic
            implementation).
        torch_version: the torch whose docstring was read.
    """

    made_deterministic: tuple[DeterministicOp, ...]
    raise_error: tuple[DeterministicOp, ...]
    torch_version: str

    def find(self, name: str) -> tuple[list[DeterministicOp], list[DeterministicOp]]:
        """The bullets for ``name`` in each list: ``(made_deterministic, raise_error)``."""
        return (
            [op for op in self.made_deterministic if op.name == name],
            [op for op in self.raise_error if op.name == name],
        )

    def examples(
        self, names: Sequence[str] = EXAMPLE_OPS
    ) -> tuple[list[DeterministicOp], list[DeterministicOp]]:
        """The bullets for ``names``, split by list, in the order of ``names``."""
        made: list[DeterministicOp] = []
        raises: list[DeterministicOp] = []
        for name in names:
            in_made, in_raise = self.find(name)
            made += in_made
            raises += in_raise
        return made, raises


def _clean(text: str) -> str:
    text = re.sub(r":(?:class|func|meth|attr):`([^`]+)`", r"\1", text)
    text = text.replace("``", "").replace("`", "")
    return re.sub(r"\s+", " ", text).strip()


def _phrase(text: str) -> re.Pattern[str]:
    """``text`` as a pattern that allows any run of whitespace (a line break) between words."""
    return re.compile(r"\s+".join(re.escape(word) for word in text.split()))


def _section(doc: str, start: str, end: str) -> str:
    begin = _phrase(start).search(doc)
    if begin is None:
        raise ValueError(
            T(
                "torch.use_deterministic_algorithms.__doc__ no longer contains the words "
                "{start!r}; the app cannot read its list of operations",
                start=start,
            )
        )
    stop = _phrase(end).search(doc, begin.end())
    if stop is None:
        raise ValueError(
            T(
                "torch.use_deterministic_algorithms.__doc__: no {end!r} after {start!r}",
                end=end,
                start=start,
            )
        )
    return doc[begin.end() : stop.start()]


def _items(section: str) -> tuple[DeterministicOp, ...]:
    items: list[tuple[str, list[str], list[str]]] = []  # name, condition lines, sub-bullets
    for raw in section.splitlines():
        line = raw.strip()
        if not line or line.startswith("The following"):
            continue
        match = _ITEM_RE.match(line)
        if match:
            items.append((match[1], [match[2]], []))
        elif items and line.startswith("- "):  # a sub-bullet such as "- ``linear``"
            items[-1][2].append(_clean(line[2:]))
        elif items:  # a wrapped line of the last item
            items[-1][1].append(line)
    return tuple(
        DeterministicOp(name, _clean(" ".join(lines) + (" " + ", ".join(subs) if subs else "")))
        for name, lines, subs in items
    )


def parse_deterministic_doc(doc: str, torch_version: str = "") -> DeterministicOps:
    """Parse the two bullet lists out of ``torch.use_deterministic_algorithms.__doc__``.

    Args:
        doc: the docstring text.
        torch_version: recorded in the result.

    Returns:
        :class:`DeterministicOps` with every bullet of both lists, in the docstring's order.

    Raises:
        ValueError: the docstring lacks either list's header (torch reworded it), or a list
            is empty.
    """
    if not isinstance(doc, str):
        raise ValueError(T("doc must be the docstring text, got {kind}", kind=type(doc).__name__))
    made = _items(_section(doc, MADE_DETERMINISTIC_HEADER, RAISES_HEADER))
    raises = _items(_section(doc, RAISES_HEADER, LISTS_END))
    if not made or not raises:
        raise ValueError(
            T(
                "torch.use_deterministic_algorithms.__doc__: found "
                "{made} operations made deterministic and {raises} that raise; "
                "expected both lists to be non-empty",
                made=len(made),
                raises=len(raises),
            )
        )
    return DeterministicOps(made, raises, torch_version)


def deterministic_ops() -> DeterministicOps:
    """The lists of the installed torch (read from its docstring now)."""
    doc = torch.use_deterministic_algorithms.__doc__ or ""
    return parse_deterministic_doc(doc, torch.__version__)


def _keep(text: str) -> str:
    return text


#: The conditions the docstring's bullets name (torch 2.x), marked for the catalog so a page can
#: show them translated; a condition a newer torch adds stays English until it is added here.
KNOWN_CONDITIONS: tuple[str, ...] = (
    N_("when accumulate=False"),
    N_("when accumulate=True and called on a CUDA tensor"),
    N_("when attempting to differentiate a CPU tensor and the index is a list of tensors"),
    N_("when attempting to differentiate a CUDA tensor"),
    N_(
        "when attempting to differentiate a CUDA tensor and one of the following modes is used: "
        "linear, bilinear, bicubic, trilinear"
    ),
    N_("when attempting to differentiate a CUDA tensor when mode='max'"),
    N_("when called on CUDA tensor"),
    N_("when called on a CPU or CUDA tensor"),
    N_("when called on a CUDA tensor"),
    N_("when called on a CUDA tensor and weights tensor is given"),
    N_("when called on a CUDA tensor that requires grad"),
    N_("when called on a CUDA tensor when dtype is floating point or complex"),
    N_("when called on sparse-dense CUDA tensors"),
    N_("when called with a quantized tensor"),
    N_("when reduce='prod' and called on CUDA tensor"),
    N_("when reduce='sum' or reduce='mean' and called on CUDA tensor"),
    N_("when src type is Tensor and called on CUDA tensor"),
    N_("with accumulate=False"),
    N_("with accumulate=True when called on a CPU tensor"),
    N_("with indices output when called on a CUDA tensor"),
)


def _op_md(op: DeterministicOp, translate: Callable[[str], str] = _keep) -> str:
    condition = translate(op.condition) if op.condition else ""
    return f"`{op.name}` {condition}".strip()


def deterministic_flag_markdown(
    ops: DeterministicOps, translate: Callable[[str], str] = _keep
) -> str:
    """The Home page's bullet on ``torch.use_deterministic_algorithms(True)``, from ``ops``.

    Examples (from :data:`EXAMPLE_OPS`) are placed in the list the docstring puts them in, so
    the wording follows the installed torch. Markdown; no user text goes in. ``translate``
    (default: none, English) translates the sentence and the conditions (a page passes ``_``).
    """
    made, raises = ops.examples()
    none = translate(N_("none of the operations this app uses"))
    separator = translate(N_("; "))
    made_text = separator.join(_op_md(op, translate) for op in made) or none
    raise_text = separator.join(_op_md(op, translate) for op in raises) or none
    return translate(
        N_(
            "**`torch.use_deterministic_algorithms(True)`** goes further than cuDNN's flag. "
            "According to its docstring in torch {version}, "
            "{made_count} normally-nondeterministic operations then "
            "**switch to a deterministic algorithm**, among them: {made_text}. "
            "{raise_count} have no deterministic implementation and "
            "**raise a RuntimeError** instead, among them: {raise_text}. "
            "Cost: slower kernels, and errors to work around (`warn_only=True` turns them into "
            "warnings)."
        )
    ).format(
        version=ops.torch_version,
        made_count=len(ops.made_deterministic),
        made_text=made_text,
        raise_count=len(ops.raise_error),
        raise_text=raise_text,
    )


# --------------------------------------------------------------------------------------------
# The notes' own seeding code, verbatim (a test finds each at its reference)
# --------------------------------------------------------------------------------------------

NOTES_SEEDING_REF = "004:14-26"
NOTES_SEEDING_CODE = "\n".join(
    [
        "import torch",
        "import torch.nn as nn",
        "import torchvision",
        "import numpy as np",
        "# 设置随机种子",
        "np.random.seed(0)",
        "torch.manual_seed(0)# 为 CPU 设置种子用于生成随机数，以使得结果是确定的",
        "torch.cuda.manual_seed_all(0)# 为 GPU 设置种子用于生成随机数，以使得结果是确定的",
        "#将这个 flag 置为True的话，每次返回的卷积算法将是确定的，即默认算法。"
        "如果配合上设置 Torch 的随机种子为固定值的话，"
        "应该可以保证每次运行网络的时候相同输入的输出是固定的",
        "torch.backends.cudnn.deterministic = True",
        "#1 如果网络的输入数据维度或类型上变化不大，"
        "设置 torch.backends.cudnn.benchmark = true 可以增加运行效率；",
        "#2 如果网络的输入数据在每次 iteration 都变化的话，"
        "会导致 cnDNN 每次都会去寻找一遍最优配置，这样反而会降低运行效率。",
        "torch.backends.cudnn.benchmark = False",
        "",
    ]
)

NOTES_INIT_SEEDS_REF = "000:32"
NOTES_INIT_SEEDS_CODE = """import torch


def init_seeds(seed=0):
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if seed == 0:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
"""


#: The Home page's account of the reproducibility switches and their costs (``{seed}``: the
#: session's seed).
SWITCHES_EXPLAINED = N_(
    "- **One seed per session** (sidebar, now `{seed}`): every random draw of the pages comes "
    "from a private generator made from it (`torch.Generator().manual_seed(seed)`, "
    "`np.random.default_rng(seed)`), never from the process-wide generators that all visitors of "
    "this server share, so another visitor's seed cannot change your results mid-run. Cost: "
    "none. It makes *random* draws repeatable, not the arithmetic.\n- "
    "**`torch.backends.cudnn.deterministic = True`** makes cuDNN pick only deterministic "
    "convolution algorithms, so the same input gives bit-identical convolutions run after run. "
    "Cost: some layers get slower (the fastest algorithms often use atomics), sometimes much "
    "slower.\n- **`torch.backends.cudnn.benchmark = True`** times several convolution algorithms "
    "the first time each input shape appears and keeps the fastest. Cost: a slow first call per "
    "shape, and results may differ between runs because the winner can change. Leave it `False` "
    "when you need repeatability or when input shapes keep changing."
)

#: What the sidebar's cuDNN option sets (``{state}``, ``{deterministic}``, ``{benchmark}``:
#: read live by the page).
CUDNN_OPTION_EXPLAINED = N_(
    "The sidebar's **cuDNN deterministic** toggle (now {state}) is the notes' recipe: "
    "`torch.backends.cudnn.deterministic = True` and `torch.backends.cudnn.benchmark = False`; "
    "off restores PyTorch's defaults (both `False`). Unlike the seed, these flags have no "
    "per-session form: they are process-wide, so on a GPU server the last visitor's choice "
    "applies to every visitor's convolutions. Without a GPU cuDNN is not used and the app does "
    "not set them. Read now: `deterministic = {deterministic}`, `benchmark = {benchmark}`."
)

