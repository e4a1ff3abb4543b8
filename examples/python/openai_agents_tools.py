"""OpenAI Agents SDK tools behind toolgate, with confirm-before-write. Runs offline: a scripted
`Model` stands in for the LLM (use a real model name for real use; nothing else changes).

    python examples/python/openai_agents_tools.py
"""

import asyncio

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from toolgate import ToolGate
from toolgate.openai_agents import guard_tools

set_tracing_disabled(True)  # offline: no trace export

gate = ToolGate({
    "tools": [{"name": "transfer", "writes": True, "inputSchema": {"type": "object", "properties": {
        "amount": {"type": "number"}, "to": {"type": "string"}}, "required": ["amount", "to"]}}],
    "policy": {"rules": [{"effect": "allow", "roles": ["finance"], "tools": ["transfer"]}]},
})


@function_tool
def transfer(amount: float, to: str) -> str:
    """Send money."""
    return f"sent {amount} to {to}"


class ScriptedModel(Model):
    """Stands in for the LLM: asks for one transfer (amount as a string), then answers."""

    async def get_response(self, system_instructions, input, *args, **kwargs):
        done = isinstance(input, list) and any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in input)
        if done:
            out = [ResponseOutputMessage(id="m", type="message", role="assistant", status="completed", content=[ResponseOutputText(type="output_text", text="Paid.", annotations=[])])]
        else:
            out = [ResponseFunctionToolCall(type="function_call", call_id="t1", name="transfer", arguments='{"amount": "42.5", "to": "bob"}')]
        return ModelResponse(output=out, usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


async def main() -> None:
    agent = Agent(name="payer", model=ScriptedModel(), tools=guard_tools([transfer], gate, context={"subject": "fin", "roles": ["finance"]}))
    result = await Runner.run(agent, "Pay bob 42.50")
    for item in result.interruptions:  # the gate marked `transfer` as a write: ask the user
        print("approve?", item.name, item.arguments)
        state = result.to_state()
        state.approve(item)
        result = await Runner.run(agent, state)
    print("answer:", result.final_output)
    print("tool output:", [i.output for i in result.new_items if getattr(i, "type", "") == "tool_call_output_item"])


asyncio.run(main())
