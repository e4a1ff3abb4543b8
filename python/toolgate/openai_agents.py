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
  with the arguments the gate confirmed.

The confirmation token stays on the host, in the guarded tool, bound to the exact call it was
issued for: its call id, its arguments (the canonical JSON of what the SDK parsed) and the caller
— by value, as no object of the SDK's lives from the question to the resumed run (``to_state``
copies the run's context and items). It is taken once, and only for a call the SDK says the user approved on its own in this run
(``RunState.approve(item)``): the call id alone never finds it (the model writes ids, and may
reuse one in a later run). Anything else is decided afresh, as a new call, so a call needing
confirmation is refused (never run): a call the SDK runs without asking (an "always approve"
decision, ``always_approve=True``, approves calls nobody was shown), an approved call whose
arguments or caller differ from the call the user was shown, a call the gate refused, a second
use. A call with the same id invoked any other way drops what was held for that id and caller
(the call the user was shown was rejected, or is not this one). At most 1,024 calls per guarded
tool are held awaiting approval (oldest dropped first: its approval is then refused); asking about
the same call again replaces what was held for it. Approval is bound to this process and guarded
tool: resume on the agent that was interrupted.

``context`` is the caller: a :class:`~toolgate.CallContext`, or a function of the SDK's
``RunContextWrapper`` (e.g. reading ``ctx.context``, your app's context object).
"""

from __future__ import annotations

import dataclasses
import json
import threading
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from agents import FunctionTool
from agents.run_context import RunContextWrapper
from agents.tool import (
    ApplyPatchTool,
    CodeInterpreterTool,
    ComputerTool,
    CustomTool,
    FileSearchTool,
    HostedMCPTool,
    ImageGenerationTool,
    LocalShellTool,
    ProgrammaticToolCallingTool,
    ShellTool,
    ToolSearchTool,
    WebSearchTool,
)
from agents.tool_context import ToolContext

from ._context import CallContext
from ._errors import ToolGateError
from ._gate import ToolGate
from ._json import canonical_digest
from ._verdict import Verdict

ContextSource = Union[CallContext, Callable[[RunContextWrapper[Any]], CallContext], None]

__all__ = ["guard_tools", "guard_tool"]

_HELD_CAP = 1024
"""Calls held awaiting approval per guarded tool (oldest dropped first: its approval is refused)."""

_Key = Tuple[str, str, str]  # call id, caller, arguments (digests of their canonical JSON)


def _caller(context: ContextSource, ctx: RunContextWrapper[Any]) -> Dict[str, Any]:
    c = context(ctx) if callable(context) else context
    return dict(c) if c else {}


def _key(call_id: str, caller: Dict[str, Any], arguments: Any) -> Optional[_Key]:
    """What a held confirmation is bound to: the call id, the caller and the parsed arguments
    (the SDK's ``needs_approval`` gets them parsed with ``json.loads``; ``on_invoke_tool`` gets
    the text, parsed here the same way)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    who, args = canonical_digest(caller), canonical_digest(arguments)
    if who is None or args is None or not isinstance(arguments, dict):
        return None
    return (call_id, who, args)


class _Held:
    """Confirm verdicts of calls the user is being asked about, each bound to its exact call
    (:func:`_key`): taken once; bounded; safe across threads and runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: "OrderedDict[_Key, Verdict]" = OrderedDict()

    def put(self, key: _Key, verdict: Verdict) -> None:
        with self._lock:
            self._calls.pop(key, None)  # the same call asked about again: the newest ask holds it
            self._calls[key] = verdict
            while len(self._calls) > _HELD_CAP:
                self._calls.popitem(last=False)

    def take(self, key: _Key) -> Optional[Verdict]:
        with self._lock:
            return self._calls.pop(key, None)

    def forget(self, call_id: str, who: str) -> None:
        """Drops what is held for this call id and caller, whatever its arguments."""
        with self._lock:
            for k in [k for k in self._calls if k[0] == call_id and k[1] == who]:
                del self._calls[k]


def _approved_on_its_own(ctx: ToolContext[Any], name: str, call_id: str) -> bool:
    """Whether the SDK records, in this run, the user's approval of this very call: approved by
    its id (``RunState.approve(item)``), not through an "always approve" decision for the tool,
    which would also approve calls nobody was shown. Probed with the SDK's public
    ``is_tool_approved``: an id no call has (a fresh random one) is approved only by such a
    decision. Anything unexpected answers False (the call is then decided afresh)."""
    try:
        if ctx.is_tool_approved(name, call_id) is not True:
            return False
        return ctx.is_tool_approved(name, f"toolgate-probe-{uuid.uuid4().hex}") is not True
    except Exception:  # an SDK that cannot answer: no approval is assumed
        return False


_PROVIDER_RUN = (
    FileSearchTool,
    WebSearchTool,
    HostedMCPTool,
    CodeInterpreterTool,
    ImageGenerationTool,
    ToolSearchTool,  # a client-executed search is refused by the runner itself (ModelBehaviorError)
    ProgrammaticToolCallingTool,
)
"""Tools the provider runs: the SDK runs nothing of their calls in this process."""

_HOSTED_SHELL = ("container_auto", "container_reference")
"""The shell environments the provider hosts (any other, and none, is a local shell)."""

_USE_FUNCTION_TOOL = "Expose what it does as a function tool (``@function_tool``), whose every call the gate decides, or leave it off the agent"


def _ungateable(tool: Any) -> Optional[str]:
    """Why the SDK would run ``tool``'s calls in this process without asking the gate (and what
    to do instead), or None when it cannot: a ``FunctionTool`` (gated) or a tool the provider
    runs (passed through). Unknown tool kinds are refused: the gate would never see their calls."""
    if isinstance(tool, FunctionTool) or isinstance(tool, _PROVIDER_RUN):
        return None
    if isinstance(tool, ShellTool):
        env: Mapping[str, Any] = tool.environment if isinstance(tool.environment, Mapping) else {}
        if env.get("type") in _HOSTED_SHELL:
            return None
        return f"runs the model's commands in this process (a shell with environment `{env.get('type', 'local')}`). {_USE_FUNCTION_TOOL} (a shell in a hosted container, environment type `container_auto`, is passed through)"
    if isinstance(tool, LocalShellTool):
        return f"runs the model's commands in this process (a local shell). {_USE_FUNCTION_TOOL}"
    if isinstance(tool, ComputerTool):
        return f"drives a computer from this process. {_USE_FUNCTION_TOOL}"
    if isinstance(tool, ApplyPatchTool):
        return f"edits files from this process (its `editor`). {_USE_FUNCTION_TOOL}"
    if isinstance(tool, CustomTool):
        return f"runs its `on_invoke_tool` on the model's raw text in this process. {_USE_FUNCTION_TOOL}"
    return f"is a tool kind toolgate does not know, which the SDK may run in this process. {_USE_FUNCTION_TOOL}"


def _refuse_ungateable(tools: Sequence[Any], where: str) -> None:
    """``E_CONFIG`` for the first of ``tools`` whose calls the SDK would run here unchecked, naming it."""
    for i, tool in enumerate(tools):
        why = _ungateable(tool)
        if why is not None:
            name = getattr(tool, "name", None)
            named = f"`{name}` " if isinstance(name, str) else ""
            raise ToolGateError("E_CONFIG", f"{where}: tools[{i}] {named}({type(tool).__name__}) {why}; the gate cannot decide its calls, and the SDK would run every one the model sends without asking it")


def guard_tool(tool: FunctionTool, gate: ToolGate, context: ContextSource = None) -> FunctionTool:
    """One guarded copy of ``tool`` (see the module docs); the original is left as it was.
    ``E_CONFIG`` when ``tool`` is not a ``FunctionTool``."""
    if not isinstance(tool, FunctionTool):
        raise ToolGateError("E_CONFIG", f"guard_tool: expected a FunctionTool (what `@function_tool` makes), got {type(tool).__name__}")
    invoke = tool.on_invoke_tool
    name = tool.name
    held = _Held()  # the confirm verdicts of calls the user is asked about, by exact call
    original_approval = tool.needs_approval

    async def needs_approval(ctx: RunContextWrapper[Any], params: Dict[str, Any], call_id: str) -> bool:
        caller = _caller(context, ctx)
        verdict = await gate.acheck(name, params, {**caller, "call_id": call_id})
        if verdict.outcome == "confirm":
            key = _key(call_id, caller, params)
            if key is not None and verdict.confirmation is not None:
                held.put(key, verdict)
            return True  # nothing held (no key): the approved call is decided afresh, so refused
        if callable(original_approval):
            return bool(await original_approval(ctx, params, call_id))
        return bool(original_approval)

    async def on_invoke_tool(ctx: ToolContext[Any], input_json: str) -> Any:
        caller = _caller(context, ctx)
        call_id = str(getattr(ctx, "tool_call_id", "") or "")
        key = _key(call_id, caller, input_json)
        pending = held.take(key) if key is not None and _approved_on_its_own(ctx, name, call_id) else None
        if pending is not None and pending.confirmation is not None:
            # the very call the user was shown and approved: the gate confirms the call it asked
            # about, and it runs with the arguments confirmed (policy, loop and taint run again)
            verdict = await gate.aconfirm(pending.confirmation.token, caller)
        else:
            # any other call with this id: the one the user was shown was rejected, or is not
            # this one; what was held for it is dropped, and this call is decided as a new one
            who = canonical_digest(caller)
            if who is not None:
                held.forget(call_id, who)
            verdict = await gate.acheck(name, input_json, {**caller, "call_id": call_id})
        if not verdict.allowed:
            return verdict.message or "The call was not allowed."
        return await invoke(ctx, verdict.arguments_json or "{}")

    approval: Any = needs_approval if name in gate.writes_tools else original_approval
    return dataclasses.replace(tool, on_invoke_tool=on_invoke_tool, needs_approval=approval)


def guard_tools(tools: Sequence[Any], gate: ToolGate, context: ContextSource = None) -> List[Any]:
    """Guarded copies of the ``FunctionTool`` objects in ``tools`` this caller could call (with a
    fixed ``context``; with a function, every declared tool), in order; tools the gate does not
    declare are dropped, never offered to the model. Tools the provider runs (web and file search,
    code interpreter, image generation, hosted MCP, tool search, programmatic tool calling, a
    ``ShellTool`` in a hosted container) are kept as they are when the gate lets the caller call
    their name.

    Fails closed: a tool the SDK runs in this process with no ``FunctionTool`` to wrap (a local
    ``ShellTool``, ``LocalShellTool``, ``ComputerTool``, ``ApplyPatchTool``, ``CustomTool``) and any
    tool kind toolgate does not know is ``E_CONFIG``, naming it, before any tool is guarded: the
    SDK would run every call of it the model sends, and the gate would never see one."""
    _refuse_ungateable(tools, "guard_tools")
    if callable(context):  # the caller is known per run only: keep every declared tool
        kept = [t for t in tools if getattr(t, "name", None) in gate.tools]
    else:
        kept = gate.filter_tools(list(tools), "openai-responses", **(context or {}))
    return [guard_tool(t, gate, context) if isinstance(t, FunctionTool) else t for t in kept]
