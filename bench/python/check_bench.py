"""`ToolGate.check` from Python against what a Python developer would write without toolgate,
on the same corpus (bench/corpus/), in the same run:

- jsonschema: `json.loads` + a Draft 2020-12 validator per tool compiled up front (`is_valid`):
  validation only, no repair;
- pydantic: one pydantic-core `SchemaValidator` per tool, built from the tool's JSON Schema, in
  lax mode (`validate_json`: parse + validate + coerce "10" -> 10 + defaults + pruning in Rust) —
  pydantic's own repair.

toolgate's answers are first checked against the corpus (outcome and arguments of every case);
the peers' disagreements with it are counted and printed, and every case is timed on every side,
so the work compared is the same set of calls. Rounds are interleaved, the order of the sides
turning every round, so drift on a shared machine hits all sides alike. Prints the median ns per call of
each side and the ratios.

    python bench/python/check_bench.py [--rounds N]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import jsonschema
from pydantic_core import SchemaValidator, ValidationError, core_schema

from toolgate import ToolGate

ROOT = Path(__file__).resolve().parents[2]
CONFIG = json.loads((ROOT / "bench" / "corpus" / "tools.json").read_text())
CASES = json.loads((ROOT / "bench" / "corpus" / "cases.json").read_text())


def pydantic_schema(s: Dict[str, Any], defs: Dict[str, Any]) -> Any:
    """A pydantic-core schema for the JSON Schema subset the corpus uses."""
    if "$ref" in s:
        return pydantic_schema(defs[s["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in s:
        return core_schema.union_schema([pydantic_schema(b, defs) for b in s["anyOf"]])
    if "enum" in s:
        return core_schema.literal_schema(list(s["enum"]))
    t = s.get("type")
    if isinstance(t, list):
        return core_schema.union_schema([pydantic_schema({**s, "type": x}, defs) for x in t])
    if t == "object":
        fields = {}
        required = set(s.get("required", ()))
        for name, sub in s.get("properties", {}).items():
            inner = pydantic_schema(sub, defs)
            if "default" in sub:
                inner = core_schema.with_default_schema(inner, default=sub["default"])
            fields[name] = core_schema.typed_dict_field(inner, required=name in required)
        extra = "ignore" if s.get("additionalProperties") is False else "allow"
        return core_schema.typed_dict_schema(fields, extra_behavior=extra)
    if t == "string":
        return core_schema.str_schema(min_length=s.get("minLength"), max_length=s.get("maxLength"), pattern=s.get("pattern"))
    if t == "integer":
        return core_schema.int_schema(ge=s.get("minimum"), le=s.get("maximum"))
    if t == "number":
        return core_schema.float_schema(ge=s.get("minimum"), le=s.get("maximum"))
    if t == "boolean":
        return core_schema.bool_schema()
    if t == "null":
        return core_schema.none_schema()
    if t == "array":
        return core_schema.list_schema(pydantic_schema(s.get("items", {}), defs), max_length=s.get("maxItems"))
    return core_schema.any_schema()


def build() -> Dict[str, Callable[[str, str], Tuple[bool, Any]]]:
    """The three sides, each `(tool, args text) -> (allowed, arguments)`."""
    gate = ToolGate(CONFIG)
    check = gate.check
    validators = {t["name"]: jsonschema.Draft202012Validator(t["inputSchema"]) for t in CONFIG["tools"]}
    models = {t["name"]: SchemaValidator(pydantic_schema(t["inputSchema"], t["inputSchema"].get("$defs", {}))) for t in CONFIG["tools"]}
    loads = json.loads

    def tg(tool: str, text: str) -> Tuple[bool, Any]:
        v = check(tool, text)
        return v.allowed, v.arguments

    def js(tool: str, text: str) -> Tuple[bool, Any]:
        try:
            value = loads(text)
        except ValueError:
            return False, None
        validator = validators.get(tool)
        if validator is None or not validator.is_valid(value):
            return False, None
        return True, value

    def pd(tool: str, text: str) -> Tuple[bool, Any]:
        model = models.get(tool)
        if model is None:
            return False, None
        try:
            return True, model.validate_json(text)
        except ValidationError:
            return False, None

    return {"toolgate": tg, "jsonschema": js, "pydantic": pd}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=400, help="whole-corpus rounds per side (default 400)")
    rounds = ap.parse_args().rounds
    sides = build()
    calls = [(c["tool"], c["args"]) for c in CASES]

    # toolgate must give the corpus's answers before anything is timed
    wrong = []
    for c in CASES:
        v = ToolGate(CONFIG).check(c["tool"], c["args"])
        exp = c["expect"]
        if v.outcome != exp["outcome"] or ("arguments" in exp and v.arguments != exp["arguments"]):
            wrong.append(c["id"])
    if wrong:
        print(f"toolgate disagrees with the corpus on {wrong}: not timing", file=sys.stderr)
        return 1
    for name in ("jsonschema", "pydantic"):
        differ = [c["id"] for c in CASES if sides[name](c["tool"], c["args"]) != sides["toolgate"](c["tool"], c["args"])]
        print(f"{name}: differs from toolgate's answer (allowed, arguments) on {len(differ)} of {len(CASES)} cases")

    samples: Dict[str, List[float]] = {k: [] for k in sides}
    perf = time.perf_counter_ns
    # the garbage collector runs between rounds (every 20), not inside one: jsonschema's garbage
    # would otherwise trigger collections inside whichever side's round comes next; the order of
    # the sides turns every round, so none always runs right after a collection or another side
    order = list(sides.items())
    gc.collect()
    gc.disable()
    try:
        for r in range(rounds):
            for name, f in order[r % len(order):] + order[: r % len(order)]:
                t0 = perf()
                for tool, text in calls:
                    f(tool, text)
                samples[name].append((perf() - t0) / len(calls))
            if r % 20 == 19:
                gc.collect()
    finally:
        gc.enable()
    med = {k: statistics.median(v) for k, v in samples.items()}
    print(f"\n{len(calls)} calls x {rounds} rounds per side, Python {sys.version.split()[0]}")
    print(f"{'side':<12} {'median ns/call':>15} {'p10':>9} {'p90':>9}")
    for k, v in samples.items():
        q = statistics.quantiles(v, n=10)
        print(f"{k:<12} {med[k]:>15,.0f} {q[0]:>9,.0f} {q[-1]:>9,.0f}")
    print(f"\nratio jsonschema / toolgate: {med['jsonschema'] / med['toolgate']:.1f}x")
    print(f"ratio pydantic / toolgate:   {med['pydantic'] / med['toolgate']:.2f}x")

    # each side alone, back to back (its code and data stay in cache: a hot loop's best case)
    alone: Dict[str, float] = {}
    for name, f in sides.items():
        runs = []
        for _ in range(max(rounds // 4, 10)):
            t0 = perf()
            for tool, text in calls:
                f(tool, text)
            runs.append((perf() - t0) / len(calls))
        alone[name] = statistics.median(runs)
    print("\neach side alone (median ns/call): " + ", ".join(f"{k} {v:,.0f}" for k, v in alone.items()))
    print(f"ratio jsonschema / toolgate: {alone['jsonschema'] / alone['toolgate']:.1f}x, pydantic / toolgate: {alone['pydantic'] / alone['toolgate']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
