"""Verdicts as the core gives them: built from the native module's tuples, never decided here."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, TypeVar

from ._contract import FlagCode, Outcome, Reason  # noqa: F401  (re-exported: generated from the core's enums)


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

    Read-only; built once from the core's answer (fields are read from it on access, so a
    verdict costs one small object on the hot path).
    """

    __slots__ = ("tool", "_t", "_text", "_flags")

    tool: str
    """The tool the call asked for."""
    _t: "NativeVerdict"
    _text: Optional[str]
    _flags: Optional[List[Flag]]

    @property
    def outcome(self) -> Outcome:
        """``passed``, ``repaired``, ``rejected``, ``denied`` or ``confirm``."""
        return self._t[0]  # type: ignore[return-value]

    @property
    def allowed(self) -> bool:
        """Whether the call may run (``passed`` or ``repaired``)."""
        return self._t[3] is not None

    @property
    def arguments(self) -> Optional[Dict[str, Any]]:
        """Present iff allowed: the exact arguments to run with."""
        return self._t[3]

    @property
    def arguments_json(self) -> Optional[str]:
        """Present iff allowed: the caller's own text when nothing changed, else the arguments
        serialized."""
        text = self._t[4]
        return self._text if text is None and self._t[3] is not None else text

    @property
    def flags(self) -> List[Flag]:
        """One per change made, in the order made."""
        if self._flags is None:
            self._flags = [Flag(*f) for f in self._t[5]] if self._t[5] else []
        return self._flags

    @property
    def message(self) -> Optional[str]:
        """For refusals and ``confirm``: the model-readable message."""
        return self._t[2]

    @property
    def reason(self) -> Optional[Reason]:
        """For refusals and ``confirm``: why (closed set, see :data:`Reason`)."""
        return self._t[1]  # type: ignore[return-value]

    def _fact(self, i: int) -> Any:
        facts = self._t[6]
        return None if facts is None else facts[i]

    @property
    def action(self) -> Optional[str]:
        """What policy was asked (the tool's action), once the call reached policy."""
        return self._fact(0)

    @property
    def resource(self) -> Optional[str]:
        """The resolved resource, once the call reached policy and the tool declares one."""
        return self._fact(1)

    @property
    def confirmation(self) -> Optional[Confirmation]:
        """Outcome ``confirm`` only: the host-only token, its expiry and a summary."""
        c = self._fact(2)
        return None if c is None else Confirmation(*c)

    @property
    def receipt(self) -> Optional[str]:
        """Iff allowed and receipts are configured: the signed receipt (compact JWS)."""
        return self._fact(3)

    @property
    def shadow(self) -> bool:
        """Shadow mode: let through although enforcement would have refused it."""
        return bool(self._fact(4))

    @property
    def would_be(self) -> Optional[Reason]:
        """Shadow mode: the reason enforcement would have refused with."""
        return self._fact(5) if self._fact(4) else None

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
        confirmation = self.confirmation
        if confirmation is not None:
            d["confirmation"] = confirmation.to_dict()
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
"""What ``toolgate._native`` answers for one decision (see ``_native.pyi``): ``(outcome, reason,
message, arguments, arguments_json, flags, facts)``."""


def from_native(tool: str, t: NativeVerdict, text: Optional[str], engine_out: Optional[list] = None) -> Verdict:
    """A :class:`Verdict` over the native tuple; ``text`` is the arguments text the caller sent
    (its own text is ``arguments_json`` when nothing changed). ``engine_out`` receives the
    stage-one engine question, if any."""
    v = _over(Verdict.__new__(Verdict), tool, t, text)
    if engine_out is not None and t[6] is not None and t[6][6] is not None:
        engine_out.append(t[6][6])
    return v


def turn_call_from_native(call_id: str, tool: str, t: NativeVerdict) -> TurnCall:
    """A :class:`TurnCall` over the native tuple (a turn's call carries its own arguments text)."""
    v = _over(TurnCall.__new__(TurnCall), tool, t, t[4])
    v.call_id = call_id
    return v


_V = TypeVar("_V", bound=Verdict)


def _over(v: _V, tool: str, t: NativeVerdict, text: Optional[str]) -> _V:
    v.tool = tool
    v._t = t
    v._text = text
    v._flags = None
    return v
