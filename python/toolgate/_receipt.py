"""Receipts on the tool's side: verify that a call was allowed, with these exact arguments."""

from __future__ import annotations

import json
import time
from typing import Any, Dict, Optional

from . import _native
from ._errors import ToolGateError

_MISSING = object()


def verify_receipt(receipt: str, public_key: str, *, tool: Optional[str] = None, arguments: Any = _MISSING, sub: Optional[str] = None, now: Optional[float] = None) -> Dict[str, Any]:
    """Verifies a receipt (compact JWS, EdDSA) against the gate's ``public_key`` (base64url):
    signature, format version, validity window, then what the caller expects it to say — the
    ``tool`` about to run, the exact ``arguments`` (compared by their RFC 8785 digest: key order
    and number spelling do not matter) and the subject ``sub``. Answers the claims (``v``,
    ``sub``, ``tool``, ``action``, ``resource``, ``callId``, ``args``, ``iat``, ``exp``, ``jti``).
    Raises ``ToolGateError`` ``E_RECEIPT`` whose message starts with the stable reason
    (``bad_signature: …``, ``expired: …``). ``now``: Unix seconds (default: the clock)."""
    expect: Dict[str, Any] = {}
    if tool is not None:
        expect["tool"] = tool
    if arguments is not _MISSING:
        expect["arguments"] = arguments
    if sub is not None:
        expect["sub"] = sub
    try:
        expect_text = json.dumps(expect, ensure_ascii=False, allow_nan=False) if expect else ""
    except (TypeError, ValueError) as e:
        raise ToolGateError("E_RECEIPT", f"wrong_arguments: the expected arguments cannot be JSON ({e})") from None
    now_ms = (time.time() if now is None else now) * 1000
    return json.loads(_native.verify_receipt(str(receipt), str(public_key), expect_text, now_ms))


def generate_receipt_key() -> Dict[str, str]:
    """A fresh receipt key pair: ``{"privateKey", "publicKey", "kid"}`` (base64url). Put
    ``privateKey`` in the environment variable ``receipts.privateKeyEnv`` names."""
    return json.loads(_native.generate_receipt_key())
