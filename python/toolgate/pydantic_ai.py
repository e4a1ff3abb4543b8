"""Pydantic AI adapter: a capability that puts the gate in front of an agent's tools.

>>> from pydantic_ai import Agent
>>> from toolgate import ToolGate
>>> from toolgate.pydantic_ai import ToolGateCapability
>>> agent = Agent("test", capabilities=[ToolGateCapability(ToolGate.from_file("toolgate.yaml"))])  # doctest: +SKIP

What it does, per run:

- **lists** only the tools the gate lets this caller call (``prepare_tools``): undeclared tools
  and tools no policy rule could allow are never offered to the model;
- **checks every call before Pydantic AI validates it** (``before_tool_validate``), on the raw
  arguments the model sent: an allowed call runs with the gate's exact (repaired) arguments; a
  refused one becomes a Pydantic AI retry prompt (``ModelRetry``) carrying the gate's
  model-readable message, so the model can fix the call instead of the run failing;
- **confirm-before-write**: a ``writes`` tool is deferred for approval (``ApprovalRequired``,
  metadata ``{"toolgate": {"summary", "expiresAt"}}``); when the run is resumed with that call
  approved, the gate confirms it (policy, loop and taint run again) before it executes.

The caller (subject, roles, session …) is ``context``: a :class:`~toolgate.CallContext`, or a
function of the run's ``RunContext`` (e.g. reading ``ctx.deps``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Union

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ApprovalRequired, ModelRetry
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import RunContext, ToolDefinition

from ._context import CallContext
from ._gate import ToolGate
from ._verdict import Confirmation

ContextSource = Union[CallContext, Callable[[RunContext[Any]], CallContext], None]

__all__ = ["ToolGateCapability"]


@dataclass
class ToolGateCapability(AbstractCapability[Any]):
    """Guards a Pydantic AI agent's function tools with ``gate`` (see the module docs).

    ``context``: the caller, fixed or computed from the ``RunContext``. ``filter_tools``: hide
    tools this caller could never call (default ``True``).
    """

    gate: ToolGate
    context: ContextSource = None
    filter_tools: bool = True
    _pending: Dict[str, Confirmation] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def get_serialization_name(cls) -> Optional[str]:
        return None  # holds a live gate: not spec-serializable

    def _caller(self, ctx: RunContext[Any]) -> Dict[str, Any]:
        c = self.context(ctx) if callable(self.context) else self.context
        return dict(c) if c else {}

    async def prepare_tools(self, ctx: RunContext[Any], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        """Keeps only the tools this caller could call (by name; the core decides)."""
        if not self.filter_tools or not tool_defs:
            return tool_defs
        return self.gate.filter_tools(tool_defs, "pydantic-ai", **self._caller(ctx))

    async def before_tool_validate(self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Union[str, Dict[str, Any]]) -> Dict[str, Any]:
        """The gate's decision on the raw arguments: the exact arguments to validate and run, or
        ``ModelRetry`` with the gate's message."""
        caller = self._caller(ctx)
        verdict = await self.gate.acheck(call.tool_name, args, {**caller, "call_id": call.tool_call_id})
        if verdict.allowed:
            return verdict.arguments  # type: ignore[return-value]
        if verdict.outcome == "confirm" and verdict.confirmation is not None:
            if ctx.tool_call_approved:
                confirmed = await self.gate.aconfirm(verdict.confirmation.token, caller)
                if confirmed.allowed:
                    return confirmed.arguments  # type: ignore[return-value]
                raise ModelRetry(confirmed.message or "The call was not allowed.")
            self._pending[call.tool_call_id] = verdict.confirmation
            return args if isinstance(args, dict) else {}
        raise ModelRetry(verdict.message or "The call was not allowed.")

    async def before_tool_execute(self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Dict[str, Any]) -> Dict[str, Any]:
        """Defers a call awaiting confirmation (nothing runs until it is approved)."""
        pending = self._pending.pop(call.tool_call_id, None)
        if pending is not None:
            raise ApprovalRequired(metadata={"toolgate": {"summary": pending.summary, "expiresAt": pending.expires_at}})
        return args
