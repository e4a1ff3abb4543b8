"""MCP Python SDK adapter: the gate in front of a server's ``tools/call`` and ``tools/list``.

>>> from mcp.server.mcpserver import MCPServer
>>> from toolgate.mcp import guard_server
>>> server = MCPServer("files")  # doctest: +SKIP
>>> guard_server(server, gate, context={"subject": "ana"})  # doctest: +SKIP

- ``tools/call``: every call is checked before the tool runs; an allowed one runs with the gate's
  exact (repaired) arguments; a refused one never runs and is answered ``isError: true`` with the
  gate's model-readable message — a result the client's model can act on, not a protocol error;
- confirm-before-write (``MCPServer``): a ``writes`` tool asks the client's user through
  elicitation (``approve: bool``, with the call's summary); accepted with ``approve`` true, the
  gate confirms the call (policy, loop and taint run again) and it runs with the confirmed
  arguments; declined, cancelled, or a client that cannot be asked (no elicitation, or a
  2026-protocol connection, which has no server-to-client requests): refused, nothing runs;
- ``tools/list``: only the tools this caller could call are listed (undeclared tools never are;
  with a ``context`` function, ``MCPServer`` lists without a request, so every declared tool).

Two ways in:

- :func:`guard_server` for an ``MCPServer`` (the SDK's high-level server): wraps its public
  ``call_tool`` and ``list_tools`` methods on that instance;
- :func:`guard_call_tool` / :func:`guard_list_tools` for a low-level ``mcp.server.lowlevel.Server``:
  wrap the ``on_call_tool`` / ``on_list_tools`` handlers you pass to its constructor.

``context`` is the caller: a :class:`~toolgate.CallContext`, or a function of the SDK's request
context (``Context`` for ``MCPServer``, ``ServerRequestContext`` for the low-level server), e.g.
reading the verified access token.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Dict, Optional, Union

from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, TextContent
from pydantic import BaseModel

from ._context import CallContext
from ._gate import ToolGate
from ._verdict import Verdict

ContextSource = Union[CallContext, Callable[[Any], CallContext], None]

__all__ = ["guard_server", "guard_call_tool", "guard_list_tools", "refusal_result"]


def _caller(context: ContextSource, request_context: Any) -> Dict[str, Any]:
    c = context(request_context) if callable(context) else context
    return dict(c) if c else {}


def refusal_result(verdict: Verdict) -> CallToolResult:
    """The ``tools/call`` answer for a refused call: ``isError`` with the gate's message (never
    the confirmation token)."""
    return CallToolResult(content=[TextContent(type="text", text=verdict.message or "The call was not allowed.")], is_error=True)


class Approval(BaseModel):
    """What the user is asked for a ``writes`` call (MCP elicitation allows primitive fields)."""

    approve: bool


DECLINED = "The user declined this call; it was not run."
"""What the model is told when the user declines a confirmation."""


async def _ask_user(gate: ToolGate, verdict: Verdict, request_context: Any, caller: Dict[str, Any]) -> Optional[Verdict]:
    """Asks the client's user to approve a ``confirm`` verdict: the gate's verdict on confirming
    it, the unconfirmed verdict when the user cannot be asked, or ``None`` when they declined."""
    c = verdict.confirmation
    if c is None or request_context is None or not hasattr(request_context, "elicit"):
        return verdict
    try:
        answer = await request_context.elicit(f"Allow this call? {c.summary}", Approval)
    except Exception:  # the client cannot be asked: fail closed
        return verdict
    data = getattr(answer, "data", None)
    if getattr(answer, "action", None) != "accept" or not isinstance(data, Approval) or not data.approve:
        return None
    return await gate.aconfirm(c.token, caller)


def _visible(gate: ToolGate, tools: list, caller: Dict[str, Any]) -> list:
    return gate.filter_tools(tools, "mcp", **caller) if tools else tools


def guard_server(server: Any, gate: ToolGate, context: ContextSource = None) -> Any:
    """Puts ``gate`` in front of an ``MCPServer``'s tools (see the module docs); returns the
    server. Call it once, after the tools are registered or before — it wraps methods, not tools."""
    call_tool = server.call_tool
    list_tools = server.list_tools

    async def guarded_call_tool(name: str, arguments: Dict[str, Any], context_: Any = None) -> Any:
        caller = _caller(context, context_)
        verdict = await gate.acheck(name, arguments, caller)
        if verdict.outcome == "confirm":
            asked = await _ask_user(gate, verdict, context_, caller)
            if asked is None:
                return CallToolResult(content=[TextContent(type="text", text=DECLINED)], is_error=True)
            verdict = asked
        if not verdict.allowed:
            return refusal_result(verdict)
        return await call_tool(name, verdict.arguments, context_)

    async def guarded_list_tools() -> list:
        tools = list(await list_tools())
        if callable(context):  # MCPServer lists without a request context: declared tools only
            return [t for t in tools if t.name in gate.tools]
        return _visible(gate, tools, _caller(context, None))

    server.call_tool = guarded_call_tool
    server.list_tools = guarded_list_tools
    return server


def guard_call_tool(handler: Callable[[Any, CallToolRequestParams], Awaitable[Any]], gate: ToolGate, context: ContextSource = None) -> Callable[[Any, CallToolRequestParams], Awaitable[Any]]:
    """Wraps a low-level ``on_call_tool`` handler: the gate decides first; an allowed call reaches
    ``handler`` with its arguments replaced by the gate's."""

    async def on_call_tool(ctx: Any, params: CallToolRequestParams) -> Any:
        caller = _caller(context, ctx)
        verdict = await gate.acheck(params.name, params.arguments, caller)
        if not verdict.allowed:
            return refusal_result(verdict)
        return await handler(ctx, params.model_copy(update={"arguments": verdict.arguments}))

    return on_call_tool


def guard_list_tools(handler: Callable[[Any, Any], Awaitable[ListToolsResult]], gate: ToolGate, context: ContextSource = None) -> Callable[[Any, Any], Awaitable[ListToolsResult]]:
    """Wraps a low-level ``on_list_tools`` handler: only the tools this caller could call."""

    async def on_list_tools(ctx: Any, params: Optional[Any]) -> ListToolsResult:
        result = await handler(ctx, params)
        return result.model_copy(update={"tools": _visible(gate, list(result.tools), _caller(context, ctx))})

    return on_list_tools
