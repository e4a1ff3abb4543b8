"""toolgate.pydantic_ai against the real pinned pydantic-ai: FunctionModel and TestModel stand in
for the LLM (not for the gate); the tools are real functions that record what they received."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import FunctionToolCallEvent, ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved

from toolgate import ToolGate
from toolgate.pydantic_ai import ToolGateCapability

CONFIG = {
    "tools": [
        {"name": "search", "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}, "status": {"enum": ["open", "closed"]}}, "required": ["query"]}},
        {"name": "read_file", "resource": "file:{path*}", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
        {"name": "transfer", "writes": True, "inputSchema": {"type": "object", "properties": {"amount": {"type": "number"}, "to": {"type": "string"}}, "required": ["amount", "to"]}},
    ],
    "policy": {"rules": [
        {"effect": "allow", "tools": ["search"]},
        {"effect": "allow", "roles": ["analyst"], "tools": ["read_file"], "resources": ["file:reports/**"]},
        {"effect": "allow", "roles": ["finance"], "tools": ["transfer"]},
    ]},
}


def scripted(*turns):
    """A FunctionModel answering the given parts turn by turn, then text; records what it saw."""
    seen = {"tools": [], "messages": []}

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen["tools"].append(sorted(t.name for t in info.function_tools))
        seen["messages"] = messages
        step = sum(1 for m in messages if isinstance(m, ModelResponse))
        if step < len(turns):
            return ModelResponse(parts=list(turns[step]))
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(model), seen


def make_agent(model, ctx, **kwargs):
    ran = []
    agent = Agent(model, capabilities=[ToolGateCapability(ToolGate(CONFIG), context=ctx)], **kwargs)

    @agent.tool_plain
    def search(query: str, limit: int = 10, status: str = "open") -> str:
        ran.append(("search", {"query": query, "limit": limit, "status": status}))
        return "2 hits"

    @agent.tool_plain
    def read_file(path: str) -> str:
        ran.append(("read_file", {"path": path}))
        return "contents"

    @agent.tool_plain
    def transfer(amount: float, to: str) -> str:
        ran.append(("transfer", {"amount": amount, "to": to}))
        return "sent"

    @agent.tool_plain
    def shell(cmd: str) -> str:  # registered with the agent, not declared to the gate
        ran.append(("shell", {"cmd": cmd}))
        return "ran"

    return agent, ran


def returns(messages):
    return [(p.tool_name, p.outcome, p.content) for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]


def test_repaired_arguments_reach_the_tool():
    model, _ = scripted([ToolCallPart("search", '{"query": "q", "limit": "5", "status": "OPEN"}', tool_call_id="c1")])
    agent, ran = make_agent(model, {"subject": "ana"})
    result = agent.run_sync("go")
    assert ran == [("search", {"query": "q", "limit": 5, "status": "open"})]
    assert result.output == "done"


def test_refusal_is_a_retry_prompt_with_the_gates_message_and_the_tool_never_runs():
    model, seen = scripted(
        [ToolCallPart("read_file", {"path": "reports/../../etc/passwd"}, tool_call_id="c1")],
        [ToolCallPart("read_file", {"path": "reports/q3.csv"}, tool_call_id="c2")],
    )
    agent, ran = make_agent(model, {"subject": "ana", "roles": ["analyst"]})
    result = agent.run_sync("go")
    assert ran == [("read_file", {"path": "reports/q3.csv"})]
    answers = returns(result.all_messages())
    assert answers[0][0:2] == ("read_file", "retried")
    expected = ToolGate(CONFIG).check("read_file", {"path": "reports/../../etc/passwd"}, {"subject": "ana", "roles": ["analyst"]})
    assert expected.reason == "unresolved_resource"
    assert expected.message in str(answers[0][2])
    assert answers[1] == ("read_file", "success", "contents")


def test_deny_by_default_hides_and_refuses():
    model, seen = scripted([ToolCallPart("read_file", {"path": "reports/a"}, tool_call_id="c1")], [ToolCallPart("shell", {"cmd": "id"}, tool_call_id="c2")])
    agent, ran = make_agent(model, {"subject": "bob"}, retries=3)
    agent.run_sync("go")
    # bob (no role) is never offered read_file or transfer; shell is not declared: never offered
    assert seen["tools"][0] == ["search"]
    assert ran == []  # the model called them anyway: both refused, neither ran


def test_test_model_calls_every_offered_tool_and_only_allowed_ones_are_offered():
    """TestModel calls every tool it is offered with schema-valid arguments: for a caller with
    no role that is `search` alone (read_file and transfer need a role; shell is undeclared)."""
    agent, ran = make_agent(TestModel(), {"subject": "bob"})
    agent.run_sync("go")
    assert [name for name, _ in ran] == ["search"]


def test_writes_are_deferred_until_approved_then_confirmed_by_the_gate():
    model, _ = scripted([ToolCallPart("transfer", {"amount": "500", "to": "bob"}, tool_call_id="t1")])
    agent, ran = make_agent(model, {"subject": "fin", "roles": ["finance"]}, output_type=[str, DeferredToolRequests])
    first = agent.run_sync("pay bob")
    assert isinstance(first.output, DeferredToolRequests)
    assert [c.tool_call_id for c in first.output.approvals] == ["t1"]
    assert "500" in first.output.metadata["t1"]["toolgate"]["summary"]
    assert ran == []
    second = agent.run_sync(message_history=first.all_messages(), deferred_tool_results=DeferredToolResults(approvals={"t1": True}))
    assert ran == [("transfer", {"amount": 500, "to": "bob"})]
    assert second.output == "done"


def test_a_user_who_declines_runs_nothing():
    model, _ = scripted([ToolCallPart("transfer", {"amount": 5, "to": "bob"}, tool_call_id="t1")])
    agent, ran = make_agent(model, {"subject": "fin", "roles": ["finance"]}, output_type=[str, DeferredToolRequests])
    first = agent.run_sync("pay bob")
    agent.run_sync(message_history=first.all_messages(), deferred_tool_results=DeferredToolResults(approvals={"t1": False}))
    assert ran == []


def approve(agent, first, approval=True, **kwargs):
    """Resumes `first` with its one deferred call approved (`approval`: True or a ToolApproved)."""
    (call,) = first.output.approvals
    return agent.run_sync(message_history=first.all_messages(), deferred_tool_results=DeferredToolResults(approvals={call.tool_call_id: approval}), **kwargs)


def summaries(output):
    return [output.metadata[c.tool_call_id]["toolgate"]["summary"] for c in output.approvals]


def test_concurrent_runs_with_the_same_call_id_keep_their_own_decisions():
    """One agent, two runs at once whose models both use the call id `x`; run B (a search) starts
    and finishes between run A's validation of its `transfer` and its execution. A's transfer is
    deferred (it never runs unapproved, nor with the model's raw arguments); B's search runs."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(m, ModelResponse) for m in messages):
            return ModelResponse(parts=[TextPart("done")])
        if messages[0].parts[-1].content == "pay":
            return ModelResponse(parts=[ToolCallPart("transfer", {"amount": 1000000, "to": "mallory"}, tool_call_id="x")])
        return ModelResponse(parts=[ToolCallPart("search", {"query": "q"}, tool_call_id="x")])

    agent, ran = make_agent(FunctionModel(model), lambda ctx: ctx.deps, output_type=[str, DeferredToolRequests], deps_type=dict)

    async def run(prompt, deps, between=None):
        async with agent.iter(prompt, deps=deps) as r:
            node = r.next_node
            while not Agent.is_end_node(node):
                if Agent.is_call_tools_node(node):
                    async with node.stream(r.ctx) as events:
                        async for ev in events:
                            # the call is validated, not yet executed: the other run goes now
                            if between is not None and isinstance(ev, FunctionToolCallEvent):
                                await between()
                                between = None
                node = await r.next(node)
            return r.result.output

    async def both():
        b = []

        async def run_b():
            b.append(await run("search", {"subject": "ana"}))

        a = await run("pay", {"subject": "fin", "roles": ["finance"]}, between=run_b)
        return a, b[0]

    a, b = asyncio.run(both())
    assert isinstance(a, DeferredToolRequests) and [c.tool_name for c in a.approvals] == ["transfer"]
    assert summaries(a) == ['transfer: amount: 1000000, to: "mallory"']
    assert b == "done"
    assert ran == [("search", {"query": "q", "limit": 10, "status": "open"})]


def edited(messages, args):
    """`messages` with every tool call's arguments replaced (what a client can send back)."""
    for m in messages:
        if isinstance(m, ModelResponse):
            m.parts = [replace(p, args=args) if isinstance(p, ToolCallPart) else p for p in m.parts]
    return messages


def test_an_approval_is_for_the_call_shown_not_for_arguments_edited_in_the_history():
    model, _ = scripted([ToolCallPart("transfer", {"amount": 10, "to": "bob"}, tool_call_id="x")])
    agent, ran = make_agent(model, {"subject": "fin", "roles": ["finance"]}, output_type=[str, DeferredToolRequests])
    first = agent.run_sync("pay bob")
    assert summaries(first.output) == ['transfer: amount: 10, to: "bob"']
    history = edited(first.all_messages(), {"amount": 9999, "to": "mallory"})
    second = agent.run_sync(message_history=history, deferred_tool_results=DeferredToolResults(approvals={"x": True}))
    # a different call: nothing ran, and it waits for its own approval
    assert ran == []
    assert isinstance(second.output, DeferredToolRequests)
    assert summaries(second.output) == ['transfer: amount: 9999, to: "mallory"']


def test_an_approval_with_override_args_is_a_new_call_waiting_for_its_own_approval():
    model, _ = scripted([ToolCallPart("transfer", {"amount": 10, "to": "bob"}, tool_call_id="x")])
    agent, ran = make_agent(model, {"subject": "fin", "roles": ["finance"]}, output_type=[str, DeferredToolRequests])
    first = agent.run_sync("pay bob")
    second = approve(agent, first, ToolApproved(override_args={"amount": 9999, "to": "mallory"}))
    assert ran == []
    assert summaries(second.output) == ['transfer: amount: 9999, to: "mallory"']


def test_an_approval_runs_the_call_once_and_only_for_the_caller_it_was_shown_to():
    model, _ = scripted([ToolCallPart("transfer", {"amount": "10", "to": "bob"}, tool_call_id="x")])
    agent, ran = make_agent(model, lambda ctx: ctx.deps, output_type=[str, DeferredToolRequests], deps_type=dict)
    fin = {"subject": "fin", "roles": ["finance"]}
    first = agent.run_sync("pay bob", deps=fin)
    # another caller (with the same role) approving fin's call: a new call of theirs, not run
    other = approve(agent, first, deps={"subject": "fin2", "roles": ["finance"]})
    assert ran == [] and isinstance(other.output, DeferredToolRequests)
    # fin's approval: the gate confirms the token it issued and the tool runs its arguments, once
    assert approve(agent, first, deps=fin).output == "done"
    assert ran == [("transfer", {"amount": 10, "to": "bob"})]
    again = approve(agent, first, deps=fin)
    assert ran == [("transfer", {"amount": 10, "to": "bob"})]
    assert isinstance(again.output, DeferredToolRequests)


def test_an_approval_survives_the_arguments_being_reserialized():
    """History that went through a client comes back with the same arguments written another way
    (parsed, other key order, other spacing): still the call shown, so the approval holds."""
    model, _ = scripted([ToolCallPart("transfer", '{"to": "bob",  "amount": 10.0}', tool_call_id="x")])
    agent, ran = make_agent(model, {"subject": "fin", "roles": ["finance"]}, output_type=[str, DeferredToolRequests])
    first = agent.run_sync("pay bob")
    history = edited(first.all_messages(), {"amount": 10, "to": "bob"})
    second = agent.run_sync(message_history=history, deferred_tool_results=DeferredToolResults(approvals={"x": True}))
    assert second.output == "done"
    assert ran == [("transfer", {"amount": 10, "to": "bob"})]
