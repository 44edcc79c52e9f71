"""Home's "predict, then reveal" questions: what a seed and the determinism switches really do.

Home has no figure and no sliders; what it teaches is which switch makes which result repeat.
Each question here is answered by running it in this process now: the notes' ``init_seeds`` and
``torch.manual_seed`` with the session's seed (through :func:`core.notes.run_live`, which puts the
process-wide generators and cuDNN flags back afterwards), ``scatter_add_`` on the CPU with draws
from that seed, the flag ``torch.are_deterministic_algorithms_enabled()`` beside
``cudnn.deterministic``, and the installed torch's own ``use_deterministic_algorithms``
docstring (:func:`core.seeding.deterministic_ops`). The answers follow the torch that runs them:
if a later torch changes a behaviour, the right choice moves with it.

Pure: no Streamlit. Texts are English and marked (``N_`` / ``T``); the page translates them.

>>> [q.key for q in questions(0)]  # doctest: +NORMALIZE_WHITESPACE
['cudnn-scatter-add', 'cpu-scatter-repeat', 'init-seeds-draws', 'manual-seed-devices',
 'cuda-device-index']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core import environment
from core.notes import LiveRun, run_live
from core.questions import Choice, Question, check_questions
from core.seeding import MAX_SEED, NOTES_INIT_SEEDS_CODE, DeterministicOps, deterministic_ops
from core.text import N_, T

#: The page parts (``st.container(key=...)`` on Home) that give the answers away.
REPRODUCIBILITY_PART = "home-reproducibility"
RECIPES_PART = "home-recipes"
GPUS_NOTES_PART = "home-gpus-notes"

#: The operation the issue's question is about, as the docstring names it.
SCATTER_ADD = "torch.Tensor.scatter_add_"
#: ``cpu-scatter-repeat``: values added, bins they go to, runs compared.
SCATTER_VALUES, SCATTER_BINS, SCATTER_RUNS = 4096, 8, 5

#: The notes' ``init_seeds`` (000:32, as core.seeding writes it), called twice with ``{seed}``.
INIT_SEEDS_RUN = "import random\n\nimport numpy as np\n" + NOTES_INIT_SEEDS_CODE + """

def draws():
    return random.random(), float(np.random.rand()), float(torch.rand(1))


init_seeds({seed})
first = draws()
init_seeds({seed})
second = draws()
for name, a, b in zip(("random", "numpy", "torch"), first, second):
    print(name, repr(a), repr(b))
"""

#: ``torch.manual_seed({seed})`` with the two CUDA seeding calls recorded, and whether Python's
#: and NumPy's generators were touched.
MANUAL_SEED_RUN = """import random

import numpy as np
import torch
import torch.cuda

calls = {{"manual_seed_all": [], "manual_seed": []}}
originals = {{name: getattr(torch.cuda, name) for name in calls}}
for name, original in originals.items():
    setattr(torch.cuda, name, lambda s, n=name, f=original: (calls[n].append(s), f(s))[1])
python_state, numpy_state = random.getstate(), np.random.get_state()[1].copy()
try:
    torch.manual_seed({seed})
finally:
    for name, original in originals.items():
        setattr(torch.cuda, name, original)
print("manual_seed_all:", calls["manual_seed_all"])
print("manual_seed:", calls["manual_seed"])
print("random unchanged:", random.getstate() == python_state)
print("numpy unchanged:", bool((np.random.get_state()[1] == numpy_state).all()))
print("initial_seed:", torch.initial_seed())
"""


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(T("seed must be an integer, got {seed!r}", seed=seed))
    if not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(
            T("seed must be between 0 and {max_seed}, got {seed}", max_seed=MAX_SEED, seed=seed)
        )
    return int(seed)


def _lines(run: LiveRun) -> dict[str, str]:
    """A snippet's ``name: value`` lines as a dict; ``ValueError`` if the snippet raised."""
    if run.raised:
        raise ValueError(T("the live check raised: {error}", error=str(run.error)))
    return dict(line.split(": ", 1) for line in run.output.splitlines() if ": " in line)


def _pick(answer: int | None, what: str) -> int:
    """``answer``, or a ``ValueError`` naming ``what`` the run gave when no choice fits it."""
    if answer is None:
        raise ValueError(T("no choice fits what the run gave: {what}", what=what))
    return answer


