"""requirements.txt's version floors: the installed packages satisfy them, and the floors of the
packages the app's defences rest on stay at or above the first release without a known hole."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]

# The lowest floor each package may have. torch.load(weights_only=True), which refuses pickled
# code in uploaded weights, could be bypassed below 2.6 (CVE-2025-32434) and below 2.10
# (CVE-2026-24747); torchvision 0.25 is the release for torch 2.10. Pillow decodes every uploaded
# image: 10.0.0 shipped libwebp's heap overflow (CVE-2023-4863), and below 12.1.1 a crafted PSD
# writes out of bounds (CVE-2026-25990).
SECURITY_FLOORS = {
    "torch": Version("2.10"),
    "torchvision": Version("0.25"),
    "pillow": Version("12.1.1"),
}


def requirements(path: Path = ROOT / "requirements.txt") -> list[Requirement]:
    """The requirement lines of ``path`` (comments and blank lines skipped)."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [Requirement(line) for line in lines if line and not line.startswith("-")]


def floor(requirement: Requirement) -> Version | None:
    """The lowest version ``requirement`` admits through ``>=`` (None without one)."""
    floors = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
    return max(floors, default=None)


def test_every_requirement_has_a_floor():
    missing = [str(r) for r in requirements() if floor(r) is None]
    assert not missing, f"give these a >= floor: {missing}"


@pytest.mark.parametrize("requirement", requirements(), ids=lambda r: r.name)
def test_the_installed_version_satisfies_requirements_txt(requirement: Requirement):
    try:
        installed = version(requirement.name)
    except PackageNotFoundError:
        pytest.fail(f"{requirement.name} is not installed: pip install -r requirements.txt")
    # A local build tag (2.14.1+cpu from PyTorch's wheel index) satisfies the same range.
    public = Version(installed).public
    assert requirement.specifier.contains(public, prereleases=True), (
        f"{requirement.name} {installed} does not satisfy {requirement}"
    )


@pytest.mark.parametrize("name", sorted(SECURITY_FLOORS))
def test_security_floors_are_not_lowered(name: str):
    by_name = {r.name.lower(): r for r in requirements()}
    assert name in by_name, f"requirements.txt must name {name}"
    found = floor(by_name[name])
    assert found is not None and found >= SECURITY_FLOORS[name], (
        f"{name}'s floor {found} is below {SECURITY_FLOORS[name]}, the first release without "
        "the known vulnerability"
    )
