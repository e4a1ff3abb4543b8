"""The wheel `maturin build --release` made installs into a fresh virtualenv with no Rust
toolchain on PATH, imports, and answers (the docs/python.md quickstart, pasted)."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

QUICKSTART = (ROOT / "examples" / "python" / "quickstart.py").read_text(encoding="utf-8")


def interpreters():
    """This interpreter, and the oldest (3.9, the abi3 floor) and newest CPython found under
    pyenv: one abi3 wheel must serve them all."""
    found = [sys.executable]
    for pattern in ("~/.pyenv/versions/3.9.*/bin/python3", "~/.pyenv/versions/3.13.*/bin/python3"):
        found += sorted(glob.glob(os.path.expanduser(pattern)))[-1:]
    return found


@pytest.mark.parametrize("python", interpreters())
def test_wheel_installs_and_runs_without_rust(tmp_path: Path, python: str):
    wheel = os.environ.get("TOOLGATE_WHEEL")
    if not wheel:
        pytest.fail("TOOLGATE_WHEEL is not set: run the suite with scripts/test-python.sh, which builds the wheel")
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    # no cargo, rustc or maturin anywhere on PATH: only the system's own folders and the venv
    path = os.pathsep.join([str(venv / "bin"), "/usr/bin", "/bin"])
    env = {"PATH": path, "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    for tool in ("cargo", "rustc", "maturin"):
        found = subprocess.run(["sh", "-c", f"command -v {tool}"], env=env, capture_output=True, text=True)
        assert found.stdout == "", f"{tool} is on the stripped PATH at {found.stdout}"
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-deps", "--disable-pip-version-check", "-q", wheel], check=True, env=env)
    (tmp_path / "quickstart.py").write_text(QUICKSTART, encoding="utf-8")
    done = subprocess.run([str(venv / "bin" / "python"), "quickstart.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "repaired {'query': 'rust', 'limit': 10}" in done.stdout
    assert "rejected unknown_tool" in done.stdout
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import toolgate._native as n; print(n.__file__)"], env=env, capture_output=True, text=True)
    assert where.stdout.startswith(str(venv)), where.stdout
