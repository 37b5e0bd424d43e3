"""ruff and mypy are part of the test run: the machine keeps the seams and the style true."""

from __future__ import annotations

import shutil
import subprocess
import sys

from conftest import REPO


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(REPO / ".venv" / "bin")) or shutil.which(name)
    assert found, f"{name} is not installed; `pip install -e '.[dev]'` (or `make setup`) installs it"
    return found


def test_ruff_finds_nothing():
    r = subprocess.run([_tool("ruff"), "check", "src", "tests", "benchmarks"], cwd=REPO, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_finds_nothing():
    """mypy over src/mnemoclaw (pyproject.toml): the store and backend layers fully typed, so a
    call to a member the Store or Backend protocol lacks fails here."""
    r = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_benchmark_script_loads():
    """Each script under benchmarks/ imports what it names: a renamed function in src fails here,
    not in the hands of whoever runs the benchmark next (main() runs only as a script)."""
    load = ("import importlib.util, pathlib, sys\n"
            "for path in sorted(pathlib.Path('benchmarks').glob('*.py')):\n"
            "    sys.path.insert(0, str(path.parent))\n"
            "    spec = importlib.util.spec_from_file_location('bench_' + path.stem, path)\n"
            "    spec.loader.exec_module(importlib.util.module_from_spec(spec))\n")
    r = subprocess.run([sys.executable, "-c", load], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
