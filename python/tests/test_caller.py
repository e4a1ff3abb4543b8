"""Prepared callers (``gate.caller(ctx)``): a caller read once answers exactly as the same context
passed with each call — on the MCP corpus (64 published tool schemas, a four-role policy, 38
calls) through check, acheck, guard, filter_tools, stream and confirm; engines are shown its
context; a bad context is refused when it is prepared; it is a snapshot; it cannot be given beside
context fields."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any, Dict

import pytest

from parity import verdict
from toolgate import Caller, ToolCallStream, ToolGate, ToolGateError

from conftest import CORPUS, read_json

MCP = CORPUS / "mcp"
MERGE = '{"owner":"o","repo":"r","pullNumber":1}'


def mcp_config() -> Dict[str, Any]:
    """The config bench/corpus/mcp/corpus.ts builds: every server's tools (files in name order), destructive ones marked, and the policy."""
    policy = read_json(MCP / "policy.json")
    tools = []
    for f in sorted((MCP / "servers").glob("*.json")):
        for t in read_json(f)["tools"]:
            tool = {"name": t["name"], "inputSchema": t["inputSchema"]}
            if t["name"] in policy["destructive"]:
                tool["destructive"] = True
            tools.append(tool)
    return {"version": 1, "tools": tools, "policy": policy["policy"]}


@pytest.fixture(scope="module")
def gate() -> ToolGate:
    return ToolGate(mcp_config())


CALLERS: Dict[str, Dict[str, Any]] = read_json(MCP / "callers.json")
CASES = read_json(MCP / "cases.json")


def test_answers_every_corpus_call_as_the_same_context_does(gate):
    prepared = {k: gate.caller(c) for k, c in CALLERS.items()}
    for k in CASES:
        by_ctx = gate.check(k["tool"], k["args"], CALLERS[k["caller"]])
        assert by_ctx.outcome == k["expect"]["outcome"], k["id"]
        assert verdict(gate.check(k["tool"], k["args"], prepared[k["caller"]]), True) == verdict(by_ctx, True), k["id"]
        assert verdict(asyncio.run(gate.acheck(k["tool"], k["args"], prepared[k["caller"]])), True) == verdict(by_ctx, True), k["id"]


def test_answers_a_turn_a_tool_list_and_a_stream_as_the_same_context_does(gate):
    dev = CALLERS["developer"]
    caller = gate.caller(dev)
    completion = json.dumps({
        "id": "c1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "get_file_contents", "arguments": '{"owner":"o","repo":"r"}'}},
            {"id": "b", "type": "function", "function": {"name": "list_issues", "arguments": '{"owner":"o","repo":"r","labels":"bug"}'}},
            {"id": "c", "type": "function", "function": {"name": "merge_pull_request", "arguments": MERGE}},
        ]}}],
    })
    by_ctx = gate.guard(completion, "openai", **dev)
    assert [c.outcome for c in by_ctx.calls] == ["repaired", "repaired", "denied"]
    by_caller = gate.guard(completion, "openai", caller=caller)
    assert [verdict(c, True) for c in by_caller.calls] == [verdict(c, True) for c in by_ctx.calls]
    assert by_caller.feedback == by_ctx.feedback and by_caller.payload == by_ctx.payload
    async_report = asyncio.run(gate.aguard(completion, "openai", caller=caller))
    assert [verdict(c, True) for c in async_report.calls] == [verdict(c, True) for c in by_ctx.calls]
    tools = [{"type": "function", "function": {"name": t["name"], "parameters": t["inputSchema"]}} for t in mcp_config()["tools"]]
    viewer = gate.caller(CALLERS["viewer"])
    listed = gate.filter_tools(tools, "openai", caller=viewer)
    assert listed == gate.filter_tools(tools, "openai", **CALLERS["viewer"])
    assert len(listed) < len(tools)
    live = [SimpleNamespace(name=t["function"]["name"]) for t in tools]  # live tool objects, filtered by name
    kept = gate.filter_tools(live, "openai", caller=viewer)
    assert kept == gate.filter_tools(live, "openai", **CALLERS["viewer"]) and 0 < len(kept) < len(live)
    assert isinstance(gate.stream("openai", caller=caller), ToolCallStream)


