"""toolgate.openai_agents against the real pinned openai-agents: `Runner` runs an `Agent` whose
model is a scripted stand-in (`agents.models.interface.Model`, the SDK's own interface); the
tools are real `@function_tool`s that record what they received."""

from __future__ import annotations

import json
from typing import Any, List

import anyio
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from toolgate import ToolGate
from toolgate.openai_agents import guard_tools

set_tracing_disabled(True)  # offline: no trace export

CONFIG = {
    "tools": [
        {"name": "search", "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query", "limit"]}},
        {"name": "transfer", "writes": True, "inputSchema": {"type": "object", "properties": {"amount": {"type": "number"}, "to": {"type": "string"}}, "required": ["amount", "to"]}},
    ],
    "policy": {"rules": [{"effect": "allow", "tools": ["search"]}, {"effect": "allow", "roles": ["finance"], "tools": ["transfer"]}]},
}


class Scripted(Model):
    """Answers the scripted function calls turn by turn, then a text message; records the
    tool names it was offered and the tool outputs it was sent."""

    def __init__(self, *turns: List[tuple]) -> None:
        self.turns = list(turns)
        self.offered: List[List[str]] = []
        self.outputs: List[Any] = []

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kwargs) -> ModelResponse:
        self.offered.append(sorted(t.name for t in tools))
        if isinstance(input, list):
            self.outputs = [i.get("output") for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"]
        if self.turns:
            calls = self.turns.pop(0)
            out = [ResponseFunctionToolCall(type="function_call", call_id=cid, name=name, arguments=args, id=f"fc_{cid}", status="completed") for name, args, cid in calls]
        else:
            out = [ResponseOutputMessage(id="m1", type="message", role="assistant", status="completed", content=[ResponseOutputText(type="output_text", text="done", annotations=[])])]
        return ModelResponse(output=out, usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):  # pragma: no cover - not used
        raise NotImplementedError


def tools_and_log():
    ran = []

    @function_tool
    def search(query: str, limit: int) -> str:
        """Search."""
        ran.append(("search", query, limit))
        return f"{limit} hits"

    @function_tool
    def transfer(amount: float, to: str) -> str:
        """Send money."""
        ran.append(("transfer", amount, to))
        return "sent"

    @function_tool
    def shell(cmd: str) -> str:
        """Not declared to the gate."""
        ran.append(("shell", cmd))
        return "ran"

    return [search, transfer, shell], ran


def test_repaired_runs_and_refused_is_the_tools_output():
    tools, ran = tools_and_log()
    model = Scripted([("search", '{"query": "q", "limit": "5"}', "c1")], [("search", '{"query": "q"}', "c2")])
    agent = Agent(name="a", model=model, tools=guard_tools(tools, ToolGate(CONFIG), context={"subject": "ana"}))
    result = anyio.run(Runner.run, agent, "go")
    assert result.final_output == "done"
    assert model.offered[0] == ["search"]  # transfer needs a role, shell is undeclared
    assert ran == [("search", "q", 5)]
    refusal = ToolGate(CONFIG).check("search", '{"query": "q"}')
    assert refusal.reason == "invalid"
    assert model.outputs == ["5 hits", refusal.message]


def test_writes_need_approval_then_the_gate_confirms():
    tools, ran = tools_and_log()
    gate = ToolGate(CONFIG)
    model = Scripted([("transfer", json.dumps({"amount": "250", "to": "bob"}), "t1")])
    agent = Agent(name="a", model=model, tools=guard_tools(tools, gate, context={"subject": "fin", "roles": ["finance"]}))

    async def main():
        first = await Runner.run(agent, "pay bob")
        assert ran == [] and len(first.interruptions) == 1
        state = first.to_state()
        state.approve(first.interruptions[0])
        return await Runner.run(agent, state)

    result = anyio.run(main)
    assert ran == [("transfer", 250, "bob")]
    assert result.final_output == "done"


def test_rejected_approval_runs_nothing():
    tools, ran = tools_and_log()
    model = Scripted([("transfer", '{"amount": 1, "to": "bob"}', "t1")])
    agent = Agent(name="a", model=model, tools=guard_tools(tools, ToolGate(CONFIG), context=lambda ctx: {"subject": "fin", "roles": ["finance"]}))

    async def main():
        first = await Runner.run(agent, "pay bob")
        state = first.to_state()
        state.reject(first.interruptions[0])
        return await Runner.run(agent, state)

    anyio.run(main)
    assert ran == []
