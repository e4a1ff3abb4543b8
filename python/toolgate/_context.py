"""The caller's context (who is acting) as the JSON text the core reads. Unknown keys are sent
on, so the core names them (``E_CONFIG``): a typo such as ``role`` must not silently drop a role."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Literal, Mapping, Optional, Tuple, TypedDict

from . import _native
from ._errors import ToolGateError
from ._json import error_text


class CallContext(TypedDict, total=False):
    """Who is calling: supplied by the host, never by the model."""

    subject: str
    """Who is acting (end user / agent id)."""
    roles: List[str]
    """``roles`` in conditions and rules."""
    identity: Dict[str, Any]
    """``identity.*`` in conditions and pins."""
    purpose: str
    context: Dict[str, str]
    """``context.*`` in conditions."""
    session: str
    """Scope of loop and taint state (falls back to ``subject``)."""
    surface: Literal["visitor", "operator"]
    call_id: str
    """For ``check``: echoed in audit records and receipts."""


_RENAMED = {"call_id": "callId"}


def context_text(ctx: Optional[Mapping[str, Any]]) -> Optional[str]:
    """JSON text of ``ctx`` (``None`` values dropped; ``call_id`` spelled ``callId``), or
    ``None`` when it is empty."""
    if not ctx:
        return None
    if not isinstance(ctx, Mapping):
        raise ToolGateError("E_CONFIG", f"call context: expected a dict, got {type(ctx).__name__}")
    try:
        picked = {_RENAMED.get(k, k): v for k, v in ctx.items() if v is not None}
        if not picked:
            return None
        return json.dumps(picked, separators=(",", ":"), allow_nan=False)
    except RecursionError:
        raise ToolGateError("E_CONFIG", "call context: cannot be serialized to JSON (it is nested too deeply)") from None
    except (TypeError, ValueError) as e:
        raise ToolGateError("E_CONFIG", f"call context: cannot be serialized to JSON ({error_text(e)})") from None
    except Exception as e:  # a mapping whose items() raises, a value failing as it is read
        raise ToolGateError("E_CONFIG", f"call context: cannot be read (reading it raised {type(e).__name__}: {error_text(e)})") from None


class Caller:
    """A caller prepared once with :meth:`ToolGate.caller`: its context was read and checked
    then, so a decision made with it (``gate.check(tool, args, caller)``,
    ``gate.guard(payload, dialect, caller=caller)``) costs no serialization and no parse of the
    context. Reuse one per caller (per user, per session). It is a snapshot: later changes to the
    mapping it was prepared from are not seen. It may be used with any gate."""

    __slots__ = ("_native", "_text")

    def __init__(self, native: Any, text: Optional[str]) -> None:
        self._native = native
        self._text = text

    @property
    def context(self) -> Dict[str, Any]:
        """The context this caller was prepared from, as a fresh dict (what engines are shown;
        changing it changes nothing)."""
        return {} if self._text is None else dict(json.loads(self._text))

    def __repr__(self) -> str:
        return f"Caller({self.context!r})"


# A context's text (or its plain key, below) → the native caller read from it: a host passing
# the same context dict call after call has it read once, not on every call. Bounded: cleared
# when full, as Node's (src-ts/context.ts) is.
_SEEN_MAX = 512
_seen: Dict[Any, Any] = {}


def _remember(key: Any, c: Any) -> Any:
    if len(_seen) >= _SEEN_MAX:
        _seen.clear()
    _seen[key] = c
    return c


def _known(text: Optional[str]) -> Any:
    """The native caller read from ``text`` (``None`` for no context), read once per text while it
    is remembered. ``E_CONFIG`` when the text is not a valid context."""
    if text is None:
        return None
    c = _seen.get(text)
    return c if c is not None else _remember(text, _native.Caller(text))


def _plain_key(ctx: Any) -> Optional[Tuple[Any, ...]]:
    """A key two contexts share only when they make the same JSON text, built without making it
    (``json.dumps`` of a context is most of what a ``dict`` caller costs): for a ``dict`` with
    ``str`` keys holding only ``str``, ``None``, lists of ``str`` and ``dict``s of ``str`` to
    ``str`` — what a caller is usually made of — by exact type (``True`` and ``1`` are equal in
    Python and different in JSON), in item order; ``None`` for anything else, which is read
    through its text."""
    if type(ctx) is not dict:
        return None
    out = []
    for k, v in ctx.items():
        t = type(v)
        if type(k) is not str:
            return None
        if t is str:
            out.append((k, v))
        elif v is None:
            continue
        elif t is list and all(type(x) is str for x in v):
            out.append((k, ("[", *v)))
        elif t is dict and all(type(a) is str and type(b) is str for a, b in v.items()):
            out.append((k, ("{", *v.items())))
        else:
            return None
    return tuple(out)


def _context_caller(ctx: Any) -> Any:
    """The native caller of a context mapping (``None`` when empty): remembered by its plain key
    when it has one, else by its JSON text."""
    key = _plain_key(ctx)
    if key is None:
        return _known(context_text(ctx))
    c = _seen.get(key)
    if c is None:
        # remembered under the key alone: a text entry beside it would only halve the memory
        text = context_text(ctx)
        c = None if text is None else _remember(key, _native.Caller(text))
    return c


def caller_arg(ctx: Any) -> Any:
    """What the binding takes for the caller of a decision: a prepared :class:`Caller`'s native
    caller, else the native caller read from the context's JSON text (``None`` when empty)."""
    if isinstance(ctx, Caller):
        return native_caller(ctx)
    return _context_caller(ctx) if ctx else None


def native_caller(c: Caller) -> Any:
    """The native caller a :class:`Caller` holds; ``E_CONFIG`` for one not made by
    :meth:`ToolGate.caller` (built by hand, or its fields replaced), which holds none."""
    n = c._native
    if not isinstance(n, _native.Caller):
        raise ToolGateError("E_CONFIG", "caller: this Caller was not prepared by gate.caller(ctx); prepare one with it")
    return n


def keyword_caller(ctx: Mapping[str, Any]) -> Any:
    """:func:`caller_arg` of keyword arguments (``guard``, ``filter_tools``, ``stream``): the
    prepared ``caller=``, or the context fields. ``E_CONFIG`` when ``caller`` is not a
    :class:`Caller`, or when context fields are given beside it (one or the other)."""
    if "caller" not in ctx:
        return _context_caller(ctx)
    c = ctx["caller"]
    if not isinstance(c, Caller):
        raise ToolGateError("E_CONFIG", "caller: expected a Caller (from gate.caller(ctx))")
    for k, v in ctx.items():
        if k != "caller" and v is not None:
            raise ToolGateError("E_CONFIG", f"`caller` and the context field `{k}` were both given; put the whole context in the caller")
    return native_caller(c)


def plain_context(ctx: Any) -> Mapping[str, Any]:
    """The plain context of a mapping, keyword arguments or a prepared caller (what engines are shown)."""
    if isinstance(ctx, Caller):
        return ctx.context
    if isinstance(ctx, Mapping) and isinstance(ctx.get("caller"), Caller):
        return ctx["caller"].context
    return ctx or {}
