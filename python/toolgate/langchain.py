"""LangChain / LangGraph adapter: the gate in front of a ``ToolNode``'s tools.

>>> from langgraph.prebuilt import ToolNode
>>> from toolgate.langchain import guarded_tool_node
>>> node = guarded_tool_node([search, read_file], gate, context={"subject": "ana"})  # doctest: +SKIP

Every call the model made is checked before its tool runs (``ToolNode(wrap_tool_call=…)``):

- allowed: the tool runs with the gate's exact (repaired) arguments;
- refused: the tool never runs; the model gets ``ToolMessage(status="error")`` whose content is
  the gate's model-readable message, so it can fix the call;
- confirm-before-write (a ``writes`` tool): the graph is interrupted (``interrupt`` with
  ``{"toolgate": {"question", "callId", "tool", "digest", "summary", "expiresAt"}}``; needs a
  checkpointer). Resume with :func:`approve` of that interrupt (``Command(resume=approve(i))``, or
  ``Command(resume={i.id: approve(i)})``) — the gate confirms it (policy, loop and taint run again)
  and the tool runs — or with :func:`decline` (an error ``ToolMessage``). Any other resume value
  (a bare ``True``, an answer for another call or another node) runs nothing: the node's calls
  still waiting for an answer are refused.

LangGraph re-runs the whole node on every resume and hands resume values out by the order in which
calls reach ``interrupt()``, which is timing for calls that run side by side. So the wrapper keeps
each call's settlement host-side, per node run (the task's checkpoint namespace) and call id: the
gate decides a call once, its confirmation token never leaves the host and stays the same on every
re-run, the tool runs at most once (a re-run answers with the result of the first run), and an
answer counts only for the call whose question it names (its ``question``, ``callId``, ``tool`` and
``digest``), wherever it sits in the resume values. This memory is the process's: a node resumed
in another process asks again (an answer to the earlier question refuses, never runs).

``context`` is the caller: a :class:`~toolgate.CallContext`, or a function of the
``ToolCallRequest`` (its ``state`` and ``runtime``). :func:`filter_tools` keeps only the tools a
caller could call, for ``bind_tools``.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any, Callable, Dict, Hashable, Iterator, Mapping, Optional, Sequence, Tuple, Union

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Interrupt, interrupt

from ._context import CallContext
from ._gate import ToolGate
from ._verdict import Verdict

ContextSource = Union[CallContext, Callable[[ToolCallRequest], CallContext], None]

__all__ = ["ToolGateWrapper", "guarded_tool_node", "filter_tools", "approve", "decline"]


DECLINED = "The user declined this call; it was not run."
"""What the model is told when the user declines a confirmation."""

NOT_ANSWERED = "The answer given for the confirmation was not for this call, so it was not run."
"""What the model is told when the resume value does not name this call's question."""

SAME_ID = "Another call of this turn has the same id, so this one was not run."
"""What the model is told for a call whose id another call of the node run already holds."""

FAILED = "This call ran once and failed; it is not run again."
"""What a re-run of the node answers for a call whose tool raised on an earlier pass."""

MAX_RUNS = 10_000
"""The node runs whose calls are remembered; past it the oldest run with no question waiting is
forgotten (or, when every one is waiting, the oldest)."""

_IDENTITY = ("question", "callId", "tool", "digest")
"""What an answer must repeat of its question: the question's own id (random, host-side), the call
id, the tool and the digest of the call."""


def _refusal(call: Mapping[str, Any], message: Optional[str]) -> ToolMessage:
    return ToolMessage(content=message or "The call was not allowed.", name=call["name"], tool_call_id=call["id"], status="error")


