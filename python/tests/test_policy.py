"""Deny by default, confirm-before-write, taint, plugged engines and receipts through the Python
package (the cross-binding comparison of the same fixture is in test_parity.py)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from toolgate import ToolGate, ToolGateError, generate_receipt_key, verify_receipt

FIN = {"subject": "fin", "roles": ["finance"]}


def test_deny_by_default(policy_config):
    gate = ToolGate(policy_config)
    v = gate.check("admin_panel", {})
    assert (v.outcome, v.reason) == ("denied", "no_rule")
    assert gate.check("search", {"q": "x"}).outcome == "passed"


def test_confirm_once_and_only_for_the_same_caller(policy_config):
    gate = ToolGate(policy_config)
    v = gate.check("transfer", '{"amount": "500", "to": "bob"}', FIN)
    assert (v.outcome, v.reason, v.allowed) == ("confirm", "confirm_required", False)
    token = v.confirmation.token
    assert token not in v.message and "500" in v.confirmation.summary
    assert gate.confirm(token, {"subject": "eve", "roles": ["finance"]}).reason == "token_invalid"
    v2 = ToolGate(policy_config).check("transfer", '{"amount": "500", "to": "bob"}', FIN)
    ok = gate.confirm(v2.confirmation.token, FIN)  # another gate's token means nothing here
    assert ok.reason == "token_invalid"


def test_confirm_returns_the_repaired_arguments_exactly_once(policy_config):
    gate = ToolGate(policy_config)
    token = gate.check("transfer", '{"amount": "500", "to": "bob"}', FIN).confirmation.token
    ok = gate.confirm(token, FIN)
    assert (ok.outcome, ok.tool, ok.arguments) == ("repaired", "transfer", {"amount": 500, "to": "bob"})
    assert [f.code for f in ok.flags] == ["StringToFloat"]
    assert gate.confirm(token, FIN).reason == "token_invalid"


def test_mark_session_taints_and_unknown_label_is_e_config(policy_config):
    gate = ToolGate(policy_config)
    gate.mark_session("s", "secret")
    assert gate.check("post_webhook", {"url": "u"}, {"subject": "a", "session": "s"}).reason == "taint"
    with pytest.raises(ToolGateError) as e:
        gate.mark_session("s", "top-secret")
    assert e.value.code == "E_CONFIG" and "public" in e.value.message


def test_engines_decide_after_the_rules(policy_config):
    seen = []

    def engine(req):
        seen.append(req)
        return "allow" if req["tool"] == "admin_panel" else "delegate"

    gate = ToolGate(policy_config, engines=[engine])
    v = gate.check("admin_panel", {}, {"subject": "op"})
    assert v.outcome == "passed"
    assert seen[-1] == {"tool": "admin_panel", "action": "admin_panel", "arguments": {}, "context": {"subject": "op"}, "rules": "no_rule"}
    assert gate.check("search", {"q": "x"}).outcome == "passed"  # delegate keeps the rules' allow
    assert gate.check("read_file", {"path": "../x"}, {"roles": ["analyst"]}).reason == "unresolved_resource"
    assert seen[-1]["tool"] == "search"  # a built-in refusal is final: the engine is not asked


def test_an_engine_that_raises_or_lies_or_is_late_denies(policy_config):
    errors = []

    def boom(req):
        raise RuntimeError("down")

    def slow(req):
        time.sleep(0.03)
        return "allow"

    for engine, kind in ((boom, RuntimeError), (lambda r: "yes", ValueError), (slow, TimeoutError)):
        gate = ToolGate(policy_config, engines=[engine], engine_timeout_ms=10, on_engine_error=lambda e, r, i: errors.append(e))
        v = gate.check("search", {"q": "x"})
        assert (v.outcome, v.reason) == ("denied", "engine")
        assert isinstance(errors[-1], kind)


def test_async_engines_need_the_async_methods(policy_config):
    async def engine(req):
        await asyncio.sleep(0)
        return "deny" if req["tool"] == "search" else "delegate"

    gate = ToolGate(policy_config, engines=[engine])
    with pytest.raises(ToolGateError) as e:
        gate.check("search", {"q": "x"})
    assert e.value.code == "E_ASYNC"
    v = asyncio.run(gate.acheck("search", {"q": "x"}))
    assert (v.outcome, v.reason) == ("denied", "engine")
    turn = {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "search", "input": {"q": "x"}}, {"type": "tool_use", "id": "b", "name": "get_doc", "input": {"id": "7"}}]}
    r = asyncio.run(gate.aguard(turn, "anthropic"))
    assert [(c.call_id, c.outcome, c.reason) for c in r.calls] == [("a", "denied", "engine"), ("b", "passed", None)]
    with pytest.raises(ToolGateError) as e:
        gate.stream("anthropic")
    assert e.value.code == "E_ASYNC"


def _rule_runs_out_gate(until_s: float, engine):
    # a deny rule that runs out while the engines answer the turn's other call
    until = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(until_s)) + f".{int(until_s * 1000) % 1000:03d}Z"
    config = {
        "tools": [{"name": n, "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}}} for n in ("get_account", "close_account")],
        "policy": {"rules": [{"effect": "allow", "tools": ["get_account", "close_account"]}, {"effect": "deny", "tools": ["close_account"], "when": f"now < '{until}'"}]},
    }
    return ToolGate(config, engines=[engine], engine_timeout_ms=5000)


RUNS_OUT_TURN = {"role": "assistant", "content": [{"type": "tool_use", "id": f"c{i}", "name": n, "input": {"id": 1}} for i, n in enumerate(("get_account", "close_account"))]}


def test_a_call_refused_before_the_engines_keeps_its_refusal_after_the_rules_change():
    # the turn is kept decided up to the engines: the second step runs only for the calls they
    # were asked about, so a refusal by the rules stays one even when the rule runs out meanwhile
    asked = []

    def slow(req):
        asked.append(req["tool"])
        time.sleep(0.25)
        return "allow" if req["tool"] == "get_account" else "deny"

    r = _rule_runs_out_gate(time.time() + 0.12, slow).guard(RUNS_OUT_TURN, "anthropic", subject="ana")
    assert asked == ["get_account"]
    assert [(c.allowed, c.reason) for c in r.calls] == [(True, None), (False, "deny_rule")]
    assert "policy denies `close_account`" in r.calls[1].message
    assert [f["tool_use_id"] for f in r.feedback[0]["content"]] == ["c1"]

    async def slow_async(req):
        asked.append(req["tool"])
        await asyncio.sleep(0.25)
        return "allow" if req["tool"] == "get_account" else "deny"

    asked.clear()
    r = asyncio.run(_rule_runs_out_gate(time.time() + 0.12, slow_async).aguard(RUNS_OUT_TURN, "anthropic", subject="ana"))
    assert asked == ["get_account"]
    assert [(c.allowed, c.reason) for c in r.calls] == [(True, None), (False, "deny_rule")]


def test_a_turn_with_engines_is_read_once_and_finished_once():
    # the engines judge the decided (repaired) arguments; the raw pending turn finishes once
    seen = []
    config = {
        "tools": [{"name": "get_account", "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}}],
        "policy": {"rules": [{"effect": "allow", "tools": ["get_account"]}]},
    }
    gate = ToolGate(config, engines=[lambda req: (seen.append(req["arguments"]), "delegate")[1]])
    turn = {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "get_account", "input": {"id": "7"}}, {"type": "tool_use", "id": "b", "name": "nope", "input": {}}]}
    r = gate.guard(turn, "anthropic", subject="ana")
    assert seen == [{"id": 7}]
    assert [(c.outcome, c.reason) for c in r.calls] == [("repaired", None), ("rejected", "unknown_tool")]
    assert r.allowed[0].arguments == {"id": 7}
    step = gate._gate.guard_step("anthropic", json.dumps(turn), '{"subject":"ana"}')
    assert step.questions() == [{"index": 0, "tool": "get_account", "arguments": {"id": 7}, "action": "get_account", "resource": None, "engine": "allow"}]
    with pytest.raises(ToolGateError) as e:
        step.finish(["perhaps"])
    assert e.value.code == "E_CONFIG" and "perhaps" in str(e.value)
    with pytest.raises(ToolGateError) as e:
        step.finish(["allow"])
    assert e.value.code == "E_CONFIG" and "already been finished" in str(e.value)
    assert step.questions() == []
    final = gate._gate.guard_step("anthropic", json.dumps({"role": "assistant", "content": [{"type": "tool_use", "id": "x", "name": "nope", "input": {}}]}), None)
    assert isinstance(final, tuple), "no call reaches the engines: the first step's report is final"


def test_a_gate_with_engines_records_what_the_first_step_refused():
    # refused before the engines' stage: the host's answer, so recorded (it used to go unrecorded)
    seen = []
    config = {
        "tools": [{"name": n, "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}}} for n in ("get_account", "close_account")],
        "policy": {"rules": [{"effect": "allow", "tools": ["get_account"]}, {"effect": "deny", "tools": ["close_account"]}]},
        "audit": {},
    }
    gate = ToolGate(config, engines=[lambda req: "allow"], on_audit=seen.append)
    assert gate.check("close_account", '{"id": 1}', {"subject": "ana"}).reason == "deny_rule"
    assert gate.check("get_account", '{"id": 1}', {"subject": "ana"}).outcome == "passed"
    assert gate.confirm("not-a-token", {"subject": "ana"}).reason == "token_invalid"
    turn = {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "close_account", "input": {"id": 2}}, {"type": "tool_use", "id": "b", "name": "nope", "input": {}}]}
    assert [c.reason for c in gate.guard(turn, "anthropic", subject="ana").calls] == ["deny_rule", "unknown_tool"]
    with pytest.raises(ToolGateError):
        gate.guard({"role": "assistant", "content": 5}, "anthropic", subject="ana")
    gate.flush()
    records = [json.loads(line) for line in seen]
    got = [(r["type"], r.get("tool", r.get("code")), r.get("outcome")) for r in records if r["type"] != "open"]
    assert got == [
        ("decision", "close_account", "denied"),
        ("decision", "get_account", "passed"),
        ("decision", "", "denied"),
        ("decision", "close_account", "denied"),
        ("decision", "nope", "rejected"),
        ("turn_error", "E_PAYLOAD", None),
    ]


def test_async_engine_timeout_denies(policy_config):
    async def hang(req):
        await asyncio.sleep(5)
        return "allow"

    gate = ToolGate(policy_config, engines=[hang], engine_timeout_ms=20)
    t0 = time.perf_counter()
    v = asyncio.run(gate.acheck("admin_panel", {}))
    assert (v.outcome, v.reason) == ("denied", "engine")
    assert time.perf_counter() - t0 < 2


def test_receipts_sign_allowed_calls_and_verify(monkeypatch):
    key = generate_receipt_key()
    monkeypatch.setenv("TG_TEST_KEY", key["privateKey"])
    gate = ToolGate({"tools": [{"name": "t", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}], "receipts": {"privateKeyEnv": "TG_TEST_KEY"}})
    assert gate.public_key == key["publicKey"]
    v = gate.check("t", '{"n": "3"}', {"subject": "alice", "call_id": "c1"})
    claims = verify_receipt(v.receipt, gate.public_key, tool="t", arguments={"n": 3}, sub="alice")
    assert (claims["tool"], claims["sub"], claims["callId"]) == ("t", "alice", "c1")
    for kwargs, reason in (({"arguments": {"n": 4}}, "wrong_arguments"), ({"tool": "u"}, "wrong_tool"), ({"now": time.time() + 3600}, "expired")):
        with pytest.raises(ToolGateError) as e:
            verify_receipt(v.receipt, gate.public_key, **kwargs)
        assert e.value.code == "E_RECEIPT" and e.value.message.startswith(reason), e.value.message
    with pytest.raises(ToolGateError) as e:
        verify_receipt(v.receipt[:-4] + "AAAA", gate.public_key)
    assert e.value.code == "E_RECEIPT"
    monkeypatch.delenv("TG_TEST_KEY")
    with pytest.raises(ToolGateError) as e:
        ToolGate({"tools": [], "receipts": {"privateKeyEnv": "TG_TEST_KEY"}})
    assert e.value.code == "E_CONFIG" and "TG_TEST_KEY" in e.value.message
