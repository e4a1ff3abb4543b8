"""Plugged policy engines, asked after the built-in rules, in order: the first ``allow``/``deny``
decides, all delegating leaves the rules' result. The core decides everything else; this only
calls the host's functions and turns what they return (or raise, or fail to return in time) into
one answer. An engine that raises, answers anything else, or runs past the timeout denies."""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any, Awaitable, Callable, Dict, Literal, Mapping, Optional, Sequence, Union

from ._errors import ToolGateError

EngineAnswer = Literal["allow", "deny", "delegate"]
EngineRequest = Dict[str, Any]
"""``{"tool", "action", "resource"?, "arguments", "context", "rules"}``: ``rules`` is ``"allow"``
or ``"no_rule"`` (what the built-in rules concluded; an engine may still allow)."""
PolicyEngine = Callable[[EngineRequest], Union[EngineAnswer, Awaitable[EngineAnswer]]]
EngineErrorReporter = Callable[[BaseException, EngineRequest, int], None]

DEFAULT_ENGINE_TIMEOUT_MS = 50.0
_ANSWERS = ("allow", "deny", "delegate")


def engine_request(tool: str, arguments: Any, facts: Mapping[str, Any], context: Mapping[str, Any]) -> EngineRequest:
    """The request an engine sees for one call the built-in pipeline did not refuse."""
    req: EngineRequest = {"tool": tool, "action": facts.get("action") or tool, "arguments": arguments or {}, "context": dict(context), "rules": facts["engine"]}
    if facts.get("resource") is not None:
        req["resource"] = facts["resource"]
    return req


def _report(on_error: Optional[EngineErrorReporter], err: BaseException, req: EngineRequest, i: int) -> EngineAnswer:
    if on_error is not None:
        try:
            on_error(err, req, i)
        except Exception:  # a failing reporter changes nothing: the call is denied either way
            pass
    return "deny"


def _nonsense(v: Any) -> ValueError:
    return ValueError(f"engine answered {v!r}; expected 'allow', 'deny' or 'delegate'")


def _judge(v: Any, t0: float, timeout_ms: float, on_error: Optional[EngineErrorReporter], req: EngineRequest, i: int) -> EngineAnswer:
    """One engine's answer: late or not one of the three words is a deny (reported)."""
    took = (time.perf_counter() - t0) * 1000
    if took > timeout_ms:
        return _report(on_error, TimeoutError(f"engine took {took:.1f} ms, over engine_timeout_ms {timeout_ms}"), req, i)
    if v not in _ANSWERS:
        return _report(on_error, _nonsense(v), req, i)
    return v


def ask_sync(engines: Sequence[PolicyEngine], req: EngineRequest, timeout_ms: float, method: str, on_error: Optional[EngineErrorReporter]) -> EngineAnswer:
    """Asks the engines synchronously. An engine returning an awaitable is ``E_ASYNC`` (use the
    ``a…`` method)."""
    for i, engine in enumerate(engines):
        t0 = time.perf_counter()
        try:
            v = engine(req)
        except Exception as e:
            return _report(on_error, e, req, i)
        if inspect.isawaitable(v):
            if inspect.iscoroutine(v):
                v.close()
            raise ToolGateError("E_ASYNC", f"{method}: a plugged engine returned an awaitable; use a{method} on a gate with asynchronous engines")
        answer = _judge(v, t0, timeout_ms, on_error, req, i)
        if answer != "delegate":
            return answer
    return "delegate"


async def ask_async(engines: Sequence[PolicyEngine], req: EngineRequest, timeout_ms: float, on_error: Optional[EngineErrorReporter]) -> EngineAnswer:
    """Asks the engines, awaiting each (bounded by ``timeout_ms``: a late answer denies)."""
    for i, engine in enumerate(engines):
        t0 = time.perf_counter()
        try:
            v: Any = engine(req)
            if inspect.isawaitable(v):
                v = await asyncio.wait_for(v, timeout_ms / 1000)
        except asyncio.TimeoutError:
            return _report(on_error, TimeoutError(f"engine did not answer within engine_timeout_ms {timeout_ms}"), req, i)
        except Exception as e:
            return _report(on_error, e, req, i)
        answer = _judge(v, t0, timeout_ms, on_error, req, i)
        if answer != "delegate":
            return answer
    return "delegate"
