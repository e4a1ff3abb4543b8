"""gate.stream("pydantic-ai") against the real pinned pydantic-ai: the events come from
pydantic-ai's own parts manager (a FunctionModel streaming text and tool-call deltas, the LLM's
stand-in), serialized by its own type adapter; what the gate forwards and answers is read back by
the same adapters, so the released stream and the feedback are values pydantic-ai accepts."""

from __future__ import annotations

import asyncio
import json
from typing import Any, List

import pytest
from pydantic import TypeAdapter
from pydantic_ai import messages as m
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import DeltaToolCall, FunctionModel
from pydantic_ai.tools import ToolDefinition

from toolgate import ToolGate, ToolGateError

EVENTS: TypeAdapter[Any] = TypeAdapter(m.ModelResponseStreamEvent)


def model_events(*chunks: Any) -> List[dict]:
    """The ModelResponseStreamEvents pydantic-ai emits for `chunks` (text or tool-call deltas), as JSON values."""

    async def stream(messages: Any, info: Any):
        for c in chunks:
            yield c

    async def run() -> List[dict]:
        model = FunctionModel(stream_function=stream)
        names = ["get_weather", "send_email", "search"]
        params = ModelRequestParameters(function_tools=[ToolDefinition(name=n) for n in names])
        out: List[dict] = []
        async with model.request_stream([m.ModelRequest.user_text_prompt("hi")], None, params) as response:
            async for ev in response:
                out.append(EVENTS.dump_python(ev, mode="json"))
        return out

    return asyncio.run(run())


@pytest.fixture(scope="module")
def gate(dialect_tools) -> ToolGate:
    return ToolGate(dialect_tools)


def test_real_stream_is_guarded_and_the_released_stream_is_pydantic_ai(gate):
    events = model_events(
        "Checking ",
        "the weather.",
        {0: DeltaToolCall(name="get_weather", json_args='{"city": "Paris",', tool_call_id="call_1")},
        {0: DeltaToolCall(json_args=' "days": "2"}')},
        {1: DeltaToolCall(name="send_email", json_args='{"to": "a@b.c"}', tool_call_id="call_2")},
    )
    s = gate.stream("pydantic-ai")
    completed = []
    forwarded: List[Any] = []
    for ev in events:
        completed += [c.call_id for c in s.push(ev)]
        forwarded += s.forward()
    report = s.end()
    assert completed == ["call_1", "call_2"]
    assert [(c.call_id, c.outcome) for c in report.calls] == [("call_1", "repaired"), ("call_2", "rejected")]
    assert report.calls[0].arguments == {"city": "Paris", "days": 2}
    # every forwarded event is a pydantic-ai event again; the refused call is not among them
    released = [EVENTS.validate_python(ev) for ev in forwarded]
    calls = [e.part for e in released if isinstance(e, m.PartEndEvent) and isinstance(e.part, m.ToolCallPart)]
    assert [(c.tool_name, c.args_as_dict()) for c in calls] == [("get_weather", {"city": "Paris", "days": 2})]
    assert sorted({e.index for e in released if hasattr(e, "index")}) == [0, 1]
    # the assembled turn is a ModelResponse; the feedback a ModelRequest of retry prompts
    (response,) = m.ModelMessagesTypeAdapter.validate_python([report.payload])
    assert isinstance(response, m.ModelResponse)
    (request,) = m.ModelMessagesTypeAdapter.validate_python(report.feedback)
    assert isinstance(request, m.ModelRequest)
    (retry,) = request.parts
    # pydantic-ai 2.x reads a retry-prompt answering a call as that call's return, outcome "retried"
    assert retry.tool_call_id == "call_2" and retry.tool_name == "send_email"
    assert isinstance(retry, m.RetryPromptPart) or getattr(retry, "outcome", None) == "retried"


def test_a_call_renamed_mid_stream_fails_closed(gate):
    events = model_events({0: DeltaToolCall(name="get_weather", json_args='{"city": "Oslo"}', tool_call_id="call_1")})
    start = next(e for e in events if e["event_kind"] == "part_start")
    s = gate.stream("pydantic-ai")
    s.push(start)
    renamed = {"index": start["index"], "delta": {"tool_name_delta": "_x", "args_delta": None, "tool_call_id": None, "part_delta_kind": "tool_call"}, "event_kind": "part_delta"}
    with pytest.raises(ToolGateError) as e:
        s.push(json.dumps(renamed))
    assert e.value.code == "E_PAYLOAD"
    assert "changed after it started" in e.value.message
