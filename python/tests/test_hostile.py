"""Hostile input never crashes the interpreter and never raises from `check`: model output,
payloads and stream events that are broken, huge, deep or random, from one thread or many."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from conftest import ROOT
from toolgate import ToolGate, ToolGateError, generate_receipt_key, verify_receipt


@pytest.fixture(scope="module")
def gate(dialect_tools) -> ToolGate:
    return ToolGate(dialect_tools)


def test_deep_and_huge_arguments_are_refusals(gate):
    deep: dict = {}
    cur = deep
    for _ in range(5000):
        cur["a"] = {}
        cur = cur["a"]
    assert gate.check("search", deep).reason == "bad_arguments"  # no JSON text: Python's own recursion limit
    assert gate.check("search", '{"q":' + "[" * 100_000 + "]" * 100_000 + "}").reason == "bad_arguments"
    assert gate.check("search", '{"q": "' + "x" * (8 << 20) + '"}').reason == "bad_arguments"


def test_deep_and_huge_payloads_are_e_payload(gate):
    for payload in ("[" * 100_000 + "]" * 100_000, '{"a": "' + "x" * (64 << 20) + '"}'):
        with pytest.raises(ToolGateError) as e:
            gate.guard(payload, "openai")
        assert e.value.code == "E_PAYLOAD"


def test_odd_host_types_do_not_crash(gate):
    class S(str):
        pass

    assert gate.check(S("search"), S('{"query": "x"}')).tool == "search"
    assert gate.check(123, "{}").reason == "unknown_tool"  # type: ignore[arg-type]
    with pytest.raises(ToolGateError):
        gate.guard(object(), "openai")


FUZZ = r"""
import json, random, sys
from toolgate import ToolGate, ToolGateError
gate = ToolGate(json.load(open(sys.argv[1])))
rng = random.Random(int(sys.argv[2]))
pieces = ['{', '}', '[', ']', '"', ':', ',', '"arguments"', '"tool_calls"', '"function"', '"name"', '"search"', '"id"', '"input"',
          '"type"', '"tool_use"', '"choices"', '"message"', '1e999', '-0', '\\u0000', '\\ud800', 'null', 'true', '"__proto__"', ' ', 'data: ']
dialects = ["openai", "openai-responses", "anthropic", "langchain", "pydantic-ai", "mcp", "ai-sdk", "gemini", "auto"]
for i in range(3000):
    text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
    v = gate.check(rng.choice(["search", "get_weather", "delete_file", "x"]), text)
    assert v.outcome in ("passed", "repaired", "rejected", "denied", "confirm")
    try:
        gate.guard(text, rng.choice(dialects))
    except ToolGateError:
        pass
    d = rng.choice(["openai", "openai-responses", "anthropic", "ai-sdk", "gemini"])
    s = gate.stream(d)
    try:
        for _ in range(3):
            s.push(text)
            s.forward()
        s.end()
    except ToolGateError:
        pass
