"""The snippet builder: Python that replays a list of scenario steps with real ``torch.cuda``
calls, printing the allocator's numbers after each step so its output can be compared with the
page (or the simulator) line by line; and :class:`SnippetLog`, what one session did, for it.

>>> from lessons.memory.scenarios import Step
>>> print(snippet_for([Step("alloc", name="x", nbytes=4)]).splitlines()[-2])
x = alloc(lambda: torch.empty(4, dtype=torch.uint8, device=dev))
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lessons.memory.allocator_sim import MiB, format_size
from lessons.memory.backends import DTYPES
from lessons.memory.scenarios import ScenarioRun, Step

_PRELUDE = '''import torch

MiB = 2**20
dev = torch.device("{device}")


def report(what):
    stats = torch.cuda.memory_stats(dev)
    print(
        f"{{what:<28}} allocated={{torch.cuda.memory_allocated(dev):>12,}} "
        f"reserved={{torch.cuda.memory_reserved(dev):>12,}} "
        f"segments={{stats.get('segment.all.current', 0)}}"
    )


def alloc(make):
    """Run make(); on OOM print torch's explanation and return None (the program goes on)."""
    try:
        return make()
    except torch.OutOfMemoryError as err:
        print("OutOfMemoryError:", str(err).split(" If reserved")[0])
        return None

'''


def _nbytes_expr(nbytes: int) -> str:
    if nbytes >= MiB and nbytes % MiB == 0:
        return f"{nbytes // MiB} * MiB"
    return str(nbytes)


def snippet_for(steps: tuple[Step, ...] | list[Step], device: str = "cuda:0") -> str:
    """Python that reproduces ``steps`` with real ``torch.cuda`` calls on ``device``.

    Each step prints the allocator's numbers afterwards, so the output can be compared with the
    page (or the simulator) line by line.
    """
    if not device.startswith("cuda"):
        device = "cuda:0"
    lines = [_PRELUDE.format(device=device)]
    live: list[str] = []
    for step in steps:
        if step.kind == "alloc":
            if step.shape is not None:
                if step.dtype not in DTYPES:
                    raise ValueError(f"dtype must be one of {', '.join(DTYPES)}")
                make = f"torch.empty({step.shape!r}, dtype=torch.{step.dtype}, device=dev)"
                what = f"{step.dtype}{list(step.shape)}"
            else:
                make = f"torch.empty({_nbytes_expr(step.nbytes)}, dtype=torch.uint8, device=dev)"
                what = format_size(step.nbytes)
            lines.append(f"{step.name} = alloc(lambda: {make})")
            lines.append(f'report("{step.name} = {what}")')
            if step.name not in live:
                live.append(step.name)
        elif step.kind == "free":
            if step.name in live:
                live.remove(step.name)
            lines.append(f"del {step.name}")
            lines.append(f'report("del {step.name}")')
        elif step.kind == "free_all":
            if live:
                lines.append(f"del {', '.join(live)}")
                live.clear()
            lines.append('report("free all")')
        elif step.kind == "empty_cache":
            lines.append("torch.cuda.empty_cache()")
            lines.append('report("empty_cache()")')
        elif step.kind == "reset_peak":
            lines.append("torch.cuda.reset_peak_memory_stats(dev)")
            lines.append('print("max allocated", torch.cuda.max_memory_allocated(dev))')
        elif step.kind == "cap":
            lines.append(
                "torch.cuda.set_per_process_memory_fraction("
                f"(torch.cuda.memory_reserved(dev) + {_nbytes_expr(step.nbytes)}) "
                "/ torch.cuda.mem_get_info(dev)[1], dev)"
            )
        elif step.kind == "uncap":
            lines.append("torch.cuda.set_per_process_memory_fraction(1.0, dev)")
        if step.note:
            lines[-1] += f"  # {step.note}"
    return "\n".join(lines) + "\n"


@dataclass
class SnippetLog:
    """What one browser session did on each backend, for the snippet that reproduces it:
    ``steps`` by backend key, and ``names``, the snippet's variable of each tensor id that is
    not ``t<id>`` (a guided scenario's ``a``, ``big``, ...).

    >>> log = SnippetLog()
    >>> log.add("sim:8", [Step("alloc", name="t1", nbytes=4)])
    >>> log.name(1), "t1 = alloc(" in log.snippet("sim:8", "cuda:0"), log.snippet("sim:24", "")
    ('t1', True, None)
    """

    steps: dict[str, list[Step]] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)

    def name(self, tensor_id: int) -> str:
        """The snippet's variable for a tensor: ``t<id>``, or its name in a guided scenario."""
        return self.names.get(tensor_id, f"t{tensor_id}")

    def add(self, backend_key: str, steps: list[Step]) -> None:
        self.steps.setdefault(backend_key, []).extend(steps)

    def restart(self, backend_key: str, run: ScenarioRun, live_ids: set[int]) -> None:
        """After ``run``: a scenario starts by freeing this session's tensors and emptying the
        cache, so the snippet restarts from its steps; the tensors still alive (``live_ids``)
        keep their scenario names."""
        self.steps[backend_key] = list(run.scenario.steps)
        self.names.update(
            {o.tensor_id: o.step.name for o in run.outcomes if o.tensor_id in live_ids}
        )

    def forget(self, backend_key: str) -> None:
        """Drop a backend's steps (its simulator was replaced, its tensors are gone)."""
        self.steps.pop(backend_key, None)

    def snippet(self, backend_key: str, device: str) -> str | None:
        """:func:`snippet_for` the backend's steps on ``device``; ``None`` before any step."""
        steps = self.steps.get(backend_key)
        return snippet_for(steps, device) if steps else None
