"""``filter_tools`` remembers the tool lists it read (``toolgate._tool_list_memo``): a list seen
again by the same gate is filtered from the core's prepared list. Through the real native
binding, every answer must equal what a gate that never saw the list answers (a fresh gate of
the same config: its first sighting is read as it comes), for callers that alternate, for lists
given as text and as values — and a list read under one gate's limits never serves another."""

from __future__ import annotations

import json
import threading

import pytest

from toolgate import ToolGate, ToolGateError
from toolgate._tool_list_memo import MAX_REMEMBERED_TOOL_LIST, MIN_REMEMBERED_TOOL_LIST, REMEMBERED_TOOL_LISTS, tool_list_memo

CALLERS = [{"roles": ["admin"]}, {}, {"subject": "mallory", "roles": ["admin"]}, {"roles": ["admin", "x"]}, {}]


def _config(admins, **extra):
    return {
        "version": 1,
        "tools": [{"name": "search"}, {"name": "wipe"}, {"name": "read_file"}],
        "policy": {
            "rules": [
                {"id": "admins", "effect": "allow", "roles": ["admin"], "tools": admins},
                {"id": "all", "effect": "allow", "tools": ["search"]},
                {"id": "banned", "effect": "deny", "subjects": ["mallory"], "tools": ["*"]},
            ]
        },
        **extra,
    }


def _fn(name, **extra):
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}, **extra}}


# long enough to be remembered (MIN_REMEMBERED_TOOL_LIST), as a real tool list is
ABOUT = "d" * MIN_REMEMBERED_TOOL_LIST


def _list(i):
    return [_fn("search", description=ABOUT), _fn("wipe"), _fn("read_file"), _fn(f"t{i}")]


def _names(tools):
    return [t["function"]["name"] for t in tools]


def test_answers_what_a_gate_that_never_saw_the_list_answers():
    gate = ToolGate(_config(["wipe"]))
    prepared = [gate.caller(c) for c in CALLERS]
    # more lists than are remembered, each given three times: noted, prepared, forgotten, again
    for _ in range(3):
        for i in range(REMEMBERED_TOOL_LISTS + 4):
            values = _list(i)
            text = json.dumps(values)
            for k, ctx in enumerate(CALLERS):
                want = ToolGate(_config(["wipe"])).filter_tools(text, "openai", **ctx)
                assert gate.filter_tools(text, "openai", **ctx) == want
                assert gate.filter_tools(text, "openai", caller=prepared[k]) == want
                assert gate.filter_tools(values, "openai", **ctx) == json.loads(want)
                assert gate.filter_tools(text.encode(), "openai", **ctx) == json.loads(want)
    assert tool_list_memo.size <= REMEMBERED_TOOL_LISTS


def test_each_gate_answers_by_its_own_policy_and_limits():
    a = ToolGate(_config(["wipe"]))
    b = ToolGate(_config(["wipe", "read_file"]))
    text = json.dumps(_list(99))
    for _ in range(4):
        assert _names(json.loads(a.filter_tools(text, "openai", roles=["admin"]))) == ["search", "wipe"]
        assert _names(json.loads(b.filter_tools(text, "openai", roles=["admin"]))) == ["search", "wipe", "read_file"]
    # a list read under a lax gate's limits never serves a stricter gate: it refuses the list
    deep = {"type": "string"}
    for _ in range(10):
        deep = {"type": "object", "properties": {"a": deep}}
    values = [_fn("search", description=ABOUT, parameters=deep)]
    strict = ToolGate(_config(["wipe"], limits={"maxDepth": 4}))
    # the lax gate first reads and prepares the list, then the strict one is given it
    for _ in range(3):
        assert _names(a.filter_tools(values, "openai")) == ["search"]
    for _ in range(3):
        with pytest.raises(ToolGateError) as err:
            strict.filter_tools(values, "openai")
        assert err.value.code == "E_PAYLOAD"
        assert _names(a.filter_tools(values, "openai")) == ["search"]


def test_another_dialect_and_a_broken_list_are_read_as_they_come():
    gate = ToolGate(_config(["wipe"]))
    text = json.dumps(_list(7))
    for _ in range(3):
        assert _names(json.loads(gate.filter_tools(text, "openai"))) == ["search"]
    for _ in range(3):
        with pytest.raises(ToolGateError) as err:
            gate.filter_tools(text, "anthropic")
        assert err.value.code == "E_PAYLOAD"
    broken = '[{"type":"function","function":{"name":"search"},"type":"x"}]'
    messages = set()
    for _ in range(3):
        with pytest.raises(ToolGateError) as err:
            gate.filter_tools(broken, "openai")
        messages.add(str(err.value))
    assert len(messages) == 1 and "twice" in messages.pop()


def test_values_changed_between_filters_are_seen_and_the_callers_own_kept():
    gate = ToolGate(_config(["wipe"]))
    values = _list(5)
    for _ in range(3):
        kept = gate.filter_tools(values, "openai", roles=["admin"])
        assert _names(kept) == ["search", "wipe"]
        assert kept[0] is values[0]
    values[1]["function"]["name"] = "read_file"
    assert _names(gate.filter_tools(values, "openai", roles=["admin"])) == ["search"]


def test_stays_within_its_bounds():
    gate = ToolGate(_config(["wipe"]))
    long = [_fn("search", description="x" * MAX_REMEMBERED_TOOL_LIST), _fn("wipe")]
    before = tool_list_memo.size
    for _ in range(3):
        assert _names(gate.filter_tools(long, "openai")) == ["search"]
    # one-tool lists, one per tool: never pushing out a long list
    for i in range(3 * REMEMBERED_TOOL_LISTS):
        assert gate.filter_tools([_fn(f"tiny{i}")], "openai") == []
    assert tool_list_memo.size == before
    for i in range(3 * REMEMBERED_TOOL_LISTS):
        gate.filter_tools(json.dumps(_list(1000 + i)), "openai")
    assert tool_list_memo.size == REMEMBERED_TOOL_LISTS


def test_threads_filtering_at_once_get_their_own_answers():
    gate = ToolGate(_config(["wipe"]))
    texts = [json.dumps(_list(2000 + i)) for i in range(4)]
    want = {(t, i): ToolGate(_config(["wipe"])).filter_tools(t, "openai", **CALLERS[i]) for t in texts for i in range(len(CALLERS))}
    wrong = []

    def run(seed):
        for r in range(200):
            t = texts[(seed + r) % len(texts)]
            i = (seed * 7 + r) % len(CALLERS)
            if gate.filter_tools(t, "openai", **CALLERS[i]) != want[(t, i)]:
                wrong.append((t, i))

    threads = [threading.Thread(target=run, args=(s,)) for s in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert wrong == []