# --- cuDNN's flag and scatter_add_ on CUDA ------------------------------------------------------


def cudnn_scatter_add(seed: int, ops: DeterministicOps, cudnn_run: LiveRun) -> Question:
    """Does ``cudnn.deterministic = True`` plus a seed make ``scatter_add_`` on CUDA repeat?

    ``ops`` is the installed torch's docstring lists; ``cudnn_run`` is
    :data:`core.environment.CUDNN_ONLY_CODE` run live (it prints ``cudnn.deterministic``,
    ``use_deterministic_algorithms`` read inside ``cudnn.flags(deterministic=True)``, and on a
    GPU whether five ``index_add_`` runs agreed).
    """
    lines = _lines(cudnn_run)
    flag = lines.get("use_deterministic_algorithms", "?")
    made, raises = ops.find(SCATTER_ADD)
    listed = made or raises
    if not listed:
        raise ValueError(T("torch {version}'s use_deterministic_algorithms docstring no longer "
                           "lists {op}", version=ops.torch_version, op=SCATTER_ADD))  # fmt: skip
    choices = (
        Choice(N_("Yes: a fixed seed plus `cudnn.deterministic = True` makes every output repeat"),
               T("inside `cudnn.flags(deterministic=True)`, "
                 "`torch.are_deterministic_algorithms_enabled()` read `{flag}`: cuDNN's flag "
                 "steers cuDNN's convolutions only, and `scatter_add_` is not one", flag=flag),
               notes="004:22"),  # fmt: skip
        Choice(N_("Not guaranteed: only `torch.use_deterministic_algorithms(True)` switches it to "
                  "a deterministic algorithm"),
               T("torch {version}'s docstring lists `{op}` {condition} among the {count} "
                 "operations that flag makes deterministic", version=ops.torch_version,
                 op=SCATTER_ADD, condition=T(listed[0].condition),
                 count=len(ops.made_deterministic))),
        Choice(N_("No, and no switch helps: under `torch.use_deterministic_algorithms(True)` it "
                  "raises a `RuntimeError`"),
               T("`{op}` is not among the {count} operations the docstring says raise; it gets a "
                 "deterministic algorithm instead", op=SCATTER_ADD, count=len(ops.raise_error))
               if made else
               T("right in torch {version}: the docstring lists `{op}` {condition} among the "
                 "{count} operations that raise", version=ops.torch_version, op=SCATTER_ADD,
                 condition=T(listed[0].condition), count=len(ops.raise_error))),
        Choice(N_("Yes: the seed fixes the order in which the GPU's threads add"),
               N_("a seed feeds random number generators only; `scatter_add_` draws no random "
                  "number, and CUDA's atomic adds land in whatever order the threads run")),
    )  # fmt: skip
    answer = 0 if flag == "True" else (1 if made else 2)
    proof = T("inside `cudnn.flags(deterministic=True)` this process read "
              "`cudnn.deterministic = {cudnn}` and `torch.are_deterministic_algorithms_enabled() "
              "= {flag}`; torch {version}'s `use_deterministic_algorithms` docstring lists `{op}` "
              "{condition} among the {count} operations it {what}.",
              cudnn=lines.get("cudnn.deterministic", "?"), flag=flag, version=ops.torch_version,
              op=SCATTER_ADD, condition=T(listed[0].condition),
              count=len(ops.made_deterministic) if made else len(ops.raise_error),
              what=T("switches to a deterministic algorithm") if made
              else T("makes raise a `RuntimeError`"))
    if "5 index_add_ runs bit-identical" in lines:
        proof = T("{proof} On this GPU, five `index_add_` runs with only the cuDNN flag set "
                  "agreed bit for bit: {same}.", proof=proof,
                  same=lines["5 index_add_ runs bit-identical"])  # fmt: skip
    return Question(
        "cudnn-scatter-add",
        T("A script sets `torch.manual_seed({seed})` and `torch.backends.cudnn.deterministic = "
          "True`, the notes' recipe. Is `scatter_add_` on a CUDA tensor then deterministic "
          "(the same bits on every run)?", seed=seed),
        choices, answer, proof, hides=REPRODUCIBILITY_PART,
    )  # fmt: skip


