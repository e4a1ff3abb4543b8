"""toolgate.langchain against the real pinned langchain-core and langgraph: a ToolNode (alone and
inside a StateGraph with a checkpointer) whose tools record what they received."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command

from toolgate import ToolGate
from toolgate.langchain import filter_tools, guarded_tool_node

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


def graph(tools, context, saver=True):
    """A one-node graph: the guarded ToolNode (a checkpointer for interrupts)."""
    g = StateGraph(MessagesState)
    g.add_node("tools", guarded_tool_node(tools, ToolGate(CONFIG), context=context))
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




@pytest.mark.parametrize("answer, runs", [(True, True), (False, False)])
def test_writes_interrupt_for_the_user_then_confirm(kit, answer, runs):
    tools, ran = kit
    app = graph(tools, {"subject": "fin", "roles": ["finance"]})
    cfg = {"configurable": {"thread_id": f"t-{answer}"}}
    first = app.invoke(ai(("transfer", {"amount": "250", "to": "bob"}, "w1")), cfg)
    assert ran == []
    asked = first["__interrupt__"][0].value["toolgate"]
    assert asked["tool"] == "transfer" and "250" in asked["summary"]
    done = app.invoke(Command(resume=answer), cfg)
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
