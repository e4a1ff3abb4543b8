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
from agents.run_state import RunState
from agents.tool_context import ToolContext
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from toolgate import ToolGate, ToolGateError, openai_agents
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
        return answer(self.turns.pop(0) if self.turns else None)

    def stream_response(self, *args, **kwargs):  # pragma: no cover - not used
        raise NotImplementedError


def answer(calls) -> ModelResponse:
    """The model's answer: these function calls (name, arguments text, call id), or with none the
    text message "done"."""
    if calls is not None:
        out = [ResponseFunctionToolCall(type="function_call", call_id=cid, name=name, arguments=args, id=f"fc_{cid}", status="completed") for name, args, cid in calls]
    else:
        out = [ResponseOutputMessage(id="m1", type="message", role="assistant", status="completed", content=[ResponseOutputText(type="output_text", text="done", annotations=[])])]
    return ModelResponse(output=out, usage=Usage(), response_id=None)


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


# Approvals are bound to the exact call the user was shown and approved (call id, caller,
# arguments), taken once, and only for a call the SDK records as approved on its own in the run
# being resumed: a model-written call id alone never finds one.

FIN = {"subject": "fin", "roles": ["finance"]}
MILLION = json.dumps({"amount": 1000000, "to": "mallory"})
SMALL = json.dumps({"amount": 5, "to": "bob"})


def finance_agent(model: Model, context: Any = FIN):
    tools, ran = tools_and_log()
    return Agent(name="a", model=model, tools=guard_tools(tools, ToolGate(CONFIG), context=context)), ran


def interrupted(result) -> List[tuple]:
    return [(i.raw_item.call_id, i.raw_item.arguments) for i in result.interruptions]


def test_a_rejected_call_never_runs_when_a_later_run_reuses_its_call_id():
    model = Scripted([("transfer", MILLION, "x")])
    agent, ran = finance_agent(model)

    async def main():
        first = await Runner.run(agent, "pay")
        assert interrupted(first) == [("x", MILLION)]
        state = first.to_state()
        state.reject(first.interruptions[0])
        await Runner.run(agent, state)
        # a later run: the model sends a call the gate refuses, under the rejected call's id
        model.turns = [[("transfer", "{}", "x")]]
        second = await Runner.run(agent, "something else")
        assert second.interruptions == []
        return second

    second = anyio.run(main)
    assert ran == []
    assert model.outputs == [ToolGate(CONFIG).check("transfer", "{}").message]
    assert second.final_output == "done"


class PerInput(Scripted):
    """For concurrent runs of one agent: the first turn of a run answers the calls scripted for
    that run's input text; every later turn is a text message."""

    def __init__(self, calls) -> None:
        super().__init__()
        self.calls = calls

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kwargs) -> ModelResponse:
        await anyio.sleep(0)  # let the other runs go on
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        if any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items):
            return answer(None)
        return answer(self.calls[next(i["content"] for i in items if isinstance(i, dict) and i.get("role") == "user")])


def test_concurrent_runs_sharing_a_call_id_each_run_only_their_own_approved_call():
    # three runs of one agent at once, every call with the id "x": two callers (from the app's
    # context object), two amounts; each approval runs that run's own call, and nothing else
    model = PerInput({"a": [("transfer", SMALL, "x")], "b": [("transfer", MILLION, "x")], "c": [("transfer", SMALL, "x")]})
    agent, ran = finance_agent(model, context=lambda ctx: {"subject": ctx.context["who"], "roles": ["finance"]})

    async def main():
        firsts = {}

        async def start(text: str, who: str) -> None:
            firsts[text] = await Runner.run(agent, text, context={"who": who})

        async with anyio.create_task_group() as tg:
            tg.start_soon(start, "a", "fin")
            tg.start_soon(start, "b", "fin")
            tg.start_soon(start, "c", "ops")
        assert {t: interrupted(r) for t, r in firsts.items()} == {"a": [("x", SMALL)], "b": [("x", MILLION)], "c": [("x", SMALL)]}
        states = {}
        for text, first in firsts.items():
            states[text] = first.to_state()
            (states[text].reject if text == "b" else states[text].approve)(first.interruptions[0])
        for text in ("a", "b", "c"):
            await Runner.run(agent, states[text])

    anyio.run(main)
    assert ran == [("transfer", 5, "bob"), ("transfer", 5, "bob")]  # a and c; b was rejected