# --- scatter_add_ on the CPU ---------------------------------------------------------------------


@dataclass(frozen=True)
class CpuScatter:
    """``scatter_add_`` of :data:`SCATTER_VALUES` seeded normal floats into
    :data:`SCATTER_BINS` bins on the CPU, run :data:`SCATTER_RUNS` times and once more with the
    values in another order.

    Attributes:
        runs_agree: every run gave the same ``(SCATTER_BINS,)`` float32 result, bit for bit.
        reorder_gap: the largest ``|difference|`` between a bin's sum in the first run and in
            the reordered one (float addition is not associative).
        threads: ``torch.get_num_threads()`` when it ran.
    """

    runs_agree: bool
    reorder_gap: float
    threads: int


def cpu_scatter(seed: int) -> CpuScatter:
    """Run the ``cpu-scatter-repeat`` experiment with draws from ``torch.Generator`` seeded
    ``seed`` (``ValueError`` for a seed outside ``[0, 2**32 - 1]``)."""
    seed = _check_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    src = torch.randn(SCATTER_VALUES, generator=generator)
    index = torch.randint(0, SCATTER_BINS, (SCATTER_VALUES,), generator=generator)
    runs = [torch.zeros(SCATTER_BINS).scatter_add_(0, index, src) for _ in range(SCATTER_RUNS)]
    order = torch.randperm(SCATTER_VALUES, generator=generator)
    reordered = torch.zeros(SCATTER_BINS).scatter_add_(0, index[order], src[order])
    return CpuScatter(
        runs_agree=all(torch.equal(runs[0], run) for run in runs[1:]),
        reorder_gap=float((reordered - runs[0]).abs().max()),
        threads=torch.get_num_threads(),
    )


def cpu_scatter_repeat(seed: int, flag_on: bool) -> Question:
    """Do five CPU ``scatter_add_`` runs agree bit for bit? (``flag_on``: whether
    ``torch.use_deterministic_algorithms`` was on when it ran.)"""
    run = cpu_scatter(seed)
    gap = f"{run.reorder_gap:.3g}"
    choices = (
        Choice(N_("Yes: on the CPU `scatter_add_` adds in the same order every run"),
               T("all {runs} runs agreed bit for bit: {agree}, on {threads} threads",
                 runs=SCATTER_RUNS, agree=run.runs_agree, threads=run.threads)),
        Choice(N_("No: `scatter_add_` is on torch's list of nondeterministic operations, so its "
                  "bits change from run to run"),
               N_("the docstring lists it only \"when called on a CUDA tensor\": on the CPU it "
                  "adds in one fixed order")),
        Choice(N_("Only once `torch.use_deterministic_algorithms(True)` is set"),
               T("the runs agreed with that flag `{flag}`: the CPU kernel has one order only",
                 flag=flag_on)),
        Choice(N_("Yes, and any order of adding gives the same bits: the sum does not depend on "
                  "the order"),
               T("adding the same values in another order moved a bin's sum by up to {gap}: "
                 "float addition is not associative, which is why a GPU's unordered atomic "
                 "adds change the bits", gap=gap)),
    )  # fmt: skip
    # Choice 3 is wrong only if the shuffled order moved a sum; a gap of 0 proves nothing.
    agreed = 0 if run.reorder_gap > 0 else None
    answer = _pick(agreed if run.runs_agree else 1, f"runs agree {run.runs_agree}, gap {gap}")
    proof = T("{runs} runs of `torch.zeros({bins}).scatter_add_(0, index, src)` on this CPU "
              "({threads} threads) agreed bit for bit: {agree}; the same values added in a "
              "shuffled order differed by up to {gap}.", runs=SCATTER_RUNS, bins=SCATTER_BINS,
              threads=run.threads, agree=run.runs_agree, gap=gap)  # fmt: skip
    return Question(
        "cpu-scatter-repeat",
        T("On this server's CPU, `torch.zeros({bins}).scatter_add_(0, index, src)` adds {n} "
          "random floats (drawn with seed {seed}) into {bins} bins, {runs} times over. Do the "
          "{runs} results agree bit for bit?",
          bins=SCATTER_BINS, n=SCATTER_VALUES, seed=seed, runs=SCATTER_RUNS),
        choices, answer, proof, hides=REPRODUCIBILITY_PART,
    )  # fmt: skip


