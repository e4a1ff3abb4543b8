"""Python's answers for the shared fixtures, normalized exactly as scripts/python-parity.mjs
normalizes Node's (keep the two in step): random tokens and times are left out, the rest must
be equal — outcome, reason, message, arguments, argument text, flags, payloads, feedback."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict

from conftest import CORPUS, FIXTURES, ROOT, fixture_cases, read_json
from toolgate import ToolGate, ToolGateError


def verdict(v: Any, with_text: bool) -> Dict[str, Any]:
    o: Dict[str, Any] = {"outcome": v.outcome, "allowed": v.allowed, "tool": v.tool, "flags": [f.to_dict() for f in v.flags]}
    call_id = getattr(v, "call_id", None)
    if call_id is not None:
        o["callId"] = call_id
    if v.allowed:
        o["arguments"] = v.arguments
    if v.allowed and with_text:
        o["argumentsJson"] = v.arguments_json
    for k in ("reason", "message", "action", "resource"):
        if getattr(v, k) is not None:
            o[k] = getattr(v, k)
    if v.confirmation is not None:
        o["confirmation"] = {"summary": v.confirmation.summary}
    if v.receipt:
        o["receipt"] = "<receipt>"
    if v.shadow:
        o.update(shadow=True, wouldBe=v.would_be)
    return o


def report(r: Any) -> Dict[str, Any]:
    return {
        "dialect": r.dialect,
        "calls": [verdict(c, True) for c in r.calls],
        "allowed": [a.to_dict() for a in r.allowed],
        "payload": r.payload,
        "feedback": r.feedback,
        "providerExecuted": r.provider_executed,
        "turnRefusals": r.turn_refusals,
    }


def failure(e: ToolGateError) -> Dict[str, Any]:
    return {"error": e.code, "message": e.message}


def attempt(f: Callable[[], Any]) -> Any:
    try:
        return f()
    except ToolGateError as e:
        return failure(e)


def answers() -> Dict[str, Dict[str, Any]]:
    """Every case of the shared fixtures through the Python package."""
    out: Dict[str, Dict[str, Any]] = {"check": {}, "guard": {}, "stream": {}, "tools": {}, "policy": {}}
    corpus = ToolGate(read_json(CORPUS / "tools.json"))
    for c in read_json(CORPUS / "cases.json"):
        out["check"][c["id"]] = verdict(corpus.check(c["tool"], c["args"]), True)

    dialect_tools = read_json(FIXTURES / "dialects" / "tools.json")
    gate = ToolGate(dialect_tools)
    for name, fx in fixture_cases(FIXTURES / "dialects"):
        payload = fx.get("payloadText", fx.get("payload"))
        opts = fx.get("options") or {}
        out["guard"][name] = attempt(lambda: report(gate.guard(payload, fx["dialect"], protocol_version=opts.get("protocolVersion"))))

    for name, fx in fixture_cases(FIXTURES / "streams"):
        g = ToolGate({**dialect_tools, **(fx.get("config") or {})})
        try:
            stream = g.stream(fx["dialect"])
        except ToolGateError as e:
            out["stream"][name] = {"start": failure(e)}
            continue
        steps = []
        for ev in fx["events"]:
            text = ev if isinstance(ev, str) else json.dumps(ev, ensure_ascii=False, separators=(",", ":"))
            steps.append(attempt(lambda: {"completed": [verdict(c, True) for c in stream.push(text)], "forwarded": stream.forward()}))
        out["stream"][name] = {"steps": steps, "end": attempt(lambda: report(stream.end()))}

    for name, fx in fixture_cases(FIXTURES / "tool-lists"):
        out["tools"][name] = attempt(lambda: {"tools": gate.filter_tools(fx["tools"], fx["dialect"])})

    policy_config = read_json(FIXTURES / "policy" / "config.json")
    for name, steps in read_json(ROOT / "python" / "tests" / "fixtures" / "policy-cases.json")["cases"].items():
        pg = ToolGate(policy_config)
        previous = [None]
        results = []
        for s in steps:
            def step(s=s):
                if "markSession" in s:
                    return pg.mark_session(*s["markSession"])
                if "confirm" in s:
                    token = s["confirm"]
                    if token == "previous":
                        token = previous[0].confirmation.token if previous[0] is not None and previous[0].confirmation else ""
                    v = pg.confirm(token, s.get("ctx"))
                else:
                    v = pg.check(s["tool"], s["args"], s.get("ctx"))
                if v.confirmation is not None:
                    previous[0] = v
                return verdict(v, isinstance(s["args"], str) if "args" in s else False)
            results.append(attempt(step))
        out["policy"][name] = results
    return out
