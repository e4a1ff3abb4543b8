"""Conversion only for ``ToolGate.prepare_tools``: a tool list read once and filtered for each
caller. Which tools a caller may see is decided by the core (``crates/toolgate-core/src/tool_list.rs``);
this keeps what was prepared and builds each answer from it (``src-ts/prepared-tools.ts`` in Node)."""

from __future__ import annotations

import json
from typing import Any, Generic, Optional, Sequence, TypeVar

from . import _native
from ._context import keyword_caller
from ._errors import ToolGateError
from ._tools import _MISMATCH, LiveTools, cut_removals, kept_live_tools

T = TypeVar("T")


class PreparedTools(Generic[T]):
    """A tool list read and checked once by :meth:`ToolGate.prepare_tools`, to filter for many
    callers: :meth:`filter` answers what ``gate.filter_tools(tools, dialect, **ctx)`` answers for
    the list as it was when prepared, without sending the list to the core or reading it again
    (the core asks only which of its names the caller may see, and remembers what each set of
    answers removes).

    - Prepared from ``str``, :meth:`filter` answers ``str`` (from ``bytes``, the parsed list).
    - Prepared from JSON data (``list`` / ``dict`` values), :meth:`filter` answers new containers
      (the outer one, and each one on the way to a removal) holding the list's definitions as
      they were read when it was prepared: plain JSON data, **shared between answers — treat
      them as read-only**. Later changes to the values it was prepared from are not seen.
    - Prepared from live tool objects (LangChain, Pydantic AI tools, an AI SDK record), it answers
      the very objects it was prepared with, by their names then.
    """

    __slots__ = ("_gate", "_native", "_kind", "_snapshot", "_live")

    def __init__(self, gate: "_native.Gate", kind: str, native: "Optional[_native.ToolList]" = None, snapshot: Any = None, live: Optional[LiveTools] = None) -> None:
        """Made by :meth:`ToolGate.prepare_tools`. ``kind``: ``"text"`` (answered as ``str``),
        ``"bytes"`` (answered parsed), ``"data"`` (cut from ``snapshot``) or ``"live"``."""
        self._gate = gate
        self._kind = kind
        self._native = native
        self._snapshot = snapshot
        self._live = live

    def filter(self, **ctx: Any) -> T:
        """The list with only the tools this caller could call: the context fields as keywords
        (``subject=``, ``roles=`` …) or ``caller=`` prepared with :meth:`ToolGate.caller`.
        ``E_CONFIG`` for a context the core refuses."""
        c = keyword_caller(ctx)
        gate = self._gate
        live = self._live
        if live is not None:
            return kept_live_tools(live, lambda names: gate.visible_tools(names, c))
        native = self._native
        if native is None:
            raise ToolGateError("E_CONFIG", "PreparedTools: prepare a tool list with gate.prepare_tools(tools, dialect)")
        if self._kind != "data":
            text: Any = native.filter(gate, c)
            return text if self._kind == "text" else json.loads(text)
        kept = cut_removals(self._snapshot, native.removals(gate, c))
        # the snapshot is plain JSON data, so the cut is always made; should it ever not be, the
        # filtered text, parsed
        return json.loads(native.filter(gate, c)) if kept is _MISMATCH else kept


__all__: Sequence[str] = ("PreparedTools",)