def test_an_approval_is_taken_once_and_a_reused_call_id_within_the_run_runs_nothing_more():
    model = Scripted([("transfer", SMALL, "x")], [("transfer", SMALL, "x")])
    agent, ran = finance_agent(model)

    async def main():
        first = await Runner.run(agent, "pay")
        states = [first.to_state(), first.to_state()]  # one checkpoint, resumed twice
        for state in states:
            state.approve(first.interruptions[0])
        # the first through the SDK's serialized form, as a host resuming later would; in it the
        # model sends the approved call again, same id and arguments
        resumed = await Runner.run(agent, await RunState.from_json(agent, states[0].to_json()))
        after_first = list(model.outputs)
        again = await Runner.run(agent, states[1])
        return resumed, after_first, again

    resumed, after_first, again = anyio.run(main)
    assert ran == [("transfer", 5, "bob")]  # once
    assert after_first == ["sent"]  # the second call with the same id and arguments is the same call
    assert resumed.final_output == again.final_output == "done"
    assert model.outputs == [ToolGate(CONFIG).check("transfer", SMALL, FIN).message]  # the second resume: refused


def test_an_approved_call_invoked_with_other_arguments_is_decided_afresh_and_its_approval_dropped():
    model = Scripted([("transfer", SMALL, "x")])
    tools, ran = tools_and_log()
    guarded = guard_tools(tools, ToolGate(CONFIG), context=FIN)
    transfer = next(t for t in guarded if t.name == "transfer")
    agent = Agent(name="a", model=model, tools=guarded)

    async def main():
        first = await Runner.run(agent, "pay")
        wrapper = first.context_wrapper
        wrapper.approve_tool(first.interruptions[0])  # the user approved x with SMALL
        outputs = []
        for args in (MILLION, SMALL):
            # the SDK's own tool context for call x of that run, invoked with `args`
            call = ResponseFunctionToolCall(type="function_call", call_id="x", name="transfer", arguments=args, id="fc_x", status="completed")
            ctx = ToolContext.from_agent_context(wrapper, "x", tool_call=call, agent=agent)
            assert ctx.is_tool_approved("transfer", "x") is True
            outputs.append(await transfer.on_invoke_tool(ctx, args))
        return outputs

    outputs = anyio.run(main)
    assert ran == []
    # other arguments: a new call, which needs its own confirmation; the approval of SMALL was
    # dropped with it, so the approved arguments then find nothing either
    assert outputs == [ToolGate(CONFIG).check("transfer", MILLION, FIN).message, ToolGate(CONFIG).check("transfer", SMALL, FIN).message]


def test_always_approve_never_confirms_a_call_nobody_approved():
    # run 1: the user rejects x. Run 2: the user approves y "always"; the model then sends x again,
    # exactly as it was rejected: the SDK runs it without asking, and it must not be confirmed
    model = Scripted([("transfer", MILLION, "x")])
    agent, ran = finance_agent(model)

    async def main():
        first = await Runner.run(agent, "pay")
        state = first.to_state()
        state.reject(first.interruptions[0])
        await Runner.run(agent, state)
        model.turns = [[("transfer", SMALL, "y")], [("transfer", MILLION, "x")]]
        second = await Runner.run(agent, "pay bob")
        assert interrupted(second) == [("y", SMALL)]
        state = second.to_state()
        state.approve(second.interruptions[0], always_approve=True)
        await Runner.run(agent, state)

    anyio.run(main)
    # neither call is confirmed by an "always" decision: toolgate confirms calls approved one by one
    assert ran == []
    waits = ToolGate(CONFIG).check("transfer", MILLION, FIN).message
    assert model.outputs == [waits, waits]


def test_calls_held_awaiting_approval_are_bounded(monkeypatch):
    monkeypatch.setattr(openai_agents, "_HELD_CAP", 2, raising=False)
    model = Scripted()
    agent, ran = finance_agent(model)

    async def main():
        states = []
        for n in (1, 2, 3):
            model.turns = [[("transfer", json.dumps({"amount": n, "to": "bob"}), f"c{n}")]]
            first = await Runner.run(agent, f"pay {n}")
            state = first.to_state()
            state.approve(first.interruptions[0])
            states.append(state)
        for state in states:
            await Runner.run(agent, state)

    anyio.run(main)
    assert ran == [("transfer", 2, "bob"), ("transfer", 3, "bob")]  # the oldest was dropped: refused


