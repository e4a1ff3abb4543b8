"""The package type-checks (py.typed, annotations on every public item), and the public surface
has the types a user's checker should see (typing_usage.py; mypy follows its imports into the
package source, every core module). The adapters are left out here: checking them means reading
their SDKs (a minute of mypy); `mypy --disallow-untyped-defs toolgate` from python/ checks all."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def test_mypy_accepts_the_package_and_the_usage_file():
    import toolgate

    pkg = ROOT / "python" / "toolgate"
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--disallow-untyped-defs", "--warn-unused-ignores", "tests/typing_usage.py"],
        capture_output=True,
        text=True,
        cwd=ROOT / "python",
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success" in done.stdout
    checked = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--verbose", "tests/typing_usage.py"], capture_output=True, text=True, cwd=ROOT / "python", timeout=300)
    assert "toolgate._gate" in checked.stderr  # the package source was checked, not skipped
    assert (pkg / "py.typed").exists() and (pkg / "_native.pyi").exists()
    assert toolgate.__file__  # the installed package is what the suite imports
