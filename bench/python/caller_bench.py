"""``ToolGate.check`` from Python on the MCP corpus (bench/corpus/mcp: 64 published tool schemas, a
four-role policy, four callers, 38 calls), the caller given as a ``dict`` on every call against
the same caller prepared once with ``gate.caller(ctx)``, interleaved in one run (the order of the
sides turning every round). Both sides' answers are checked equal first. Prints the median ns
per call of each side and the ratio.

    python bench/python/caller_bench.py [--rounds N]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

from toolgate import ToolGate

MCP = Path(__file__).resolve().parents[1] / "corpus" / "mcp"


def config() -> Dict[str, Any]:
    """The config bench/corpus/mcp/corpus.ts builds: every server's tools (files in name order), destructive ones marked, and the policy."""
    policy = json.loads((MCP / "policy.json").read_text())
    tools = []
    for f in sorted((MCP / "servers").glob("*.json")):
        for t in json.loads(f.read_text())["tools"]:
            tool = {"name": t["name"], "inputSchema": t["inputSchema"]}
            if t["name"] in policy["destructive"]:
                tool["destructive"] = True
            tools.append(tool)
    return {"version": 1, "tools": tools, "policy": policy["policy"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200)
    rounds = ap.parse_args().rounds
    gate = ToolGate(config())
    callers = json.loads((MCP / "callers.json").read_text())
    cases = json.loads((MCP / "cases.json").read_text())
    prepared = {k: gate.caller(c) for k, c in callers.items()}
    by_dict = [(k["tool"], k["args"], callers[k["caller"]]) for k in cases]
    by_caller = [(k["tool"], k["args"], prepared[k["caller"]]) for k in cases]
    for (t, a, c), (_, _, p) in zip(by_dict, by_caller):
        v, w = gate.check(t, a, c), gate.check(t, a, p)
        assert (v.outcome, v.reason, v.arguments_json, v.message) == (w.outcome, w.reason, w.arguments_json, w.message), t
    sides: Dict[str, Callable[[], None]] = {
        "check(tool, text, ctx dict)": lambda: [gate.check(t, a, c) for t, a, c in by_dict] and None,
        "check(tool, text, caller)": lambda: [gate.check(t, a, c) for t, a, c in by_caller] and None,
    }
    samples: Dict[str, List[float]] = {k: [] for k in sides}
    names = list(sides)
    gc.disable()
    for r in range(rounds):
        for name in names[r % 2 :] + names[: r % 2]:
            t0 = time.perf_counter_ns()
            sides[name]()
            samples[name].append((time.perf_counter_ns() - t0) / len(cases))
    gc.enable()
    med = {k: statistics.median(v) for k, v in samples.items()}
    print(f"toolgate Python caller benchmark: {len(cases)} calls, {rounds} interleaved rounds (median ns per call)")
    for k, v in med.items():
        print(f"  {k:<30} {v:8.0f}")
    print(f"ratio caller / ctx dict: {med[names[1]] / med[names[0]]:.2f}")


if __name__ == "__main__":
    main()
