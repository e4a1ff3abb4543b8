""":class:`ToolCallStream`: a model's streamed turn, guarded event by event. Conversion only:
the core (``crates/toolgate-core/src/stream/``) decides."""

from __future__ import annotations

from typing import Any, List, Optional

from . import _native
from ._errors import ToolGateError
from ._json import payload_text
from ._report import TurnReport, read_native_call, read_stream_report
from ._verdict import TurnCall


class ToolCallStream:
    """Feed every event to :meth:`push`, emit what :meth:`forward` returns to your consumer, and
    finish with :meth:`end`. Create one with ``gate.stream(dialect=...)``.

    After any error (a broken event, an event after the stream's end, a stream buffered past
    ``limits.maxPayloadBytes``) the stream is failed: every later ``push`` and ``end`` raises
    ``ToolGateError`` ``E_PAYLOAD``.
    """

    __slots__ = ("dialect", "_native", "_failed")

    def __init__(self, native: "_native.Stream", dialect: str) -> None:
        self.dialect = dialect
        self._native = native
        self._failed: Optional[ToolGateError] = None

    def push(self, event: Any) -> List[TurnCall]:
        """Feeds one event: an SSE line as received (``data: {...}``, with or without the
        ``data: `` prefix; ``event:`` lines, comments and blank lines are ignored; OpenAI's
        ``data: [DONE]`` ends the stream), several lines of one SSE event, or a parsed event.
        Returns the calls this event completed, each decided now (most events complete none)."""
        if self._failed is not None:
            raise ToolGateError("E_PAYLOAD", f"{self.dialect} stream: an earlier event failed ({self._failed.message}); this stream accepts nothing more")
        try:
            calls = self._native.push(payload_text(event, f"{self.dialect} stream event"))
        except ToolGateError as e:
            self._failed = e
            raise
        return [read_native_call(c) for c in calls]

    def forward(self) -> List[Any]:
        """Takes the events safe to emit now, parsed, in this dialect's own event shape: text as
        it arrived; each allowed call whole once complete, with its repaired arguments; nothing of
        a refused call; indexes and finish/stop reasons rewritten so the result stays valid."""
        return self._native.forward()

    def end(self) -> TurnReport:
        """Ends the stream and answers the whole turn exactly as ``gate.guard`` would (calls keep
        the verdicts ``push`` returned). ``payload`` is the turn in the dialect's non-streamed
        form with repairs written back. ``E_PAYLOAD`` for a stream cut off before its terminal
        event, a failed stream, or a second ``end``."""
        if self._failed is not None:
            raise ToolGateError("E_PAYLOAD", f"{self.dialect} stream: an earlier event failed ({self._failed.message})")
        return read_stream_report(self._native.end())
