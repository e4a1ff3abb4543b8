"""``gate.prepare_tools``: a tool list read once and filtered per caller through the real native
binding — every answer what ``filter_tools`` answers for the list as it was prepared, for
callers that alternate, and never what the list's values became afterwards."""

from __future__ import annotations

import json

import pytest

from toolgate import PreparedTools, ToolGate, ToolGateError

NAMES = ["read_file", "write_file", "search", "delete_user", "googleSearch"]
CALLERS = [{}, {"roles": ["reader"]}, {"roles": ["writer"]}, {"roles": ["admin"]}, {"subject": "mallory", "roles": ["admin"]}, {"roles": ["reader", "writer"]}]


@pytest.fixture(scope="module")
def gate() -> ToolGate:
    return ToolGate(
        {
            "version": 1,
            "tools": [{"name": n} for n in NAMES],
            "policy": {
                "rules": [
                    {"id": "everyone", "effect": "allow", "tools": ["search"]},
                    {"id": "readers", "effect": "allow", "roles": ["reader"], "tools": ["read_file", "googleSearch"]},
                    {"id": "writers", "effect": "allow", "roles": ["writer"], "tools": ["read_file", "write_file"]},
                    {"id": "admins", "effect": "allow", "roles": ["admin"], "tools": ["*"]},
                    {"id": "banned", "effect": "deny", "subjects": ["mallory"], "tools": ["*"]},
                ]
            },
        }
    )


def _fn(name):
    return {"type": "function", "function": {"name": name, "description": f"{name} tool", "parameters": {"type": "object"}}}


def _list():
    return [_fn(n) for n in NAMES + ["undeclared"]]


def test_every_caller_in_any_order_gets_what_filter_tools_answers(gate):
    values = _list()
    text = json.dumps(values)
    as_values = gate.prepare_tools(values, "openai")
    as_text = gate.prepare_tools(text, "openai")
    assert isinstance(as_values, PreparedTools)
    seen = set()
    for rnd in range(3):
        for ctx in reversed(CALLERS) if rnd == 1 else CALLERS:
            want = gate.filter_tools(text, "openai", **ctx)
            seen.add(want)
            assert as_text.filter(**ctx) == want
            assert as_values.filter(**ctx) == json.loads(want)
            assert as_text.filter(caller=gate.caller(ctx)) == want
    assert len(seen) >= 5


def test_later_changes_to_the_values_are_not_seen(gate):
    values = _list()
    prepared = gate.prepare_tools(values, "openai")
    before = prepared.filter(roles=["reader"])
    values[0]["function"]["name"] = "delete_user"
    values.append(_fn("delete_user"))
    after = prepared.filter(roles=["reader"])
    assert after == before
    assert [t["function"]["name"] for t in after] == ["read_file", "search", "googleSearch"]


def test_each_answer_has_its_own_outer_list(gate):
    prepared = gate.prepare_tools(_list(), "openai")
    a = prepared.filter(roles=["admin"])
    b = prepared.filter(roles=["admin"])
    assert a is not b
    a.append(_fn("undeclared"))
    assert len(b) == 5


def test_live_tools_are_kept_as_named_when_prepared(gate):
    class Tool:
        def __init__(self, name):
            self.name = name

    tools = [Tool("read_file"), Tool("delete_user"), Tool("search")]
    prepared = gate.prepare_tools(tools, "pydantic-ai")
    tools[1].name = "read_file"
    tools.append(Tool("write_file"))
    out = prepared.filter(roles=["writer"])
    assert [t is tools[0] or t is tools[2] for t in out] == [True, True]
    record = {"read_file": object(), "delete_user": object()}
    prepared = gate.prepare_tools(record, "ai-sdk")
    record["write_file"] = object()
    assert list(prepared.filter(roles=["writer"])) == ["read_file"]


def test_refuses_what_filter_tools_refuses_and_an_unknown_context_key(gate):
    with pytest.raises(ToolGateError) as e:
        gate.prepare_tools('[{"type":"function","function":{"name":"a","name":"search"}}]', "openai")
    assert e.value.code == "E_PAYLOAD"
    with pytest.raises(ToolGateError) as e:
        gate.prepare_tools([], None)  # type: ignore[arg-type]
    assert e.value.code == "E_DIALECT"
    prepared = gate.prepare_tools(_list(), "openai")
    with pytest.raises(ToolGateError) as e:
        prepared.filter(role="admin")
    assert e.value.code == "E_CONFIG" and "role" in str(e.value)
