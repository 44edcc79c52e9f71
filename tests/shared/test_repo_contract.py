"""Repository-level promises: README commands, CI entry point, core purity, page registry."""

from __future__ import annotations

import re
from pathlib import Path

from lessons.registry import LESSONS, available_pages

ROOT = Path(__file__).resolve().parents[2]


def readme_commands(name: str = "README.md") -> list[str]:
    text = (ROOT / name).read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", text)


def test_readme_opens_with_install_run_and_test_commands():
    install_and_run, install_and_test = readme_commands()[:2]
    assert install_and_run.endswith("streamlit run app.py")
    assert "requirements.txt" in install_and_run
    assert "requirements-dev.txt" in install_and_test and install_and_test.endswith("pytest")
    assert "chromium" in install_and_test
    # The notes' quotes are Chinese: without a CJK font the screenshots show empty boxes.
    assert "fonts-noto-cjk" in install_and_test


def test_the_chinese_readme_opens_with_the_same_two_commands():
    assert readme_commands("README.zh-CN.md")[:2] == readme_commands()[:2]
    text = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    assert "README.md" in text  # it points to the English README for everything else


def test_ci_runs_the_readme_test_command():
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert readme_commands()[1] in ci_lines


def test_pages_live_outside_legacy_pages_folder():
    assert not (ROOT / "pages").exists(), "a pages/ folder triggers Streamlit's legacy routing"
    assert all(page.script.parent.parent.name == "lessons" for page in available_pages())


def test_registry_slugs_are_unique_and_match_scripts():
    slugs = [page.slug for page in LESSONS]
    assert len(slugs) == len(set(slugs))
    for page in available_pages():
        assert page.script.is_file()


def test_requirements_name_every_runtime_dependency():
    text = (ROOT / "requirements.txt").read_text()
    for name in (
        "torch", "torchvision", "streamlit", "plotly", "opencv-python-headless",
        "nvidia-ml-py", "numpy", "scikit-image",
    ):  # fmt: skip
        assert re.search(rf"^{re.escape(name)}\b", text, re.M), name
    assert re.search(r"^streamlit>=1\.65", text, re.M)


def test_ci_fails_when_any_step_of_the_command_fails(tmp_path):
    """The command is an && chain: run under ``set -e`` a failing ruff in the middle would not
    stop the script, and CI would print "finished" with status 0. Run .ci/run's own lines with
    the command replaced by a chain whose middle step fails: the script's status must say so."""
    import subprocess

    script = (ROOT / ".ci" / "run").read_text()
    chain = "true && false && true"
    fake = script.replace(readme_commands()[1], chain).replace('cd "$(dirname "$0")/.."', "")
    assert chain in fake
    (tmp_path / "run").write_text(fake)
    done = subprocess.run(["bash", str(tmp_path / "run")], capture_output=True, text=True)
    assert done.returncode != 0, done.stdout
