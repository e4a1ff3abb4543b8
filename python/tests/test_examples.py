"""Every example in examples/python runs as a user would run it, and says what it should."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT

EXAMPLES = {
    "quickstart.py": ["repaired {'query': 'rust', 'limit': 10}", "['StringToInteger']", "rejected unknown_tool"],
    "pydantic_ai_agent.py": ["tool   <- {\"query\": \"q3 revenue\", \"limit\": 5, \"status\": \"open\"", "gate   <- Cannot run `read_file`", "tool   <- contents of reports/q3.csv", "answer: Q3 revenue"],
    "langgraph_tools.py": ["c1 [success] 3 results for 'toolgate'", "c2 [error] Unknown tool `shell`"],
    "mcp_server.py": ["listed: ['read_file']", "is_error=False: (first 3 lines of docs/intro.md)", "is_error=True: Cannot run `read_file`", "is_error=True: Unknown tool `run_shell`"],
    "openai_agents_tools.py": ["approve? transfer", "answer: Paid.", "tool output: ['sent 42.5 to bob']"],
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs(name):
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "python" / name)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    for line in EXAMPLES[name]:
        assert line in done.stdout, f"{line!r} not in:\n{done.stdout}"


def test_every_example_is_run():
    assert sorted(p.name for p in (ROOT / "examples" / "python").glob("*.py")) == sorted(EXAMPLES)
