"""toolgate.langchain against the real pinned langchain-core and langgraph: a ToolNode (alone and
inside a StateGraph with a checkpointer) whose tools record what they received."""

from __future__ import annotations

import asyncio
import threading

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command

from toolgate import ToolGate
from toolgate.langchain import ToolGateWrapper, approve, decline, filter_tools, guarded_tool_node

CONFIG = {
    "tools": [
        {"name": "search", "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]}},
        {"name": "transfer", "writes": True, "inputSchema": {"type": "object", "properties": {"amount": {"type": "number"}, "to": {"type": "string"}}, "required": ["amount", "to"]}},
    ],
    "policy": {"rules": [{"effect": "allow", "tools": ["search"]}, {"effect": "allow", "roles": ["finance"], "tools": ["transfer"]}]},
}


@pytest.fixture()
def kit():
    ran = []

    @tool
    def search(query: str, limit: int = 10) -> str:
        """Search."""
        ran.append(("search", query, limit))
        return f"{limit} hits for {query}"

    @tool
    def transfer(amount: float, to: str) -> str:
        """Send money."""
        ran.append(("transfer", amount, to))
        return "sent"

    @tool
    def shell(cmd: str) -> str:
        """Run a command (registered, never declared to the gate)."""
        ran.append(("shell", cmd))
        return "ran"

    return [search, transfer, shell], ran


def graph(tools, context, saver=True, node=None):
    """A one-node graph: the guarded ToolNode (a checkpointer for interrupts)."""
    g = StateGraph(MessagesState)
    g.add_node("tools", node or guarded_tool_node(tools, ToolGate(CONFIG), context=context))
    g.add_edge(START, "tools")
    return g.compile(checkpointer=InMemorySaver() if saver else None)


def ai(*calls):
    return {"messages": [AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": i, "type": "tool_call"} for n, a, i in calls])]}


def test_repaired_runs_refused_becomes_an_error_tool_message(kit):
    tools, ran = kit
    out = graph(tools, {"subject": "ana"}, saver=False).invoke(ai(("search", {"query": "q", "limit": "5"}, "c1"), ("shell", {"cmd": "rm -rf /"}, "c2"), ("transfer", {"amount": 1, "to": "x"}, "c3")))
    msgs = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert ran == [("search", "q", 5)]
    assert (msgs["c1"].status, msgs["c1"].content) == ("success", "5 hits for q")
    assert msgs["c2"].status == "error" and "Unknown tool `shell`" in msgs["c2"].content
    assert msgs["c3"].status == "error" and "transfer" in msgs["c3"].content  # ana has no finance role
    assert len(msgs) == 3


def test_async_path(kit):
    tools, ran = kit
    out = asyncio.run(graph(tools, lambda req: {"subject": "ana"}, saver=False).ainvoke(ai(("search", {"query": "q", "limit": "7"}, "c1"), ("search", {"query": 3}, "c2"))))
    assert ran == [("search", "q", 7), ("search", "3", 10)]
    assert [m.status for m in out["messages"][1:]] == ["success", "success"]


@pytest.mark.parametrize("answer, runs", [(approve, True), (decline, False)])
def test_writes_interrupt_for_the_user_then_confirm(kit, answer, runs):
    tools, ran = kit
    app = graph(tools, {"subject": "fin", "roles": ["finance"]})
    cfg = {"configurable": {"thread_id": f"t-{runs}"}}
    first = app.invoke(ai(("transfer", {"amount": "250", "to": "bob"}, "w1")), cfg)
    assert ran == []
    question = first["__interrupt__"][0]
    asked = question.value["toolgate"]
    assert (asked["tool"], asked["callId"]) == ("transfer", "w1") and "250" in asked["summary"]
    assert len(asked["digest"]) == 64 and len(asked["question"]) == 32 and "token" not in str(asked)
    done = app.invoke(Command(resume={question.id: answer(question)}), cfg)
    last = done["messages"][-1]
    if runs:
        assert ran == [("transfer", 250, "bob")] and last.status == "success"
    else:
        assert ran == [] and last.status == "error" and "declined" in last.content


def test_filter_tools_keeps_the_callers_objects(kit):
    tools, _ = kit
    gate = ToolGate(CONFIG)
    assert filter_tools(tools, gate, {"subject": "ana"}) == [tools[0]]
    assert filter_tools(tools, gate, {"subject": "f", "roles": ["finance"]}) == tools[:2]


# Confirmations on re-runs. LangGraph re-runs the whole ToolNode on every resume and hands resume
# values out by the order in which calls reach interrupt(); each call must still be settled once,
# and an answer must count only for the call it was given for.

FIN = {"subject": "fin", "roles": ["finance"]}


def tool_messages(out):
    return {m.tool_call_id: (m.status, m.content) for m in out["messages"] if isinstance(m, ToolMessage)}


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_two_writes_calls_in_one_turn_each_run_once_on_their_own_approval(kit, mode):
    tools, ran = kit
    app = graph(tools, FIN)
    cfg = {"configurable": {"thread_id": mode}}

    def invoke(x):
        return app.invoke(x, cfg) if mode == "sync" else asyncio.run(app.ainvoke(x, cfg))

    out = invoke(ai(("transfer", {"amount": 10, "to": "bob"}, "a"), ("transfer", {"amount": 20, "to": "carol"}, "b")))
    shown = []
    while out.get("__interrupt__"):
        (question,) = out["__interrupt__"]
        shown.append(question.value["toolgate"]["summary"])
        out = invoke(Command(resume={question.id: approve(question)}))
    assert sorted(ran) == [("transfer", 10, "bob"), ("transfer", 20, "carol")]  # bob was paid twice
    assert shown == ['transfer: amount: 10, to: "bob"', 'transfer: amount: 20, to: "carol"']  # each asked once
    assert tool_messages(out) == {"a": ("success", "sent"), "b": ("success", "sent")}


def test_an_allowed_call_beside_a_writes_call_does_not_run_again_on_resume(kit):
    tools, ran = kit
    app = graph(tools, FIN)
    cfg = {"configurable": {"thread_id": "mixed"}}
    out = app.invoke(ai(("search", {"query": "q"}, "s"), ("transfer", {"amount": 5, "to": "bob"}, "w")), cfg)
    assert ran == [("search", "q", 10)]
    out = app.invoke(Command(resume=approve(out["__interrupt__"][0])), cfg)
    assert ran == [("search", "q", 10), ("transfer", 5, "bob")]
    assert tool_messages(out) == {"s": ("success", "10 hits for q"), "w": ("success", "sent")}


def test_the_gate_decides_each_call_once_and_asks_the_same_question_on_every_rerun(kit):
    tools, ran = kit
    asked_engine = []

    def engine(request):
        asked_engine.append(request["tool"])
        return "delegate"

    app = graph(tools, None, node=guarded_tool_node(tools, ToolGate(CONFIG, engines=[engine]), context=FIN))
    cfg = {"configurable": {"thread_id": "stable"}}
    first = app.invoke(ai(("transfer", {"amount": 7, "to": "bob"}, "w")), cfg)["__interrupt__"][0]
    again = app.invoke(None, cfg)["__interrupt__"][0]  # the node runs again without an answer
    assert (again.id, again.value) == (first.id, first.value)  # the same question, the same token behind it
    assert asked_engine == ["transfer"]  # decided once, not once per pass
    app.invoke(Command(resume=approve(again)), cfg)
    assert ran == [("transfer", 7, "bob")] and asked_engine == ["transfer", "transfer"]  # check, then confirm


def test_an_approval_goes_only_to_the_call_it_was_given_for_whichever_call_asks_first(kit):
    """Sync ToolNode runs a turn's calls on threads: which one reaches interrupt() first is timing.
    The order is forced here: bob's call goes first on the first pass (the user is shown bob), and
    mallory's first on the resume (before the fix it took the approval meant for bob)."""
    tools, ran = kit
    wrapper = ToolGateWrapper(ToolGate(CONFIG), FIN)
    order = {"first": "a", "done": threading.Event()}

    def in_order(request, execute):
        me = request.tool_call["id"]
        if me != order["first"]:
            assert order["done"].wait(10)
        try:
            return wrapper(request, execute)
        finally:
            if me == order["first"]:
                order["done"].set()

    app = graph(tools, None, node=ToolNode(tools, wrap_tool_call=in_order))
    cfg = {"configurable": {"thread_id": "race"}}
    out = app.invoke(ai(("transfer", {"amount": 10, "to": "bob"}, "a"), ("transfer", {"amount": 9999, "to": "mallory"}, "b")), cfg)
    (question,) = out["__interrupt__"]
    assert "bob" in question.value["toolgate"]["summary"]
    order.update(first="b", done=threading.Event())
    out = app.invoke(Command(resume={question.id: approve(question)}), cfg)
    assert ran == [("transfer", 10, "bob")]
    (question,) = out["__interrupt__"]
    assert "mallory" in question.value["toolgate"]["summary"] and question.value["toolgate"]["callId"] == "b"
    out = app.invoke(Command(resume=decline(question)), cfg)
    assert ran == [("transfer", 10, "bob")]
    assert tool_messages(out) == {"a": ("success", "sent"), "b": ("error", "The user declined this call; it was not run.")}


def forged(value):
    """An approval for another call: same question id, another digest (arguments)."""
    return {"toolgate": {**approve(value)["toolgate"], "digest": "0" * 64}}


@pytest.mark.parametrize("answer", ["bare True", "another run's approval", "forged digest", "not an answer"])
def test_a_resume_value_that_names_no_question_of_this_node_runs_nothing(kit, answer):
    tools, ran = kit
    app = graph(tools, FIN)
    turn = ai(("transfer", {"amount": 10, "to": "bob"}, "a"))
    elsewhere = app.invoke(turn, {"configurable": {"thread_id": "other"}})["__interrupt__"][0]  # the same call, another run
    cfg = {"configurable": {"thread_id": "here"}}
    here = app.invoke(turn, cfg)["__interrupt__"][0]
    value = {"bare True": True, "another run's approval": approve(elsewhere), "forged digest": forged(here), "not an answer": {"approved": True}}[answer]
    out = app.invoke(Command(resume={here.id: value}), cfg)
    assert ran == [] and "__interrupt__" not in out
    status, content = tool_messages(out)["a"]
    assert status == "error" and "not for this call" in content
    with pytest.raises(ValueError):
        approve({"approved": True})


def test_two_calls_with_one_id_never_share_an_approval(kit):
    tools, ran = kit
    app = graph(tools, FIN)
    cfg = {"configurable": {"thread_id": "same-id"}}
    out = app.invoke(ai(("transfer", {"amount": 1, "to": "bob"}, "x"), ("transfer", {"amount": 2, "to": "mallory"}, "x")), cfg)
    (question,) = out["__interrupt__"]
    out = app.invoke(Command(resume=approve(question)), cfg)
    shown = {"bob": ("transfer", 1, "bob"), "mallory": ("transfer", 2, "mallory")}
    assert ran == [next(v for k, v in shown.items() if k in question.value["toolgate"]["summary"])]
    assert sorted(m.status for m in out["messages"] if isinstance(m, ToolMessage)) == ["error", "success"]