# --- The notes' init_seeds, and torch.manual_seed ----------------------------------------------


def init_seeds_draws(seed: int) -> Question:
    """Which draws repeat after the notes' ``init_seeds(seed)`` (000:32), called twice?"""
    run = run_live(INIT_SEEDS_RUN.format(seed=_check_seed(seed)))
    if run.raised:
        raise ValueError(T("the live check raised: {error}", error=str(run.error)))
    words = [line.split() for line in run.output.splitlines()]
    names = ("random", "numpy", "torch")
    draws = {w[0]: (w[1], w[2]) for w in words if len(w) == 3 and w[0] in names}
    if len(draws) != 3:
        raise ValueError(T("the live check printed {output!r}", output=run.output))
    repeat = {name for name, (a, b) in draws.items() if a == b}
    shown = {name: tuple(format(float(value), ".6f") for value in pair)
             for name, pair in draws.items()}  # fmt: skip
    (t1, t2), (r1, r2), (n1, n2) = shown["torch"], shown["random"], shown["numpy"]
    choices = (
        Choice(N_("All three: `init_seeds` is the notes' seeding helper"),
               T("only torch's draw repeated ({torch}); `random.random()` and `np.random.rand()` "
                 "differ, because `init_seeds` never seeds them", torch=t1),
               notes="000:32"),
        Choice(N_("Only torch's: `torch.rand(1)`"),
               T("`torch.rand(1)` gave {torch} both times; Python's and NumPy's generators are "
                 "never seeded", torch=t1)),
        Choice(N_("torch's and NumPy's"),
               N_("the notes' other recipe (004:19) seeds NumPy; `init_seeds` does not, so "
                  "`np.random.rand()` differed")),
        Choice(T("None: `init_seeds({seed})` seeds only when the seed is 0", seed=seed),
               N_("`if seed == 0` guards only the two cuDNN switches; the three seeding calls "
                  "run for every seed, and `torch.rand(1)` repeated")),
    )  # fmt: skip
    answer = {frozenset(("random", "numpy", "torch")): 0, frozenset(("torch",)): 1,
              frozenset(("numpy", "torch")): 2, frozenset(): 3}.get(frozenset(repeat))  # fmt: skip
    proof = T("`init_seeds({seed})` twice: `torch.rand(1)` gave {t1} then {t2}; "
              "`random.random()` {r1} then {r2}; `np.random.rand()` {n1} then {n2}.",
              seed=seed, t1=t1, t2=t2, r1=r1, r2=r2, n1=n1, n2=n2)
    return Question(
        "init-seeds-draws",
        T("The notes' `init_seeds({seed})` calls `torch.manual_seed`, `torch.cuda.manual_seed` "
          "and `torch.cuda.manual_seed_all` (and sets the cuDNN switches if the seed is 0). Run "
          "it, draw `random.random()`, `np.random.rand()` and `torch.rand(1)`; run it again and "
          "draw again. Which draws repeat?", seed=seed),
        choices, _pick(answer, str(sorted(repeat))), proof, hides=RECIPES_PART,
    )  # fmt: skip


