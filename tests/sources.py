"""The repository's source files, for tests that read code rather than run it.

Every pattern must match at least one file: a check that scans sources must not pass because a
move left it nothing to scan.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Streamlit code: every lesson's page and the shared UI.
STREAMLIT_PATTERNS = ("lessons/*/page.py", "ui/*.py")
#: Pure code: what every lesson shares and every lesson module other than its page.
PURE_PATTERNS = ("core/**/*.py", "lessons/**/*.py")


def sources(*patterns: str, root: Path = ROOT) -> list[Path]:
    """The files under ``root`` matching each glob pattern (``**`` recurses), sorted.

    Raises ``AssertionError`` naming a pattern that matches nothing.
    """
    found: set[Path] = set()
    for pattern in patterns:
        matches = set(root.glob(pattern))
        assert matches, f"no source file matches {pattern!r} under {root}"
        found |= matches
    return sorted(found)


def streamlit_sources(root: Path = ROOT) -> list[Path]:
    """Every module that may import Streamlit: the pages and ``ui/``."""
    return sources(*STREAMLIT_PATTERNS, root=root)


def pure_sources(root: Path = ROOT) -> list[Path]:
    """Every module that must not import Streamlit: ``core/`` and each lesson's other modules."""
    return [p for p in sources(*PURE_PATTERNS, root=root) if p.name != "page.py"]


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every absolute import in the module at ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
    return found
