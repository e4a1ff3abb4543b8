"""Receipts on the tool's side: verify that a call was allowed, with these exact arguments."""

from __future__ import annotations

import json
import time
from typing import Any, Dict, Optional

from . import _native
from ._errors import ToolGateError
from ._json import Unreadable, json_text, well_formed

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
    expect_text = json_text(expect) if expect else ""
    if isinstance(expect_text, Unreadable):
        raise ToolGateError("E_RECEIPT", f"wrong_arguments: the expected arguments cannot be JSON ({expect_text.detail})")
    now_ms = (time.time() if now is None else now) * 1000
    try:
        # a lone surrogate reaches the binding as U+FFFD, as Node's does (never UnicodeEncodeError)
        claims = _native.verify_receipt(well_formed(str(receipt)), well_formed(str(public_key)), expect_text, now_ms)
    except ToolGateError as e:
        if e.code == "E_RECEIPT":
            raise
        # expectations the core could not read (a lone surrogate, escaped as Node escapes it):
        # E_RECEIPT with the core's words, as Node's verifyReceipt throws it
        raise ToolGateError("E_RECEIPT", e.message) from None
    return json.loads(claims)


def generate_receipt_key() -> Dict[str, str]:
    """A fresh receipt key pair: ``{"privateKey", "publicKey", "kid"}`` (base64url). Put
    ``privateKey`` in the environment variable ``receipts.privateKeyEnv`` names."""
    return json.loads(_native.generate_receipt_key())
