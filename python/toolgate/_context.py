"""The caller's context (who is acting) as the JSON text the core reads. Unknown keys are sent
on, so the core names them (``E_CONFIG``): a typo such as ``role`` must not silently drop a role."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Literal, Mapping, Optional, TypedDict

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