# --- tools the SDK runs in this process with no FunctionTool to wrap: refused (fail closed) ---

SHELL_CONFIG = {
    "tools": [
        *CONFIG["tools"],
        {"name": "shell", "inputSchema": {"type": "object"}},
        {"name": "local_shell", "inputSchema": {"type": "object"}},
        {"name": "computer_use_preview", "inputSchema": {"type": "object"}},
        {"name": "apply_patch", "inputSchema": {"type": "object"}},
        {"name": "raw", "inputSchema": {"type": "object"}},
        {"name": "web_search", "inputSchema": {"type": "object"}},
    ],
    "policy": {"rules": [{"effect": "allow", "tools": ["*"]}]},
}


def local_tools():
    """One of each kind the SDK runs here without a FunctionTool (every name declared and allowed
    above, so a name-only check would let each one through)."""
    from agents import ApplyPatchTool, ComputerTool, CustomTool, LocalShellTool, ShellTool

    ran: List[Any] = []

    async def executor(request: Any) -> str:
        ran.append(("shell", request))
        return "ran"

    class Editor:  # apply_patch's editor
        def create_file(self, op: Any) -> None:
            ran.append(("create", op))

        update_file = delete_file = create_file

    async def raw(ctx: Any, text: str) -> str:
        ran.append(("raw", text))
        return "ran"

    return [
        ShellTool(executor=executor),
        ShellTool(executor=executor, environment={"type": "local"}),
        LocalShellTool(executor=executor),
        ComputerTool(computer=object()),
        ApplyPatchTool(editor=Editor()),
        CustomTool(name="raw", description="Raw text in.", on_invoke_tool=raw),
        object(),
    ], ran


def test_a_tool_the_sdk_runs_here_without_a_function_is_refused_naming_it():
    tools, ran = local_tools()
    gate = ToolGate(SHELL_CONFIG)
    search = tools_and_log()[0][0]
    for tool in tools:
        for ctx in ({"subject": "ana"}, lambda run_ctx: {"subject": "ana"}):
            try:
                guard_tools([search, tool], gate, context=ctx)
            except ToolGateError as e:
                assert e.code == "E_CONFIG"
                assert "guard_tools: tools[1]" in e.message and type(tool).__name__ in e.message
                assert "function tool" in e.message
            else:
                raise AssertionError(f"{type(tool).__name__} was passed through unchecked")
    assert ran == []


def test_a_local_shell_is_refused_and_the_message_says_what_to_do_instead():
    from agents import ShellTool

    async def executor(request: Any) -> str:  # pragma: no cover - never runs
        return "ran"

    try:
        guard_tools([ShellTool(executor=executor)], ToolGate(SHELL_CONFIG), context={"subject": "ana"})
    except ToolGateError as e:
        assert e.message.startswith("guard_tools: tools[0] `shell` (ShellTool) runs the model's commands in this process")
        assert "container_auto" in e.message
    else:
        raise AssertionError("a local shell was passed through")


def test_tools_the_provider_runs_are_kept_as_they_are_when_the_caller_may_call_them():
    from agents import ShellTool, WebSearchTool

    hosted_shell = ShellTool(environment={"type": "container_auto"})
    web = WebSearchTool()
    search = tools_and_log()[0][0]
    kept = guard_tools([search, hosted_shell, web], ToolGate(SHELL_CONFIG), context={"subject": "ana"})
    assert [t.name for t in kept] == ["search", "shell", "web_search"]
    assert kept[0] is not search and kept[1] is hosted_shell and kept[2] is web
    # undeclared: dropped, never offered to the model
    assert guard_tools([hosted_shell, web], ToolGate(CONFIG), context={"subject": "ana"}) == []


def test_guard_tool_takes_function_tools_only():
    from agents import WebSearchTool

    try:
        openai_agents.guard_tool(WebSearchTool(), ToolGate(SHELL_CONFIG))  # type: ignore[arg-type]
    except ToolGateError as e:
        assert e.code == "E_CONFIG" and "WebSearchTool" in e.message
    else:
        raise AssertionError("a hosted tool was wrapped as a function tool")
