"""Verdicts as the core gives them: built from the native module's tuples, never decided here."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Tuple

Outcome = Literal["passed", "repaired", "rejected", "denied", "confirm"]
"""What the gate decided (the Node package's strings)."""

Reason = Literal[
    "unknown_tool", "bad_arguments", "surface", "invalid", "unresolved_resource", "arg_glob",
    "no_subject", "deny_rule", "no_rule", "engine", "loop", "taint", "audit_unavailable",
    "confirm_required", "token_invalid", "state_unavailable", "rate_limited",
]
"""Why a call was refused (closed set; pipeline order)."""


class Flag:
    """One change the gate made to the arguments. ``code`` is the stable flag code
    (``StringToInteger`` …), ``path`` a JSON Pointer into the arguments (``""``: the whole
    object), ``from_``/``to`` the value before and after (``None`` when absent: an injected
    default has no ``from_``, a pruned key no ``to``; :meth:`to_dict` tells absent from null)."""

    __slots__ = ("code", "path", "from_", "to", "_has_from", "_has_to")

    def __init__(self, code: str, path: str, has_from: bool, from_: Any, has_to: bool, to: Any) -> None:
        self.code = code
        self.path = path
        self.from_ = from_
        self.to = to
        self._has_from = has_from
        self._has_to = has_to

    def to_dict(self) -> Dict[str, Any]:
        """The flag as the Node package spells it: ``{"code", "path", "from"?, "to"?}``."""
        d: Dict[str, Any] = {"code": self.code, "path": self.path}
        if self._has_from:
            d["from"] = self.from_
        if self._has_to:
            d["to"] = self.to
        return d

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Flag) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"Flag({self.to_dict()!r})"


class Confirmation:
    """The host-only half of confirm-before-write: pass ``token`` to ``gate.confirm`` once the
    user approved ``summary``. Never shown to the model (it is in no message or feedback)."""

    __slots__ = ("token", "expires_at", "summary")

    def __init__(self, token: str, expires_at: str, summary: str) -> None:
        self.token = token
        self.expires_at = expires_at
        self.summary = summary

    def to_dict(self) -> Dict[str, str]:
        """``{"token", "expiresAt", "summary"}``, as the Node package spells it."""
        return {"token": self.token, "expiresAt": self.expires_at, "summary": self.summary}

    def __repr__(self) -> str:
        return f"Confirmation(expires_at={self.expires_at!r}, summary={self.summary!r})"


class Verdict:
    """The gate's answer for one call.

    ``allowed`` is true only for ``passed``/``repaired``; then ``arguments`` (a fresh ``dict``) and
    ``arguments_json`` (the caller's own text when nothing changed, else the repaired arguments
    serialized) are the exact arguments to run with. Otherwise both are ``None`` and ``message``
    (model-readable) and ``reason`` say why. ``flags`` lists every repair. ``action``/``resource``
    say what policy was asked; ``confirmation`` is set for outcome ``confirm`` only; ``receipt``
    when allowed and receipts are configured; ``shadow``/``would_be`` in shadow mode.
    """

    __slots__ = (
        "outcome", "allowed", "tool", "arguments", "arguments_json", "flags", "message", "reason",
        "action", "resource", "confirmation", "receipt", "shadow", "would_be",
    )

    outcome: Outcome
    allowed: bool
    tool: str
    arguments: Optional[Dict[str, Any]]
    arguments_json: Optional[str]
    flags: List[Flag]
    message: Optional[str]
    reason: Optional[Reason]
    action: Optional[str]
    resource: Optional[str]
    confirmation: Optional[Confirmation]
    receipt: Optional[str]
    shadow: bool
    would_be: Optional[Reason]

    def to_dict(self) -> Dict[str, Any]:
        """The verdict with the Node package's field names (``argumentsJson``, ``wouldBe`` …),
        absent fields left out: for logs, JSON answers and cross-binding comparisons."""
        d: Dict[str, Any] = {"outcome": self.outcome, "allowed": self.allowed, "tool": self.tool}
        if self.allowed:
            d["arguments"] = self.arguments
            d["argumentsJson"] = self.arguments_json
        d["flags"] = [f.to_dict() for f in self.flags]
        for key, value in (("message", self.message), ("reason", self.reason), ("action", self.action), ("resource", self.resource), ("receipt", self.receipt)):
            if value is not None:
                d[key] = value
        if self.confirmation is not None:
            d["confirmation"] = self.confirmation.to_dict()
        if self.shadow:
            d["shadow"] = True
            d["wouldBe"] = self.would_be
        return d

    def __repr__(self) -> str:
        extra = f", reason={self.reason!r}" if self.reason else f", arguments={self.arguments!r}"
        return f"{type(self).__name__}(tool={self.tool!r}, outcome={self.outcome!r}{extra})"


class TurnCall(Verdict):
    """A call of a turn and its verdict: a :class:`Verdict` plus ``call_id`` (the wire id as a
    string; ``"{index}"`` where the payload has none)."""

    __slots__ = ("call_id",)

    call_id: str

    def to_dict(self) -> Dict[str, Any]:
        """As :meth:`Verdict.to_dict`, with ``callId`` first."""
        return {"callId": self.call_id, **super().to_dict()}


NativeVerdict = Tuple[str, Optional[str], Optional[str], Any, Optional[str], list, Optional[tuple]]
"""What ``toolgate._native`` answers for one decision (see ``_native.pyi``)."""


def from_native(tool: str, t: NativeVerdict, text: Optional[str], engine_out: Optional[list] = None) -> Verdict:
    """Builds a :class:`Verdict` from the native tuple; ``text`` is the arguments text the
    caller sent (its own text is ``arguments_json`` when nothing changed). ``engine_out``
    receives the stage-one engine question, if any."""
    v = Verdict.__new__(Verdict)
    fill(v, tool, t, text, engine_out)
    return v


def fill(v: Verdict, tool: str, t: NativeVerdict, text: Optional[str], engine_out: Optional[list] = None) -> None:
    """Sets every field of ``v`` from the native tuple (shared by :class:`TurnCall` readers)."""
    outcome, reason, message, arguments, arguments_json, flags, facts = t
    v.outcome = outcome  # type: ignore[assignment]
    v.tool = tool
    v.allowed = arguments is not None
    v.arguments = arguments
    v.arguments_json = text if arguments is not None and arguments_json is None else arguments_json
    v.flags = [Flag(*f) for f in flags] if flags else []
    v.message = message
    v.reason = reason  # type: ignore[assignment]
    if facts is None:
        v.action = v.resource = v.confirmation = v.receipt = v.would_be = None
        v.shadow = False
        return
    action, resource, confirmation, receipt, shadow, would_be, engine = facts
    v.action = action
    v.resource = resource
    v.confirmation = Confirmation(*confirmation) if confirmation is not None else None
    v.receipt = receipt
    v.shadow = bool(shadow)
    v.would_be = would_be if shadow else None
    if engine_out is not None and engine is not None:
        engine_out.append(engine)
