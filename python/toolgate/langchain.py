"""LangChain / LangGraph adapter: the gate in front of a ``ToolNode``'s tools.

>>> from langgraph.prebuilt import ToolNode
>>> from toolgate.langchain import guarded_tool_node
>>> node = guarded_tool_node([search, read_file], gate, context={"subject": "ana"})  # doctest: +SKIP

Every call the model made is checked before its tool runs (``ToolNode(wrap_tool_call=…)``):

- allowed: the tool runs with the gate's exact (repaired) arguments;
- refused: the tool never runs; the model gets ``ToolMessage(status="error")`` whose content is
  the gate's model-readable message, so it can fix the call;
- confirm-before-write (a ``writes`` tool): the graph is interrupted (``interrupt`` with
  ``{"toolgate": {"tool", "summary", "expiresAt"}}``; needs a checkpointer). Resume with
  ``Command(resume=True)`` to approve — the gate confirms it (policy, loop and taint run again)
  and the tool runs — or with anything falsy to decline (an error ``ToolMessage``).

``context`` is the caller: a :class:`~toolgate.CallContext`, or a function of the
``ToolCallRequest`` (its ``state`` and ``runtime``). :func:`filter_tools` keeps only the tools a
caller could call, for ``bind_tools``.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Union

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import interrupt

from ._context import CallContext
from ._gate import ToolGate
from ._verdict import Verdict

ContextSource = Union[CallContext, Callable[[ToolCallRequest], CallContext], None]

__all__ = ["ToolGateWrapper", "guarded_tool_node", "filter_tools"]


DECLINED = "The user declined this call; it was not run."
"""What the model is told when the user declines a confirmation."""


def _refusal(call: Mapping[str, Any], message: Optional[str]) -> ToolMessage:
    return ToolMessage(content=message or "The call was not allowed.", name=call["name"], tool_call_id=call["id"], status="error")


class ToolGateWrapper:
    """A ``wrap_tool_call`` / ``awrap_tool_call`` pair for ``ToolNode`` (see the module docs)."""

    def __init__(self, gate: ToolGate, context: ContextSource = None) -> None:
        self.gate = gate
        self.context = context

    def _caller(self, request: ToolCallRequest) -> Dict[str, Any]:
        c = self.context(request) if callable(self.context) else self.context
        return dict(c) if c else {}

    @staticmethod
    def _approved(call: Mapping[str, Any], verdict: Verdict) -> bool:
        """Asks the user through a LangGraph interrupt (resumes with their answer)."""
        c = verdict.confirmation
        assert c is not None
        return bool(interrupt({"toolgate": {"tool": call["name"], "summary": c.summary, "expiresAt": c.expires_at}}))

    def _finish(self, request: ToolCallRequest, verdict: Verdict) -> Union[ToolCallRequest, ToolMessage]:
        """The request to execute (arguments replaced by the gate's), or the refusal."""
        if not verdict.allowed:
            return _refusal(request.tool_call, verdict.message)
        return request.override(tool_call={**request.tool_call, "args": dict(verdict.arguments or {})})

    def __call__(self, request: ToolCallRequest, execute: Callable[[ToolCallRequest], Any]) -> Any:
        """Sync wrapper: gate, then ``execute`` with the gate's arguments."""
        caller = self._caller(request)
        call = request.tool_call
        verdict = self.gate.check(call["name"], call.get("args"), {**caller, "call_id": call.get("id")})
        if verdict.outcome == "confirm" and verdict.confirmation is not None:
            if not self._approved(call, verdict):
                return _refusal(call, DECLINED)
            verdict = self.gate.confirm(verdict.confirmation.token, caller)
        decided = self._finish(request, verdict)
        return decided if isinstance(decided, ToolMessage) else execute(decided)

    async def awrap(self, request: ToolCallRequest, execute: Callable[[ToolCallRequest], Any]) -> Any:
        """Async wrapper (awaits asynchronous policy engines)."""
        caller = self._caller(request)
        call = request.tool_call
        verdict = await self.gate.acheck(call["name"], call.get("args"), {**caller, "call_id": call.get("id")})
        if verdict.outcome == "confirm" and verdict.confirmation is not None:
            if not self._approved(call, verdict):
                return _refusal(call, DECLINED)
            verdict = await self.gate.aconfirm(verdict.confirmation.token, caller)
        decided = self._finish(request, verdict)
        return decided if isinstance(decided, ToolMessage) else await execute(decided)


def guarded_tool_node(tools: Sequence[Union[BaseTool, Callable[..., Any]]], gate: ToolGate, context: ContextSource = None, **kwargs: Any) -> ToolNode:
    """A ``ToolNode`` over ``tools`` whose every call goes through ``gate`` first. ``kwargs`` go
    to ``ToolNode`` (``name``, ``handle_tool_errors`` …)."""
    wrapper = ToolGateWrapper(gate, context)
    return ToolNode(list(tools), wrap_tool_call=wrapper, awrap_tool_call=wrapper.awrap, **kwargs)


def filter_tools(tools: Sequence[Any], gate: ToolGate, context: Optional[CallContext] = None) -> list:
    """The tools of ``tools`` (instances, or OpenAI-format dicts) this caller could call — the
    caller's own objects, in order — for ``model.bind_tools``."""
    return list(gate.filter_tools(list(tools), "langchain", **(context or {})))
