"""Whole turns, streams and tool lists: every shared fixture's own expectations (written from the
providers' documentation, independent of either binding), through the Python package."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, fixture_cases
from toolgate import ToolGate, ToolGateError, TurnReport

DIALECTS = fixture_cases(FIXTURES / "dialects")
STREAMS = fixture_cases(FIXTURES / "streams")
TOOL_LISTS = fixture_cases(FIXTURES / "tool-lists")


def mask(v, messages):
    """Every string equal to a refusal message becomes "<message>" (as the fixtures write it)."""
    if isinstance(v, str):
        return "<message>" if v in messages else v
    if isinstance(v, list):
        return [mask(x, messages) for x in v]
    if isinstance(v, dict):
        return {k: mask(x, messages) for k, x in v.items()}
    return v


def check_report(r: TurnReport, want: dict) -> None:
    if "dialect" in want:
        assert r.dialect == want["dialect"]
    assert [c.call_id for c in r.calls] == [c["callId"] for c in want["calls"]]
    for got, exp in zip(r.calls, want["calls"]):
        assert got.tool == exp["tool"]
        assert got.outcome == exp["outcome"]
        if "reason" in exp:
            assert got.reason == exp["reason"]
        if "arguments" in exp:
            assert got.arguments == exp["arguments"]
        assert got.allowed == (got.outcome in ("passed", "repaired"))
    assert [a.call_id for a in r.allowed] == [c.call_id for c in r.calls if c.allowed]
    messages = {c.message for c in r.calls if c.message} | {t["message"] for t in r.turn_refusals}
    assert mask(r.turn_refusals, messages) == want.get("turnRefusals", [])
    if "payload" in want:
        assert r.payload == want["payload"]
    if "feedback" in want:
        assert mask(r.feedback, messages) == want["feedback"]
    if "providerExecuted" in want:
        assert r.provider_executed == want["providerExecuted"]


@pytest.fixture(scope="module")
def gate(dialect_tools) -> ToolGate:
    return ToolGate(dialect_tools)


@pytest.mark.parametrize("name, fx", DIALECTS, ids=[n for n, _ in DIALECTS])
def test_guard_fixture(gate, name, fx):
    payload = fx.get("payloadText", fx.get("payload"))
    pv = (fx.get("options") or {}).get("protocolVersion")
    if "error" in fx:
        with pytest.raises(ToolGateError) as e:
            gate.guard(payload, fx["dialect"], protocol_version=pv)
        assert e.value.code == fx["error"]["code"]
        assert fx["error"]["contains"] in e.value.message
        return
    check_report(gate.guard(payload, fx["dialect"], protocol_version=pv), fx["expect"])
    if "payloadText" not in fx:  # the same turn as JSON text answers the same
        text_report = gate.guard(json.dumps(payload), fx["dialect"], protocol_version=pv)
        check_report(text_report, fx["expect"])


def test_unrepaired_payload_is_the_callers_own_value(gate):
    turn = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": {"query": "x"}}]}
    r = gate.guard(turn, "anthropic")
    assert r.payload is turn
    assert gate.guard(json.dumps(turn), "anthropic").payload == turn


def test_a_repaired_payload_is_built_when_read_from_the_text_decided_on(gate):
    turn = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris", "days": "3"}},
            {"type": "tool_use", "id": "t2", "name": "search", "input": {"query": "x"}},
        ],
    }
    r = gate.guard(turn, "anthropic")
    assert [c.outcome for c in r.calls] == ["repaired", "passed"]
    # the host changes its value after the decision: the payload is still what was decided on
    turn["content"][1]["input"]["query"] = "changed afterwards"
    p = r.payload
    assert p is not turn and p is r.payload  # a fresh value, built once
    assert p["content"][0]["input"] == {"city": "Paris", "days": 3}
    assert p["content"][1]["input"] == {"query": "x"}
    assert turn["content"][0]["input"] == {"city": "Paris", "days": "3"}  # the caller's own value untouched
    # OpenAI: the repaired arguments written back as the very text the call runs with
    args = json.dumps({"city": "Paris", "days": "3"})
    completion = {"choices": [{"message": {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": args}}]}}]}
    r = gate.guard(json.dumps(completion), "openai")
    assert r.calls[0].outcome == "repaired"
    assert r.payload["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == r.calls[0].arguments_json
    assert json.loads(r.calls[0].arguments_json) == {"city": "Paris", "days": 3}
    # a payload set before it is read is the one read, and no patch is written over it later
    r = gate.guard(json.dumps(completion), "openai")
    r.payload = {"replaced": True}
    assert r.payload == {"replaced": True} and r.to_dict()["payload"] == {"replaced": True}


def test_guard_errors(gate):
    with pytest.raises(ToolGateError) as e:
        gate.guard("{}", "klingon")
    assert e.value.code == "E_DIALECT"
    with pytest.raises(ToolGateError) as e:
        gate.guard("{not json", "openai")
    assert e.value.code == "E_PAYLOAD" and "openai payload" in e.value.message
    with pytest.raises(ToolGateError) as e:
        gate.guard({"x": {1, 2}}, "openai")
    assert e.value.code == "E_PAYLOAD"
    with pytest.raises(ToolGateError) as e:
        gate.guard('{"a": "\ud800"}', "openai")
    assert e.value.code == "E_PAYLOAD" and "surrogate" in e.value.message


@pytest.mark.parametrize("name, fx", STREAMS, ids=[n for n, _ in STREAMS])
def test_stream_fixture(dialect_tools, name, fx):
    g = ToolGate({**dialect_tools, **(fx.get("config") or {})})
    stream = g.stream(fx["dialect"])
    err = fx.get("error")
    forwarded = []
    for i, ev in enumerate(fx["events"]):
        if err is not None and err["at"] == i + 1:  # 1-based, as the fixtures count events
            with pytest.raises(ToolGateError) as e:
                stream.push(ev)
            assert e.value.code == err["code"] and err["contains"] in e.value.message
            with pytest.raises(ToolGateError):  # a failed stream accepts nothing more
                stream.end()
            return
        completed = stream.push(ev)  # objects pushed as parsed values, strings as they are
        if "completes" in fx:
            assert [c.call_id for c in completed] == fx["completes"][i]
        forwarded.extend(stream.forward())
    if err is not None:
        with pytest.raises(ToolGateError) as e:
            stream.end()
        assert e.value.code == err["code"] and err["contains"] in e.value.message
        return
    report = stream.end()
    check_report(report, fx["expect"])
    if "forwarded" in fx["expect"]:
        messages = {c.message for c in report.calls if c.message} | {t["message"] for t in report.turn_refusals}
        assert mask(forwarded, messages) == fx["expect"]["forwarded"]
    with pytest.raises(ToolGateError) as e:
        stream.end()
    assert e.value.code == "E_PAYLOAD"


def test_stream_needs_a_stream_dialect(gate):
    with pytest.raises(ToolGateError) as e:
        gate.stream("mcp")
    assert e.value.code == "E_DIALECT"


@pytest.mark.parametrize("name, fx", TOOL_LISTS, ids=[n for n, _ in TOOL_LISTS])
def test_tool_list_fixture(gate, name, fx):
    if "error" in fx:
        with pytest.raises(ToolGateError) as e:
            gate.filter_tools(fx["tools"], fx["dialect"])
        assert e.value.code == fx["error"]["code"]
        # a prepared list is refused when prepared, with the same error
        with pytest.raises(ToolGateError) as p:
            gate.prepare_tools(fx["tools"], fx["dialect"])
        assert (p.value.code, str(p.value)) == (e.value.code, str(e.value))
        return
    before = json.dumps(fx["tools"])
    assert gate.filter_tools(fx["tools"], fx["dialect"]) == fx["expect"]
    assert json.loads(gate.filter_tools(json.dumps(fx["tools"]), fx["dialect"])) == fx["expect"]
    # prepared once (as values and as text): the same answers, found again the second time
    as_values = gate.prepare_tools(fx["tools"], fx["dialect"])
    as_text = gate.prepare_tools(before, fx["dialect"])
    for _ in range(2):
        assert as_values.filter() == fx["expect"]
        assert json.loads(as_text.filter()) == fx["expect"]
    # the caller's values are never edited
    assert json.dumps(fx["tools"]) == before


def _fn(name):
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


def test_a_json_list_keeps_the_callers_own_definitions_in_a_new_list(gate):
    ping, search = _fn("ping"), _fn("search")
    tools = [ping, _fn("rm"), search]
    out = gate.filter_tools(tools, "openai")
    assert out == [ping, search] and out[0] is ping and out[1] is search
    assert out is not tools and [t["function"]["name"] for t in tools] == ["ping", "rm", "search"]
    same = gate.filter_tools([ping], "openai")
    assert same == [ping] and same[0] is ping
    # a tuple stays a tuple; a request body is copied along the way, its other members kept
    assert gate.filter_tools((_fn("rm"), ping), "openai") == (ping,)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [_fn("rm"), ping]}
    cut = gate.filter_tools(body, "openai")
    assert cut == {"model": "m", "messages": body["messages"], "tools": [ping]}
    assert cut["messages"] is body["messages"] and cut["tools"][0] is ping and len(body["tools"]) == 2


def test_gemini_removals_by_position_keep_the_callers_declarations(gate):
    weather = {"name": "get_weather"}
    tools = [{"functionDeclarations": [{"name": "rm"}]}, {"googleSearch": {}, "functionDeclarations": [{"name": "nope"}, weather]}]
    out = gate.filter_tools(tools, "gemini")
    assert out == [{"functionDeclarations": [weather]}] and out[0]["functionDeclarations"][0] is weather


def test_values_json_shows_differently_are_answered_from_the_text_decided_on(gate):
    import collections

    # a container that is not plain data where something goes (a dict subclass, keys JSON
    # rewrites): the core's filtered text, parsed, never positions cut from something else
    body = collections.OrderedDict(tools=[_fn("rm"), _fn("ping")])
    assert gate.filter_tools(body, "openai") == {"tools": [_fn("ping")]}

    # a mapping read twice differently: positions decided on the first reading (what json
    # serialized) are never cut from a second
    class Shifty(dict):
        reads = 0

        def items(self):
            Shifty.reads += 1
            return [("tools", [_fn("rm"), _fn("ping")] if Shifty.reads == 1 else [_fn("ping"), _fn("rm")])]

    out = gate.filter_tools(Shifty(tools=[]), "openai")
    assert [t["function"]["name"] for t in out["tools"]] == ["ping"]
    # an AI SDK record with a key that is not a string: JSON names it "1", which it does not hold
    record = {1: {"description": "undeclared"}, "search": {"description": "Search"}}
    assert gate.filter_tools(record, "ai-sdk") == {"search": {"description": "Search"}}
    # a key JSON rewrites, off the way to any removal, is the caller's own
    kept = gate.filter_tools({1: "x", "tools": [_fn("rm"), _fn("ping")]}, "openai")
    assert kept == {1: "x", "tools": [_fn("ping")]}


def test_live_tool_objects_are_kept_identical(gate):
    class Tool:
        def __init__(self, name):
            self.name = name

    tools = [Tool("search"), Tool("not_declared"), Tool("ping")]
    kept = gate.filter_tools(tools, "pydantic-ai")
    assert kept == [tools[0], tools[2]] and kept[0] is tools[0]


@pytest.mark.parametrize("dialect", ["ai-sdk", "ai-sdk-ui"])
def test_an_ai_sdk_tool_record_is_filtered_by_name_keeping_the_callers_values(gate, dialect):
    class LiveTool:  # an AI SDK tool: functions and schemas, no JSON form
        def execute(self):
            pass

    live = {"search": LiveTool(), "not_declared": LiveTool(), "ping": LiveTool()}
    # before: ai-sdk-ui raised E_PAYLOAD (the values are not JSON) where Node filters by name
    kept = gate.filter_tools(live, dialect)
    assert list(kept) == ["search", "ping"] and kept["search"] is live["search"]
    plain = {"search": {"description": "d"}, "not_declared": {"description": "d"}}
    kept = gate.filter_tools(plain, dialect)
    assert kept == {"search": {"description": "d"}} and kept["search"] is plain["search"]
