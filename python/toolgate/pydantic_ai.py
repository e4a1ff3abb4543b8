"""Pydantic AI adapter: a capability that puts the gate in front of an agent's tools.

>>> from pydantic_ai import Agent
>>> from toolgate import ToolGate
>>> from toolgate.pydantic_ai import ToolGateCapability
>>> agent = Agent("test", capabilities=[ToolGateCapability(ToolGate.from_file("toolgate.yaml"))])  # doctest: +SKIP

What it does, per run:

- **lists** only the tools the gate lets this caller call (``prepare_tools``): undeclared tools
  and tools no policy rule could allow are never offered to the model;
- **decides every call before Pydantic AI validates it** (``wrap_tool_validate``), on the raw
  arguments the model sent: an allowed call is validated and run with the gate's exact (repaired)
  arguments; a refused one becomes a Pydantic AI retry prompt (``ModelRetry``) carrying the gate's
  model-readable message, so the model can fix the call instead of the run failing. The decision,
  the validation and a deferral happen in one hook call, so nothing is handed from one call (or
  one run) to another through shared state;
- **confirm-before-write**: a ``writes`` tool is deferred for approval (``ApprovalRequired``,
  metadata ``{"toolgate": {"summary", "expiresAt"}}``); the confirmation token stays on the host,
  in this capability, bound to that exact call (caller, tool, call id and the canonical digest of
  its arguments). When the run is resumed with that call approved, the gate confirms that token
  (policy, loop and taint run again) and the tool runs with the arguments the gate confirmed. An
  approved call whose arguments (or caller) differ from the call that was deferred — history or
  ``override_args`` edited by a client — is a new call: decided again and, for a ``writes`` tool,
  deferred again for its own approval. Approval is bound to this process: resume on the agent
  (the capability instance) that deferred the call.

The caller (subject, roles, session …) is ``context``: a :class:`~toolgate.CallContext`, or a
function of the run's ``RunContext`` (e.g. reading ``ctx.deps``).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from pydantic_ai.capabilities import AbstractCapability, WrapToolValidateHandler
from pydantic_ai.exceptions import ApprovalRequired, ModelRetry
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import RunContext, ToolDefinition

from ._context import CallContext
from ._gate import ToolGate
from ._json import canonical_digest
from ._verdict import Confirmation

ContextSource = Union[CallContext, Callable[[RunContext[Any]], CallContext], None]

__all__ = ["ToolGateCapability"]

_AWAITING_CAP = 10_000
"""Deferred calls kept awaiting approval (oldest dropped first: their approval then asks again)."""

_Key = Tuple[str, str, str, str]


def _args_digest(args: Union[str, Dict[str, Any], None]) -> Optional[str]:
    """:func:`canonical_digest` of a call's arguments, given as the model's text or a parsed value
    (``None`` or blank text: ``{}``); ``None`` when they have none (never equal to anything)."""
    value: Any = args if args is not None else {}
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except (ValueError, RecursionError):
            return None
    return canonical_digest(value)


class _Awaiting:
    """Confirmations of deferred calls, kept on the host until the run resumes: each is taken once,
    and only for the exact call it was issued for. Bounded; safe across threads and runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: "OrderedDict[_Key, List[Confirmation]]" = OrderedDict()
        self._size = 0

    def put(self, key: _Key, confirmation: Confirmation) -> None:
        with self._lock:
            self._calls.setdefault(key, []).append(confirmation)
            self._calls.move_to_end(key)
            self._size += 1
            while self._size > _AWAITING_CAP:
                oldest = next(iter(self._calls))
                held = self._calls[oldest]
                held.pop(0)
                self._size -= 1
                if not held:
                    del self._calls[oldest]

    def take(self, key: _Key) -> Optional[Confirmation]:
        with self._lock:
            held = self._calls.get(key)
            if not held:
                return None
            confirmation = held.pop(0)
            self._size -= 1
            if not held:
                del self._calls[key]
            return confirmation


@dataclass
class ToolGateCapability(AbstractCapability[Any]):
    """Guards a Pydantic AI agent's function tools with ``gate`` (see the module docs).

    ``context``: the caller, fixed or computed from the ``RunContext``. ``filter_tools``: hide
    tools this caller could never call (default ``True``).
    """

    gate: ToolGate
    context: ContextSource = None
    filter_tools: bool = True
    _awaiting: _Awaiting = field(default_factory=_Awaiting, init=False, repr=False)

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

    async def wrap_tool_validate(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: Union[str, Dict[str, Any]],
        handler: WrapToolValidateHandler,
    ) -> Dict[str, Any]:
        """The gate's decision on the raw arguments: the gate's exact arguments validated (and then
        run), the call deferred for approval, or ``ModelRetry`` with the gate's message."""
        caller = self._caller(ctx)
        digest = _args_digest(args)
        who = caller.get("session") or caller.get("subject") or ""
        key: Optional[_Key] = (str(who), call.tool_name, call.tool_call_id, digest) if digest is not None else None
        if ctx.tool_call_approved and key is not None:
            # the approval is for the call that was deferred: its own token, its exact arguments
            confirmation = self._awaiting.take(key)
            if confirmation is not None:
                confirmed = await self.gate.aconfirm(confirmation.token, caller)
                if confirmed.allowed and confirmed.arguments is not None and confirmed.tool == call.tool_name:
                    return await handler(confirmed.arguments)
                raise ModelRetry(confirmed.message or "The call was not allowed.")
        # a new call — or an approved one that is not the call deferred (other arguments, another
        # caller): decided as a new call, so a `writes` tool waits for its own approval
        verdict = await self.gate.acheck(call.tool_name, args, {**caller, "call_id": call.tool_call_id})
        if verdict.allowed and verdict.arguments is not None:
            return await handler(verdict.arguments)
        if verdict.outcome == "confirm" and verdict.confirmation is not None and key is not None:
            # Pydantic AI defers only a validated call; nothing runs until it is approved, and then
            # only with the arguments the gate confirms
            await handler(args)
            pending = verdict.confirmation
            self._awaiting.put(key, pending)
            raise ApprovalRequired(metadata={"toolgate": {"summary": pending.summary, "expiresAt": pending.expires_at}})
        raise ModelRetry(verdict.message or "The call was not allowed.")
