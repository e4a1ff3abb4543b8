"""The core API through the real extension: check (text and dict arguments), the verdict's
fields, hostile input (never raises, never crashes), errors and their codes, threads."""

from __future__ import annotations

import json
import math
import threading

import pytest

from toolgate import ToolGate, ToolGateError, Verdict

SEARCH = {
    "tools": [
        {
            "name": "search",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer", "default": 10},
                    "status": {"enum": ["active", "archived"]},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        },
        {"name": "delete_file", "destructive": True, "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
    ]
}


@pytest.fixture(scope="module")
def gate() -> ToolGate:
    return ToolGate(SEARCH)


def test_passed_keeps_the_callers_own_text(gate):
    text = '{"query": "rust",  "limit": 5}'
    v = gate.check("search", text)
    assert isinstance(v, Verdict)
    assert (v.outcome, v.allowed, v.reason, v.message) == ("passed", True, None, None)
    assert v.arguments == {"query": "rust", "limit": 5}
    assert v.arguments_json is text
    assert v.flags == []


def test_repaired_with_one_flag_per_change(gate):
    v = gate.check("search", '{"query":"q","limit":"20","status":"ACTIVE","tags":"rust","extra":1}')
    assert v.outcome == "repaired" and v.allowed
    assert v.arguments == {"query": "q", "limit": 20, "status": "active", "tags": ["rust"]}
    assert json.loads(v.arguments_json) == v.arguments
    codes = sorted((f.code, f.path) for f in v.flags)
    assert codes == [("EnumCaseNormalized", "/status"), ("PrunedUnknownProperty", "/extra"), ("StringToInteger", "/limit"), ("WrappedScalarInArray", "/tags")]
    limit = next(f for f in v.flags if f.code == "StringToInteger")
    assert (limit.from_, limit.to) == ("20", 20)
    assert limit.to_dict() == {"code": "StringToInteger", "path": "/limit", "from": "20", "to": 20}
    pruned = next(f for f in v.flags if f.code == "PrunedUnknownProperty")
    assert "to" not in pruned.to_dict()


def test_default_injected_when_absent(gate):
    v = gate.check("search", {"query": "x"})
    assert v.outcome == "repaired"
    assert v.arguments == {"query": "x", "limit": 10}
    assert [f.to_dict() for f in v.flags] == [{"code": "InjectedDefaultValue", "path": "/limit", "to": 10}]


def test_dict_arguments_and_none(gate):
    assert gate.check("search", {"query": "x", "limit": 1}).outcome == "passed"
    v = gate.check("search")
    assert (v.outcome, v.reason) == ("rejected", "invalid")
    assert "query" in v.message


def test_refusals_carry_a_model_readable_message(gate):
    v = gate.check("serch", '{"query":"x"}')
    assert (v.outcome, v.reason, v.allowed, v.arguments, v.arguments_json) == ("rejected", "unknown_tool", False, None, None)
    assert "search" in v.message  # did you mean
    v = gate.check("delete_file", '{"path": 3}')
    assert (v.outcome, v.reason) == ("rejected", "invalid")  # destructive: strict, never repaired


@pytest.mark.parametrize(
    "args",
    [
        '{"query":"a","query":"b"}',  # duplicate key
        '{"query":"a","__proto__":{}}',
        "{not json",
        "[1,2]",
        '{"query":' + "[" * 200 + "]" * 200 + "}",
        '{"query":"x","limit":1e999}',
        "x" * (2 << 20),
    ],
)
def test_hostile_text_is_bad_arguments(gate, args):
    v = gate.check("search", args)
    assert (v.outcome, v.reason, v.allowed) == ("rejected", "bad_arguments", False)


@pytest.mark.parametrize(
    "args, detail",
    [({"query": {1, 2}}, "set"), ({"query": math.nan}, "Infinity or NaN"), ({"query": "\ud800"}, "hex escape"), (b"\xff\xfe", "UTF-8"), ("{\"query\": \"\ud800\"}", "surrogate")],
)
def test_values_with_no_json_text_are_refused_not_raised(gate, args, detail):
    v = gate.check("search", args)
    assert (v.outcome, v.reason) == ("rejected", "bad_arguments")
    assert detail.lower() in v.message.lower()


# What the Node package answers for the same values (its jsonText writes a lone surrogate as its
# \u escape, so the core's parser words it; NaN and ±Infinity are named by jsonText itself; the
# binding gets a tool name's lone surrogate as one U+FFFD).
NODE_NON_FINITE = 'Invalid arguments for tool `search`: they could not be read as JSON (a number is Infinity or NaN, which JSON cannot hold). Send the arguments as one JSON object, e.g. {"name": "value"}.'


def node_bad_json(detail: str) -> str:
    return f"Invalid arguments for tool `search`: the arguments are not valid JSON ({detail}). Send the arguments as one complete JSON object."


NODE_UNKNOWN = "Unknown tool `sea\ufffdrch`. Did you mean `search`? Call one of the available tools: `search`, `delete_file`."


@pytest.mark.parametrize(
    "tool, args, message",
    [
        ("search", {"query": "x", "limit": math.nan}, NODE_NON_FINITE),
        ("search", {"query": "x", "tags": [math.inf]}, NODE_NON_FINITE),
        ("search", {"query": "x", "tags": [-math.inf]}, NODE_NON_FINITE),
        ("search", {"query": "\ud800"}, node_bad_json("unexpected end of hex escape at line 1, column 17")),
        ("search", {"query": "x", "\udc00": 1}, node_bad_json("lone leading surrogate in hex escape at line 1, column 20")),
        ("search", {"query": "a\udfffb"}, node_bad_json("lone leading surrogate in hex escape at line 1, column 17")),
        ("sea\ud800rch", '{"query":"x"}', NODE_UNKNOWN),
        ("sea\ud800rch", {"query": math.nan}, NODE_UNKNOWN),
    ],
)
def test_values_the_host_parsed_are_refused_in_nodes_words(gate, tool, args, message):
    v = gate.check(tool, args)
    assert (v.outcome, v.message) == ("rejected", message)
    assert v.tool == tool  # the verdict names the tool as the host gave it


def test_surrogates_side_by_side_are_refused_not_joined(gate):
    # Python holds two code points; escaped, JSON would read them back as one other character
    v = gate.check("search", {"query": "\ud83d\ude00"})
    assert (v.reason, "lone UTF-16 surrogate" in v.message) == ("bad_arguments", True)
    assert gate.check("search", {"query": "\U0001f600"}).arguments["query"] == "\U0001f600"


def test_a_mapping_that_fails_while_it_is_read_is_a_refusal(gate):
    class Lying(dict):
        def items(self):
            raise KeyError("items boom")

    v = gate.check("search", Lying(query="x"))
    assert (v.outcome, v.reason) == ("rejected", "bad_arguments")
    assert "KeyError" in v.message


def test_a_cycle_is_refused(gate):
    cyc: dict = {"query": "x"}
    cyc["self"] = cyc
    assert gate.check("search", cyc).reason == "bad_arguments"


def test_unknown_tool_first_even_for_unreadable_args(gate):
    assert gate.check("nope", {"a": {1}}).reason == "unknown_tool"
    assert gate.check("no\ud800pe", "{}").reason == "unknown_tool"


def test_verdict_to_dict_uses_node_names(gate):
    d = gate.check("search", '{"query":"q","limit":"2"}').to_dict()
    assert d == {"outcome": "repaired", "allowed": True, "tool": "search", "arguments": {"query": "q", "limit": 2}, "argumentsJson": '{"query":"q","limit":2}', "flags": [{"code": "StringToInteger", "path": "/limit", "from": "2", "to": 2}]}


@pytest.mark.parametrize(
    "config, code, contains",
    [
        ({"tools": [{"name": "t"}], "polcy": {}}, "E_CONFIG", "polcy"),
        ({"tools": [{"name": "t", "inputSchema": {"type": "nope"}}]}, "E_CONFIG", "t"),
        ("{oops", "E_CONFIG", ""),
        (42, "E_CONFIG", "expected a dict"),
    ],
)
def test_bad_configs_raise_e_config(config, code, contains):
    with pytest.raises(ToolGateError) as e:
        ToolGate(config)
    assert e.value.code == code
    assert contains in str(e.value)


def test_context_the_host_got_wrong_is_e_config(gate):
    with pytest.raises(ToolGateError) as e:
        gate.check("search", "{}", {"role": "admin"})
    assert e.value.code == "E_CONFIG" and "role" in e.value.message


def test_error_is_picklable_with_its_code():
    import pickle

    e = pickle.loads(pickle.dumps(ToolGateError("E_PAYLOAD", "x")))
    assert (e.code, e.message) == ("E_PAYLOAD", "x")


def test_one_gate_shared_by_threads_gives_the_same_answers(gate):
    expected = gate.check("search", '{"query":"q","limit":"7"}').to_dict()
    bad: list = []

    def work():
        for i in range(2000):
            v = gate.check("search", '{"query":"q","limit":"7"}')
            if v.to_dict() != expected:
                bad.append(v)
            gate.check("search", '{"query":%d}' % i)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bad == []


def test_the_gil_is_released_while_deciding():
    """While the core decides on a large argument text, another Python thread runs. The switch
    interval is raised so that, were the GIL held, the other thread could not run at all."""
    import sys
    import time

    big = ToolGate({"tools": [{"name": "t", "inputSchema": {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}}}, "required": ["missing"]}}], "limits": {"maxArgumentBytes": 64 << 20}})
    text = json.dumps({"xs": list(range(400_000))})
    ticks = [0]
    done = threading.Event()
    started = threading.Event()

    def spin():
        started.set()
        while not done.is_set():
            ticks[0] += 1
            time.sleep(0)

    old = sys.getswitchinterval()
    sys.setswitchinterval(30)
    t = threading.Thread(target=spin)
    try:
        t.start()
        started.wait()
        before = ticks[0]
        v = big.check("t", text)
        during = ticks[0] - before
    finally:
        done.set()
        t.join()
        sys.setswitchinterval(old)
    assert (v.outcome, v.reason) == ("rejected", "invalid")
    assert during > 50, f"the other thread ran {during} times while the core decided"
