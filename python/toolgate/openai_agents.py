"""OpenAI Agents SDK adapter: the gate in front of an agent's function tools.

>>> from agents import Agent
>>> from toolgate.openai_agents import guard_tools
>>> agent = Agent(name="a", tools=guard_tools([search, transfer], gate, context={"subject": "ana"}))  # doctest: +SKIP

:func:`guard_tools` returns copies of the ``FunctionTool`` objects whose ``on_invoke_tool`` asks the
gate first, on the raw argument text the model sent:

- allowed: the tool runs with the gate's exact (repaired) arguments;
- refused: the tool never runs; the gate's model-readable message is the tool's output, so the
  model can fix the call and the run goes on;
- confirm-before-write: tools the config marks ``writes`` get ``needs_approval``, so the run is
  interrupted for the user (``result.interruptions``; approve with ``RunState.approve``); an
  approved call is then confirmed by the gate (policy, loop and taint run again) before it runs,
  and a call the SDK never asked about is refused, not run.

``context`` is the caller: a :class:`~toolgate.CallContext`, or a function of the SDK's
``RunContextWrapper`` (e.g. reading ``ctx.context``, your app's context object).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, List, Sequence, Union

from agents import FunctionTool
from agents.run_context import RunContextWrapper
from agents.tool_context import ToolContext

from ._context import CallContext
from ._gate import ToolGate
from ._verdict import Verdict

ContextSource = Union[CallContext, Callable[[RunContextWrapper[Any]], CallContext], None]

__all__ = ["guard_tools", "guard_tool"]


def _caller(context: ContextSource, ctx: RunContextWrapper[Any]) -> Dict[str, Any]:
    c = context(ctx) if callable(context) else context
    return dict(c) if c else {}


def guard_tool(tool: FunctionTool, gate: ToolGate, context: ContextSource = None) -> FunctionTool:
    """One guarded copy of ``tool`` (see the module docs); the original is left as it was."""
    invoke = tool.on_invoke_tool
    name = tool.name
    asked: Dict[str, Verdict] = {}  # call id -> the confirm verdict the user was asked about
    original_approval = tool.needs_approval

    async def needs_approval(ctx: RunContextWrapper[Any], params: Dict[str, Any], call_id: str) -> bool:
        verdict = await gate.acheck(name, params, {**_caller(context, ctx), "call_id": call_id})
        if verdict.outcome == "confirm":
            asked[call_id] = verdict
            return True
        if callable(original_approval):
            return bool(await original_approval(ctx, params, call_id))
        return bool(original_approval)

    async def on_invoke_tool(ctx: ToolContext[Any], input_json: str) -> Any:
        caller = _caller(context, ctx)
        pending = asked.pop(ctx.tool_call_id, None)
        if pending is not None and pending.confirmation is not None:
            # the SDK invokes a call that needed approval only once the user approved it: the gate
            # confirms the call it asked about, and runs it with the arguments it approved then
            verdict = await gate.aconfirm(pending.confirmation.token, caller)
        else:
            verdict = await gate.acheck(name, input_json, {**caller, "call_id": ctx.tool_call_id})
        if not verdict.allowed:
            return verdict.message or "The call was not allowed."
        return await invoke(ctx, verdict.arguments_json or "{}")

    approval: Any = needs_approval if name in gate.writes_tools else original_approval
    return dataclasses.replace(tool, on_invoke_tool=on_invoke_tool, needs_approval=approval)


def guard_tools(tools: Sequence[Any], gate: ToolGate, context: ContextSource = None) -> List[Any]:
    """Guarded copies of the ``FunctionTool`` objects in ``tools`` this caller could call (with a
    fixed ``context``; with a function, every declared tool), in order; tools the gate does not
    declare are dropped, never offered to the model. Other tool kinds (hosted tools) are kept as
    they are when the gate lets the caller call their name."""
    if callable(context):  # the caller is known per run only: keep every declared tool
        kept = [t for t in tools if getattr(t, "name", None) in gate.tools]
    else:
        kept = gate.filter_tools(list(tools), "openai-responses", **(context or {}))
    return [guard_tool(t, gate, context) if isinstance(t, FunctionTool) else t for t in kept]
