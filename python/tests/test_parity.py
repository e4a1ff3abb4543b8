"""Same answers in both bindings: every shared fixture (bench corpus, dialect turns, streams,
tool lists, policy sequences) through Python and through Node must agree exactly."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from conftest import ROOT
from parity import answers

NODE = shutil.which("node")


@pytest.fixture(scope="module")
def both():
    if NODE is None or not (ROOT / "dist" / "index.js").exists():
        pytest.fail("node and the built npm package (dist/, `npm run build`) are needed for the cross-binding check")
    done = subprocess.run([NODE, str(ROOT / "scripts" / "python-parity.mjs")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), answers()


@pytest.mark.parametrize("kind", ["check", "guard", "stream", "tools", "policy"])
def test_same_answers_as_node(both, kind):
    node, python = both
    assert sorted(python[kind]) == sorted(node[kind]), "both bindings must run the same cases"
    assert len(node[kind]) > 0
    for case in node[kind]:
        assert python[kind][case] == node[kind][case], f"{kind} {case}"


def test_every_outcome_and_many_reasons_are_covered(both):
    """The comparison is not vacuous: the fixtures reach every outcome and most reasons."""
    _, python = both
    seen_outcomes, seen_reasons = set(), set()

    def walk(x):
        if isinstance(x, dict):
            if isinstance(x.get("outcome"), str) and "allowed" in x:
                seen_outcomes.add(x["outcome"])
                if "reason" in x:
                    seen_reasons.add(x["reason"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(python)
    assert seen_outcomes == {"passed", "repaired", "rejected", "denied", "confirm"}
    assert {"unknown_tool", "bad_arguments", "invalid", "surface", "unresolved_resource", "arg_glob", "no_subject", "deny_rule", "no_rule", "loop", "taint", "confirm_required", "token_invalid"} <= seen_reasons