def _digest(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _answer(question: Union[Interrupt, Mapping[str, Any]], approved: bool) -> Dict[str, Any]:
    value = question.value if isinstance(question, Interrupt) else question
    asked = value.get("toolgate") if isinstance(value, Mapping) else None
    if not isinstance(asked, Mapping) or "question" not in asked:
        raise ValueError("not a toolgate confirmation (expected an interrupt whose value holds `toolgate`)")
    return {"toolgate": {**{k: asked.get(k) for k in _IDENTITY}, "approved": approved}}


def approve(question: Union[Interrupt, Mapping[str, Any]]) -> Dict[str, Any]:
    """The resume value approving the call a toolgate interrupt asked about (the ``Interrupt`` or
    its ``value``): ``Command(resume={question.id: approve(question)})``. It names that call, so
    it approves no other."""
    return _answer(question, True)


def decline(question: Union[Interrupt, Mapping[str, Any]]) -> Dict[str, Any]:
    """The resume value declining the call a toolgate interrupt asked about."""
    return _answer(question, False)


_UNSET: Any = object()


class _Call:
    """One call of one node run, across the node's re-runs."""

    __slots__ = ("ident", "busy", "verdict", "question", "answer", "confirmed", "result")

    def __init__(self, ident: str) -> None:
        self.ident = ident  # the call as the model sent it (tool and arguments)
        self.busy = False  # a pass is handling it now
        self.verdict: Optional[Verdict] = None  # the gate's decision (``check``), made once
        self.question: Optional[Dict[str, Any]] = None  # what the user is asked (confirm outcome)
        self.answer: Optional[Any] = None  # True / False: the user's answer; else not for it
        self.confirmed: Optional[Verdict] = None  # the gate's ``confirm``, made once
        self.result: Any = _UNSET  # what every later pass answers

    def settle(self, result: Any) -> Any:
        self.result = result
        return result


class _Run:
    """One run of the node (a task: its checkpoint namespace), across its re-runs."""

    __slots__ = ("calls", "spoiled")

    def __init__(self) -> None:
        self.calls: Dict[Any, _Call] = {}
        self.spoiled = False  # a resume value answered no question of this run

    def waiting(self) -> bool:
        return any(c.question is not None and c.result is _UNSET for c in self.calls.values())


class ToolGateWrapper:
    """A ``wrap_tool_call`` / ``awrap_tool_call`` pair for ``ToolNode`` (see the module docs)."""

    def __init__(self, gate: ToolGate, context: ContextSource = None) -> None:
        self.gate = gate
        self.context = context
        self._lock = threading.Lock()
        self._runs: "OrderedDict[Hashable, _Run]" = OrderedDict()

    def _caller(self, request: ToolCallRequest) -> Dict[str, Any]:
        c = self.context(request) if callable(self.context) else self.context
        return dict(c) if c else {}

    def _run(self, request: ToolCallRequest) -> _Run:
        """The node run this call belongs to (under the lock): the same on every re-run."""
        conf = (getattr(getattr(request, "runtime", None), "config", None) or {}).get("configurable") or {}
        ns = conf.get("checkpoint_ns")
        if not ns:
            return _Run()  # not inside a graph: nothing is re-run, nothing to remember
        key = (conf.get("thread_id"), ns)
        run = self._runs.get(key)
        if run is None:
            if len(self._runs) >= MAX_RUNS:
                old = next((k for k, r in self._runs.items() if not r.waiting()), next(iter(self._runs)))
                del self._runs[old]
            run = self._runs[key] = _Run()
        self._runs.move_to_end(key)
        return run

    @contextmanager
    def _claim(self, request: ToolCallRequest) -> Iterator[Tuple[_Run, _Call]]:
        """This pass's hold on the call's record (a refusal when another call holds its id)."""
        call = request.tool_call
        ident = _digest(call["name"], call.get("args"))
        with self._lock:
            run = self._run(request)
            rec = run.calls.setdefault(call.get("id"), _Call(ident))
            if rec.busy or rec.ident != ident:
                rec = _Call(ident)
                rec.settle(_refusal(call, SAME_ID))
            else:
                rec.busy = True
        try:
            yield run, rec
        finally:
            rec.busy = False

    def _question(self, call: Mapping[str, Any], verdict: Verdict) -> Dict[str, Any]:
        c = verdict.confirmation
        assert c is not None
        return {
            "question": secrets.token_hex(16),
            "callId": call.get("id"),
            "tool": call["name"],
            "digest": _digest(call["name"], call.get("args"), c.summary),
            "summary": c.summary,
            "expiresAt": c.expires_at,
        }

    def _take(self, run: _Run, value: Any) -> None:
        """Files one resume value under the question it names (under the lock)."""
        given = value.get("toolgate") if isinstance(value, Mapping) else None
        rec = None
        if isinstance(given, Mapping):
            rec = next((r for r in run.calls.values() if r.question is not None and r.question["question"] == given.get("question")), None)
        if rec is None:
            run.spoiled = True
        elif rec.answer is None:  # earlier passes' answers come back on every re-run
            same = all(given.get(k) == rec.question[k] for k in _IDENTITY)  # type: ignore[index, union-attr]
            approved = given.get("approved")  # type: ignore[union-attr]
            rec.answer = approved if same and isinstance(approved, bool) else "other"

    def _approved(self, run: _Run, rec: _Call, call: Mapping[str, Any]) -> bool:
        """Whether the user approved this call (asking them through a LangGraph interrupt, which
        raises until an answer comes). A decline or an answer for anything else settles it refused."""
        assert rec.verdict is not None
        with self._lock:  # one at a time: each value is seen, in order, before anyone asks again
            if rec.question is None:
                rec.question = self._question(call, rec.verdict)
            while rec.answer is None and not run.spoiled:
                self._take(run, interrupt({"toolgate": dict(rec.question)}))
        if rec.answer is True:
            return True
        rec.settle(_refusal(call, DECLINED if rec.answer is False else NOT_ANSWERED))
        return False

    def _confirming(self, run: _Run, rec: _Call, call: Mapping[str, Any]) -> bool:
        """Whether the gate must confirm the call now (approved, not confirmed on an earlier pass)."""
        v = rec.verdict
        if v is None or v.outcome != "confirm" or v.confirmation is None or rec.confirmed is not None:
            return False
        return self._approved(run, rec, call)

    def _decided(self, request: ToolCallRequest, rec: _Call) -> Tuple[bool, Any]:
        """``(True, answer)`` for a settled call (now or on an earlier pass: a refusal, a tool's
        result), else ``(False, the request to execute)`` with the gate's arguments."""
        if rec.result is not _UNSET:
            return True, rec.result
        verdict = rec.confirmed or rec.verdict
        assert verdict is not None
        if not verdict.allowed:
            return True, rec.settle(_refusal(request.tool_call, verdict.message))
        return False, request.override(tool_call={**request.tool_call, "args": dict(verdict.arguments or {})})

    @contextmanager
    def _running(self, rec: _Call, call: Mapping[str, Any]) -> Iterator[None]:
        """A tool that raised (not an interrupt of its own) is not run again on a re-run."""
        try:
            yield
        except GraphBubbleUp:
            raise
        except BaseException:
            rec.settle(_refusal(call, FAILED))
            raise

    def __call__(self, request: ToolCallRequest, execute: Callable[[ToolCallRequest], Any]) -> Any:
        """Sync wrapper: gate, then ``execute`` with the gate's arguments."""
        caller = self._caller(request)
        call = request.tool_call
        with self._claim(request) as (run, rec):
            if rec.result is _UNSET and rec.verdict is None:
                rec.verdict = self.gate.check(call["name"], call.get("args"), {**caller, "call_id": call.get("id")})
            if rec.result is _UNSET and self._confirming(run, rec, call):
                rec.confirmed = self.gate.confirm(rec.verdict.confirmation.token, caller)  # type: ignore[union-attr]
            settled, decided = self._decided(request, rec)
            if settled:
                return decided
            with self._running(rec, call):
                return rec.settle(execute(decided))

    async def awrap(self, request: ToolCallRequest, execute: Callable[[ToolCallRequest], Any]) -> Any:
        """Async wrapper (awaits asynchronous policy engines)."""
        caller = self._caller(request)
        call = request.tool_call
        with self._claim(request) as (run, rec):
            if rec.result is _UNSET and rec.verdict is None:
                rec.verdict = await self.gate.acheck(call["name"], call.get("args"), {**caller, "call_id": call.get("id")})
            if rec.result is _UNSET and self._confirming(run, rec, call):
                rec.confirmed = await self.gate.aconfirm(rec.verdict.confirmation.token, caller)  # type: ignore[union-attr]
            settled, decided = self._decided(request, rec)
            if settled:
                return decided
            with self._running(rec, call):
                return rec.settle(await execute(decided))


def guarded_tool_node(tools: Sequence[Union[BaseTool, Callable[..., Any]]], gate: ToolGate, context: ContextSource = None, **kwargs: Any) -> ToolNode:
    """A ``ToolNode`` over ``tools`` whose every call goes through ``gate`` first. ``kwargs`` go
    to ``ToolNode`` (``name``, ``handle_tool_errors`` …)."""
    wrapper = ToolGateWrapper(gate, context)
    return ToolNode(list(tools), wrap_tool_call=wrapper, awrap_tool_call=wrapper.awrap, **kwargs)


def filter_tools(tools: Sequence[Any], gate: ToolGate, context: Optional[CallContext] = None) -> list:
    """The tools of ``tools`` (instances, or OpenAI-format dicts) this caller could call — the
    caller's own objects, in order — for ``model.bind_tools``."""
    return list(gate.filter_tools(list(tools), "langchain", **(context or {})))
