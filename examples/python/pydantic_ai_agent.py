"""A Pydantic AI agent whose tools sit behind toolgate. Runs offline: a FunctionModel stands in
for the LLM (swap in "openai:gpt-5" or any model for real use; nothing else changes).

The scripted model first calls `search` with almost-right arguments (the gate repairs them), then
asks to read a file outside the reports folder (the gate refuses it and the model gets the
gate's message as a retry prompt), then reads an allowed file and answers.

    python examples/python/pydantic_ai_agent.py
"""

from __future__ import annotations

import json

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from toolgate import ToolGate
from toolgate.pydantic_ai import ToolGateCapability

gate = ToolGate({
    "tools": [
        {"name": "search", "inputSchema": {"type": "object", "properties": {
            "query": {"type": "string"}, "limit": {"type": "integer"},
            "status": {"enum": ["open", "closed"]}}, "required": ["query"]}},
        {"name": "read_file", "action": "read", "resource": "file:{path*}",
         "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
    ],
    "policy": {"rules": [
        {"effect": "allow", "tools": ["search"]},
        {"effect": "allow", "roles": ["analyst"], "tools": ["read_file"], "resources": ["file:reports/**"]},
    ]},
})


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Stands in for the LLM: one step per turn, reacting to what the tools answered."""
    step = sum(1 for m in messages if isinstance(m, ModelResponse))
    if step == 0:
        return ModelResponse(parts=[ToolCallPart("search", '{"query": "q3 revenue", "limit": "5", "status": "OPEN"}', tool_call_id="c1")])
    if step == 1:
        return ModelResponse(parts=[ToolCallPart("read_file", {"path": "reports/../../etc/passwd"}, tool_call_id="c2")])
    if step == 2:
        return ModelResponse(parts=[ToolCallPart("read_file", {"path": "reports/q3.csv"}, tool_call_id="c3")])
    return ModelResponse(parts=[TextPart("Q3 revenue is in reports/q3.csv.")])


agent = Agent(FunctionModel(scripted_model), capabilities=[ToolGateCapability(gate, context={"subject": "ana", "roles": ["analyst"]})])


@agent.tool_plain
def search(query: str, limit: int = 10, status: str = "open") -> str:
    """Search the tracker."""
    return json.dumps({"query": query, "limit": limit, "status": status, "hits": 2})


@agent.tool_plain
def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


if __name__ == "__main__":
    result = agent.run_sync("Where is the Q3 revenue?")
    for message in result.all_messages():
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                print(f"model  -> {part.tool_name}({part.args})")
            elif isinstance(part, ToolReturnPart) and part.outcome == "retried":
                print(f"gate   <- {part.content}")  # the refusal, as a retry prompt
            elif isinstance(part, ToolReturnPart):
                print(f"tool   <- {part.content}")
    print("answer:", result.output)