def test_is_a_snapshot_of_the_context_it_was_prepared_from(gate):
    ctx = {"subject": "u", "roles": ["viewer"]}
    caller = gate.caller(ctx)
    ctx["roles"].append("maintainer")
    ctx["roles"] = ["maintainer"]
    assert gate.check("merge_pull_request", MERGE, caller).reason == "no_rule"
    assert gate.check("merge_pull_request", MERGE, ctx).allowed
    shown = caller.context
    assert shown == {"subject": "u", "roles": ["viewer"]}
    shown["roles"].append("maintainer")  # a copy: the caller is unchanged
    assert caller.context == {"subject": "u", "roles": ["viewer"]}
    assert gate.check("merge_pull_request", MERGE, caller).reason == "no_rule"


def test_refuses_a_bad_context_when_it_is_prepared(gate):
    for bad, where in (({"role": ["admin"]}, "role"), ({"roles": "admin"}, "roles"), ({"context": {"n": 1}}, "context")):
        with pytest.raises(ToolGateError) as e:
            gate.caller(bad)
        assert e.value.code == "E_CONFIG" and where in e.value.message, e.value.message
    with pytest.raises(ToolGateError) as e:
        gate.caller(["not", "a", "dict"])  # type: ignore[arg-type]
    assert e.value.code == "E_CONFIG"
    empty = gate.caller(None)
    assert empty.context == {} and gate.check("merge_pull_request", MERGE, empty).reason == "no_rule"
    assert gate.caller({"subject": "s", "call_id": "c-1", "purpose": None}).context == {"subject": "s", "callId": "c-1"}


def test_cannot_be_given_beside_context_fields_nor_be_anything_else(gate):
    caller = gate.caller(CALLERS["viewer"])
    with pytest.raises(ToolGateError, match="caller") as e:
        gate.guard("{}", "openai", caller=caller, subject="someone-else")
    assert e.value.code == "E_CONFIG"
    with pytest.raises(ToolGateError, match="Caller") as e:
        gate.guard("{}", "openai", caller={"roles": ["maintainer"]})
    assert e.value.code == "E_CONFIG"
    with pytest.raises(ToolGateError, match="Caller"):
        gate.filter_tools([], "openai", caller="viewer")
    with pytest.raises(ToolGateError, match="Caller"):
        gate.stream("openai", caller=object())
    # a forged Caller holding no native caller is refused (E_CONFIG), never read as no caller,
    # at every entry that takes one
    forged = Caller(object(), '{"roles":["maintainer"]}')
    refusals = [
        lambda: gate.check("merge_pull_request", MERGE, forged),
        lambda: gate.confirm("tok", forged),
        lambda: gate.guard("{}", "openai", caller=forged),
        lambda: gate.filter_tools([], "openai", caller=forged),
        lambda: gate.stream("openai", caller=forged),
        lambda: asyncio.run(gate.acheck("merge_pull_request", MERGE, forged)),
    ]
    for refuse in refusals:
        with pytest.raises(ToolGateError, match="not prepared by gate.caller") as e:
            refuse()
        assert e.value.code == "E_CONFIG"


def test_engines_are_shown_the_prepared_context_and_confirm_takes_a_caller(policy_config):
    seen = []

    def engine(req):
        seen.append(req)
        return "allow" if req["tool"] == "admin_panel" else "delegate"

    gate = ToolGate(policy_config, engines=[engine])
    op = gate.caller({"subject": "op"})
    assert gate.check("admin_panel", {}, op).outcome == "passed"
    assert seen[-1]["context"] == {"subject": "op"}
    plain = ToolGate(policy_config)
    fin = plain.caller({"subject": "fin", "roles": ["finance"]})
    token = plain.check("transfer", '{"amount": "500", "to": "bob"}', fin).confirmation.token
    assert plain.confirm(token, plain.caller({"subject": "eve", "roles": ["finance"]})).reason == "token_invalid"
    ok = plain.confirm(token, fin)
    assert (ok.outcome, ok.arguments) == ("repaired", {"amount": 500, "to": "bob"})
