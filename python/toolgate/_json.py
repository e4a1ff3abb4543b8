"""JSON text of host values, as the core will read it: compact, UTF-8, no NaN/Infinity. A value
that cannot be JSON (a cycle, a set, NaN, bytes that are not UTF-8) is reported, never guessed.
The reasons given are the Node package's words where Node has the same case (``jsonText`` in
``src-ts/turn.ts``), so a refusal reads the same from either package."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Optional, Union

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_encode_nan = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=True).encode

NON_FINITE = "a number is Infinity or NaN, which JSON cannot hold"
"""Node's words for a value holding NaN or ±Infinity."""
LONE_SURROGATE = "the text holds a lone UTF-16 surrogate"
"""Node's (and the binding's) words for text that cannot cross into UTF-8 unchanged."""

_SURROGATE = re.compile("[\ud800-\udfff]")
# a high surrogate right before a low one: escaped, the pair would be read as one other character
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


class Unreadable:
    """Why a value has no JSON text (``detail`` goes into the refusal or error message)."""

    __slots__ = ("detail",)

    def __init__(self, detail: str) -> None:
        self.detail = detail


def well_formed(s: str) -> str:
    """``s`` with every surrogate code point as U+FFFD: what the Node binding hands the core for
    a host string holding a lone surrogate (a name, a dialect, a receipt), so a message quoting it
    is the same and nothing raises ``UnicodeEncodeError`` on its way into the binding."""
    if s.isascii() or not _SURROGATE.search(s):
        return s
    return _SURROGATE.sub("\ufffd", s)


def _escape_surrogate(m: "re.Match[str]") -> str:
    return "\\u%04x" % ord(m.group())


def error_text(e: BaseException) -> str:
    """An exception's text for a message, even when its ``__str__`` fails."""
    try:
        text = str(e)
    except Exception:
        text = ""
    return text[:200]


def json_text(value: Any) -> Union[str, Unreadable]:
    """``value`` as JSON text: ``str`` is taken as it is (already JSON text), ``bytes`` decoded
    as UTF-8, anything else serialized. A lone surrogate inside a serialized string is written
    as its ``\\uXXXX`` escape, as ``JSON.stringify`` writes it, so the core refuses it with the
    same words as for Node. Never raises (short of ``BaseException``s such as
    ``KeyboardInterrupt``): a host object that fails while it is read is a reason too."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError as e:
            return Unreadable(f"the bytes are not UTF-8 ({e.reason})")
    try:
        text = _encode(value)
    except ValueError as e:
        # allow_nan=False refuses NaN and ±Infinity; told apart from a cycle (also ValueError)
        # by the value serializing once they are allowed, never by CPython's wording
        try:
            _encode_nan(value)
        except Exception:
            return Unreadable(error_text(e))
        return Unreadable(NON_FINITE)
    except (TypeError, RecursionError) as e:
        return Unreadable(error_text(e))
    except Exception as e:  # a host mapping whose items() raises, an object failing as it is read
        return Unreadable(f"reading the value raised {type(e).__name__}: {error_text(e)}"[:200])
    if text.isascii() or not _SURROGATE.search(text):
        return text
    if _PAIR.search(text):
        # two surrogate code points side by side: Python holds two characters that JSON would
        # read back as one other character, so the gate would not decide on the host's value
        return Unreadable(LONE_SURROGATE)
    # only string contents can hold one (everything else the encoder writes is ASCII)
    return _SURROGATE.sub(_escape_surrogate, text)


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
