"""A turn's report as the binding answers it (Python values built by
crates/toolgate-python/src/convert.rs from the core's report) wrapped into a :class:`TurnReport`.
Conversion only."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple, Union

from ._verdict import NativeVerdict, TurnCall, turn_call_from_native

_loads = json.loads


class AllowedCall:
    """A call that may run: its ``call_id``, ``tool`` and exact ``arguments``."""

    __slots__ = ("call_id", "tool", "arguments")

    def __init__(self, call_id: str, tool: str, arguments: Dict[str, Any]) -> None:
        self.call_id = call_id
        self.tool = tool
        self.arguments = arguments

    def to_dict(self) -> Dict[str, Any]:
        """``{"callId", "tool", "arguments"}``."""
        return {"callId": self.call_id, "tool": self.tool, "arguments": self.arguments}

    def __repr__(self) -> str:
        return f"AllowedCall(call_id={self.call_id!r}, tool={self.tool!r}, arguments={self.arguments!r})"


class TurnReport:
    """The answer for a whole model turn.

    ``calls``: every call in payload order (``[]`` for a text-only turn); ``allowed``: the calls
    to run, same order; ``payload``: the turn with repaired arguments written back (refused calls
    stay; the caller's own value when nothing was repaired); ``feedback``: the answers for refused
    and confirm calls, shaped and grouped as the dialect's API requires; ``provider_executed``:
    tools the provider ran itself (reported, not gated); ``turn_refusals``: refusals of the turn
    as a whole (``{"kind", "at", "message"}``: a call the model tried to make that cannot be read,
    such as Gemini ``MALFORMED_FUNCTION_CALL``; their answers are in ``feedback`` too). Confirmation
    tokens are never in ``payload`` or ``feedback``.
    """

    __slots__ = ("dialect", "calls", "allowed", "_payload", "_lazy", "feedback", "provider_executed", "turn_refusals")

    dialect: str
    calls: List[TurnCall]
    allowed: List[AllowedCall]
    feedback: List[Any]
    provider_executed: List[Dict[str, Any]]
    turn_refusals: List[Dict[str, str]]
    _payload: Any
    # what a payload not built yet is built from: the caller's payload, its text, the patches
    _lazy: Optional[Tuple[Any, str, List[Tuple[int, List[Union[str, int]], bool]]]]

    @property
    def payload(self) -> Any:
        """The turn with the repairs written in (see the class docs). Built when first read: most
        hosts run ``allowed`` and answer ``feedback`` and never pay for it."""
        lazy = self._lazy
        if lazy is not None:
            self._payload = _patched_payload(lazy[0], lazy[1], lazy[2], self.calls)
            self._lazy = None
        return self._payload

    @payload.setter
    def payload(self, value: Any) -> None:
        self._payload = value
        self._lazy = None

    def to_dict(self) -> Dict[str, Any]:
        """The report with the Node package's field names."""
        return {
            "dialect": self.dialect,
            "calls": [c.to_dict() for c in self.calls],
            "allowed": [a.to_dict() for a in self.allowed],
            "payload": self.payload,
            "feedback": self.feedback,
            "providerExecuted": self.provider_executed,
            "turnRefusals": self.turn_refusals,
        }

    def __repr__(self) -> str:
        return f"TurnReport(dialect={self.dialect!r}, calls={self.calls!r})"


def read_native_call(c: NativeCall) -> TurnCall:
    """One call as the binding answers it, ``(call_id, tool, verdict)`` (``turn_call_tuple`` in
    crates/toolgate-python/src/convert.rs)."""
    call_id, tool, vt = c
    return turn_call_from_native(call_id, tool, vt)


def read_native_report(t: NativeReport, original: Any, text: str) -> TurnReport:
    """``guard``'s report from the binding's values (``report_tuple`` in
    crates/toolgate-python/src/convert.rs); ``original`` is the payload as the caller gave it and
    ``text`` the JSON text decided on. The repairs are written into a fresh parse of ``text``
    when ``payload`` is first read (the caller's own value when there are none, parsed if it was
    text)."""
    r = _report_of(t)
    r._payload = None
    r._lazy = (original, text, t[2])
    return r


def read_stream_report(t: NativeReport) -> TurnReport:
    """A stream's report from the binding's values: it carries the payload the stream built
    (``None`` when it built none)."""
    r = _report_of(t)
    r._payload = t[6]
    r._lazy = None
    return r


def _report_of(t: NativeReport) -> TurnReport:
    dialect, calls, _patches, feedback, provider_executed, turn_refusals, _payload = t
    r = TurnReport.__new__(TurnReport)
    r.dialect = dialect
    r.calls = [read_native_call(c) for c in calls]
    r.allowed = _allowed(r.calls)
    r.feedback = feedback
    r.provider_executed = provider_executed
    r.turn_refusals = turn_refusals
    return r


def _allowed(calls: List[TurnCall]) -> List[AllowedCall]:
    return [AllowedCall(c.call_id, c.tool, c.arguments) for c in calls if c.allowed]  # type: ignore[arg-type]


NativeCall = Tuple[str, str, NativeVerdict]
"""A call as the binding answers it: ``(call_id, tool, verdict)``."""

NativeReport = Tuple[str, List[NativeCall], List[Tuple[int, List[Union[str, int]], bool]], List[Any], List[Dict[str, Any]], List[Dict[str, str]], Any]
"""What the binding's ``guard`` and a stream's ``end`` answer: ``(dialect, calls, patches,
feedback, provider_executed, turn_refusals, payload)``, each patch ``(call, path, as_text)``;
``payload`` is ``None`` for ``guard`` (the caller holds it)."""


def _patched_payload(original: Any, text: str, patches: List[Tuple[int, List[Union[str, int]], bool]], calls: List[TurnCall]) -> Any:
    """The payload with the core's repairs written in: the caller's own value when there are none
    (parsed, when it was text), else a fresh parse of the text the core read with each patch's
    call's ``arguments_json`` set at its path (as that text, or the value it holds)."""
    if not patches:
        if isinstance(original, (str, bytes, bytearray)):
            return _loads(text) if text else None
        return original
    root: Any = _loads(text)
    for call, path, as_text in patches:
        js = calls[call].arguments_json
        value = js if as_text else _loads(js)  # type: ignore[arg-type]
        if not path:
            root = value
            continue
        parent = root
        for seg in path[:-1]:
            parent = parent[seg]
        parent[path[-1]] = value
    return root