print("ok", i + 1)
"""


@pytest.mark.parametrize("seed", [1, 2])
def test_random_input_in_a_child_process_never_crashes_it(tmp_path, seed):
    done = subprocess.run([sys.executable, "-c", FUZZ, str(ROOT / "__test__" / "fixtures" / "dialects" / "tools.json"), str(seed)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok 3000"


def test_one_stream_pushed_from_many_threads(gate):
    stream = gate.stream("anthropic")
    events = [json.dumps({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "model": "x", "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 0}}})]
    errors: list = []
    stream.push(events[0])

    def worker(n):
        for i in range(200):
            try:
                stream.push(json.dumps({"type": "ping"}))
                stream.forward()
            except ToolGateError as e:
                errors.append(e.code)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(errors) <= {"E_PAYLOAD"}
    with pytest.raises(ToolGateError) as e:
        stream.end()  # never finished: cut off
    assert e.value.code == "E_PAYLOAD"


def test_a_str_subclass_is_decided_by_its_value_not_its_own_str():
    gate = ToolGate({"tools": [{"name": "search"}, {"name": "delete_all"}], "policy": {"rules": [{"effect": "allow", "tools": ["search"]}]}})

    class Lying(str):
        def __str__(self) -> str:
            return "search"

    # before: decided as `search` (passed) while the host looked up and ran `delete_all`
    v = gate.check(Lying("delete_all"), "{}")
    assert (v.outcome, v.reason, v.tool) == ("denied", "no_rule", "delete_all")


def test_an_integer_past_64_bits_runs_as_the_double_the_gate_checked():
    gate = ToolGate({"tools": [{"name": "pay", "inputSchema": {"type": "object", "properties": {"amount": {"type": "number", "maximum": 1e20}}}}]})
    text = '{"amount": 100000000000000000001}'
    v = gate.check("pay", text)
    # before: arguments_json was the model's own text, which json.loads reads as 10**20 + 1
    assert v.outcome == "passed" and v.arguments_json != text
    assert json.loads(v.arguments_json)["amount"] <= 1e20 and v.arguments["amount"] <= 1e20
    turn = {"choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "pay", "arguments": text}}]}}]}
    r = gate.guard(turn, "openai")
    assert [c["amount"] <= 1e20 for c in (a.arguments for a in r.allowed)] == [True]


def test_nothing_a_failed_stream_event_queued_is_forwarded():
    gate = ToolGate({"tools": [{"name": "delete_all"}]})
    s = gate.stream("openai")
    head = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
    s.push("data: " + head + '"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"delete_all","arguments":"{}"}}]},"finish_reason":null}]}')
    s.forward()
    with pytest.raises(ToolGateError):
        # the finish chunk completes the call, then its repeated key fails the event
        s.push("data: " + head + '"id":"again","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}')
    assert s.forward() == []  # before: the completed delete_all call, in no answer the host got


class _LyingMapping(dict):
    """A host mapping whose items() raises (json's encoder reads every dict through items())."""

    def items(self):  # type: ignore[override]
        raise KeyError("items boom")


def test_a_mapping_that_fails_while_it_is_read_is_e_payload(gate):
    # before: the KeyError itself came out of guard, filter_tools and push
    for run in (
        lambda: gate.guard(_LyingMapping(a=1), "anthropic"),
        lambda: gate.filter_tools(_LyingMapping(a=1), "openai"),
        lambda: gate.stream("anthropic").push(_LyingMapping(a=1)),
    ):
        with pytest.raises(ToolGateError) as e:
            run()
        assert e.value.code == "E_PAYLOAD" and "KeyError" in e.value.message
    assert gate.check("search", _LyingMapping(query="x")).reason == "bad_arguments"


def test_a_context_nested_too_deep_or_unreadable_is_e_config(gate):
    deep: list = []
    cur = deep
    for _ in range(100_000):
        cur.append([])
        cur = cur[0]
    # before: RecursionError
    with pytest.raises(ToolGateError) as e:
        gate.check("search", "{}", {"identity": {"a": deep}})
    assert e.value.code == "E_CONFIG" and "nested too deeply" in e.value.message
    with pytest.raises(ToolGateError) as e:
        gate.guard("{}", "openai", identity={"a": deep})
    assert e.value.code == "E_CONFIG"
    with pytest.raises(ToolGateError) as e:
        gate.check("search", "{}", _LyingMapping(subject="ana"))
    assert e.value.code == "E_CONFIG"


def test_a_dialect_with_a_lone_surrogate_is_e_dialect_named_as_node_names_it(gate):
    # before: UnicodeEncodeError on the way into the binding
    for run in (lambda: gate.guard("{}", "open\ud800ai"), lambda: gate.filter_tools("[]", "open\ud800ai"), lambda: gate.stream("open\ud800ai")):
        with pytest.raises(ToolGateError) as e:
            run()
        assert e.value.code == "E_DIALECT" and "open\ufffdai" in e.value.message


def test_receipt_checks_with_lone_surrogates_are_e_receipt(monkeypatch):
    key = generate_receipt_key()
    monkeypatch.setenv("TOOLGATE_TEST_HOSTILE_KEY", key["privateKey"])
    g = ToolGate({"tools": [{"name": "t"}], "receipts": {"privateKeyEnv": "TOOLGATE_TEST_HOSTILE_KEY"}})
    receipt = g.check("t", '{"q": "x"}').receipt
    assert verify_receipt(receipt, g.public_key, tool="t", arguments={"q": "x"})["tool"] == "t"
    # before: UnicodeEncodeError for each of these
    for kw in ({"arguments": {"q": "\ud800"}}, {"tool": "t\udc00"}, {"sub": "\ud800"}):
        with pytest.raises(ToolGateError) as e:
            verify_receipt(receipt, g.public_key, **kw)
        assert e.value.code == "E_RECEIPT" and e.value.message.startswith("expect: ")
    for r, k in ((receipt + "\ud800", g.public_key), (receipt, g.public_key[:-1] + "\ud800")):
        with pytest.raises(ToolGateError) as e:
            verify_receipt(r, k)
        assert e.value.code == "E_RECEIPT"


def test_mark_session_with_a_lone_surrogate_is_not_a_unicode_error():
    g = ToolGate({"tools": [{"name": "t"}], "labels": ["web"]})
    g.mark_session("s\ud800", "web")  # before: UnicodeEncodeError
    with pytest.raises(ToolGateError) as e:
        g.mark_session("s", "w\ud800")
    assert e.value.code == "E_CONFIG" and "w\ufffd" in e.value.message
