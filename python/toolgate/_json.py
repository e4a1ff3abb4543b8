"""JSON text of host values, as the core will read it: compact, UTF-8, no NaN/Infinity. A value
that cannot be JSON (a cycle, a set, NaN, bytes that are not UTF-8) is reported, never guessed."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Optional, Union

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


class Unreadable:
    """Why a value has no JSON text (``detail`` goes into the refusal or error message)."""

    __slots__ = ("detail",)

    def __init__(self, detail: str) -> None:
        self.detail = detail


def json_text(value: Any) -> Union[str, Unreadable]:
    """``value`` as JSON text: ``str`` is taken as it is (already JSON text), ``bytes`` decoded
    as UTF-8, anything else serialized."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError as e:
            return Unreadable(f"the bytes are not UTF-8 ({e.reason})")
    try:
        return _encode(value)
    except (TypeError, ValueError, RecursionError) as e:
        return Unreadable(str(e)[:200])


def payload_text(value: Any, what: str) -> str:
    """JSON text of a payload given as text or a parsed value; ``E_PAYLOAD`` when there is none."""
    from ._errors import ToolGateError

    text = json_text(value)
    if isinstance(text, Unreadable):
        raise ToolGateError("E_PAYLOAD", f"{what}: cannot be read as JSON ({text.detail})")
    return text


def _integral(value: Any) -> Any:
    """``value`` with integral floats as integers (``10.0`` and ``10`` are one JSON number, as a
    client in JavaScript writes them back)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_integral(v) for v in value]
    return value


def canonical_digest(value: Any) -> Optional[str]:
    """SHA-256 (hex) of the canonical JSON of a parsed value (keys sorted, compact, integral
    numbers as integers), what the adapters bind a held confirmation to; ``None`` when the value
    has no JSON text (callers must treat ``None`` as equal to nothing)."""
    try:
        text = json.dumps(_integral(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError, OverflowError):
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