def manual_seed_devices(seed: int) -> Question:
    """Which generators does ``torch.manual_seed(seed)`` seed? (The notes, 004:20: the CPU's.)"""
    lines = _lines(run_live(MANUAL_SEED_RUN.format(seed=_check_seed(seed))))
    all_devices = lines.get("manual_seed_all") == f"[{seed}]"
    current_only = not all_devices and lines.get("manual_seed") == f"[{seed}]"
    others_kept = lines.get("random unchanged") == "True" and lines.get("numpy unchanged") == "True"
    choices = (
        Choice(T("Only the CPU's: CUDA needs `torch.cuda.manual_seed_all({seed})` as well",
                 seed=seed),
               T("it called `torch.cuda.manual_seed_all` with {calls} itself",
                 calls=lines.get("manual_seed_all", "?")),
               notes="004:20"),
        Choice(N_("The CPU's and every CUDA device's"),
               T("`torch.initial_seed()` is {seed} and it called `torch.cuda.manual_seed_all` "
                 "with {calls}", seed=lines.get("initial_seed", "?"),
                 calls=lines.get("manual_seed_all", "?"))),
        Choice(N_("The CPU's and the current CUDA device's only, as `torch.cuda.manual_seed` "
                  "does"),
               T("it called `torch.cuda.manual_seed` with {one} but "
                 "`torch.cuda.manual_seed_all` with {calls}: every device, not one",
                 one=lines.get("manual_seed", "?"), calls=lines.get("manual_seed_all", "?"))),
        Choice(N_("Every generator in the process, Python's `random` and NumPy's included"),
               T("Python's generator unchanged: {python}; NumPy's unchanged: {numpy}",
                 python=lines.get("random unchanged", "?"),
                 numpy=lines.get("numpy unchanged", "?"))),
    )  # fmt: skip
    answer = 3 if not others_kept else (1 if all_devices else (2 if current_only else 0))
    proof = T("`torch.manual_seed({seed})` called `torch.cuda.manual_seed_all` with {calls} and "
              "`torch.cuda.manual_seed` with {one}; `torch.initial_seed()` = {initial}; Python's "
              "and NumPy's generators unchanged: {python}, {numpy}.", seed=seed,
              calls=lines.get("manual_seed_all", "?"), one=lines.get("manual_seed", "?"),
              initial=lines.get("initial_seed", "?"), python=lines.get("random unchanged", "?"),
              numpy=lines.get("numpy unchanged", "?"))  # fmt: skip
    return Question(
        "manual-seed-devices",
        T("Which random number generators does `torch.manual_seed({seed})` seed?", seed=seed),
        choices, answer, proof, hides=RECIPES_PART,
    )  # fmt: skip


# --- Which GPU torch.device('cuda') means -------------------------------------------------------


def cuda_device_index() -> Question:
    """Where does a model go with ``.to(torch.device('cuda'))`` on two visible GPUs?"""
    index = torch.device("cuda").index
    choices = (
        Choice(N_("GPU 0 until it is full, then GPU 1"),
               T("`torch.device('cuda').index` is `{index}`: it names one device, the current "
                 "one; nothing spills over to another GPU", index=str(index)),
               notes="004:33"),  # fmt: skip
        Choice(N_("The current device (`cuda:0` unless `torch.cuda.set_device` chose another), "
                  "and only there"),
               T("`torch.device('cuda').index` is `{index}`: CUDA's current device fills it in "
                 "when the tensor is made", index=str(index))),
        Choice(N_("`cuda:0` always, whatever `torch.cuda.set_device` says: `'cuda'` is short "
                  "for index 0"),
               T("the index is `{index}`, not 0: `'cuda'` means whichever device is current when "
                 "the tensor is made", index=str(index))),
        Choice(N_("Split over both GPUs, half the layers each"),
               N_("torch splits nothing by itself: a second GPU is used only when you put "
                  "tensors there (or use DistributedDataParallel)")),
    )  # fmt: skip
    proof = T("`torch.device('cuda').index` is `{index}` in torch {version}: the device has no "
              "number of its own and means the current CUDA device.", index=str(index),
              version=torch.__version__)  # fmt: skip
    return Question(
        "cuda-device-index",
        N_("A machine shows two GPUs. A model moved with `.to(torch.device('cuda'))` keeps "
           "growing: where do its tensors go?"),
        choices, 1 if index is None else 2, proof, hides=GPUS_NOTES_PART,
    )  # fmt: skip


def questions(seed: int) -> tuple[Question, ...]:
    """Home's questions for the session's ``seed`` (the sidebar's, ``[0, 2**32 - 1]``).

    Each one is run now in this process (a few milliseconds in all); ``ValueError`` names the
    bad seed, or what a run gave that no choice fits.
    """
    seed = _check_seed(seed)
    return check_questions((
        cudnn_scatter_add(seed, deterministic_ops(), run_live(environment.CUDNN_ONLY_CODE)),
        cpu_scatter_repeat(seed, torch.are_deterministic_algorithms_enabled()),
        init_seeds_draws(seed),
        manual_seed_devices(seed),
        cuda_device_index(),
    ))  # fmt: skip
