"""Type tests of the public surface (checked by mypy in test_types.py, never run): what a user's
editor and type checker see."""

from typing import Any, Dict, List, Optional

from typing_extensions import assert_type

from toolgate import AllowedCall, Confirmation, Flag, ToolCallStream, ToolGate, ToolGateError, TurnCall, TurnReport, Verdict, verify_receipt

gate = ToolGate({"tools": []})
v = gate.check("t", '{"a": 1}', {"subject": "ana", "roles": ["r"]})
assert_type(v, Verdict)
assert_type(v.allowed, bool)
assert_type(v.arguments, Optional[Dict[str, Any]])
assert_type(v.arguments_json, Optional[str])
assert_type(v.flags, List[Flag])
assert_type(v.message, Optional[str])
assert_type(v.confirmation, Optional[Confirmation])
assert_type(v.flags[0].code, str)

r = gate.guard("{}", "openai", subject="ana")
assert_type(r, TurnReport)
assert_type(r.calls, List[TurnCall])
assert_type(r.calls[0].call_id, str)
assert_type(r.allowed, List[AllowedCall])

s = gate.stream("anthropic", subject="ana")
assert_type(s, ToolCallStream)
assert_type(s.push("data: {}"), List[TurnCall])
assert_type(s.end(), TurnReport)

assert_type(gate.confirm("token"), Verdict)
assert_type(verify_receipt("r", "k", tool="t"), Dict[str, Any])
assert_type(ToolGateError("E_CONFIG", "x").code, str)


async def use_async() -> None:
    assert_type(await gate.acheck("t", {"a": 1}), Verdict)
    assert_type(await gate.aguard({}, "mcp"), TurnReport)
    assert_type(await gate.aconfirm("token"), Verdict)


gate.check("t", 42)  # type: ignore[arg-type]  # args must be text, bytes, a mapping or None
