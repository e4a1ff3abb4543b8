"""The tool lists ``filter_tools`` has read, remembered by their JSON text (``src-ts/tool-list-memo.ts``
in Node), so that a list offered again — an agent host sending the same tools with every model
request — is read by the core once, not on every filter. Nothing is decided here: a remembered
list is the core's prepared list (``crates/toolgate-core/src/tool_list.rs``), whose every answer
equals what ``filter_tools`` answers for the text it was prepared from; which tools a caller may
see is asked again on every filter.

A list is prepared the second time its text is seen by the same gate in the same dialect (the
first time it is only noted), so a list seen once costs what it cost before. Bounded for the
whole process, whatever the number of gates: at most :data:`REMEMBERED_TOOL_LISTS` lists noted or
prepared, texts of at least :data:`MIN_REMEMBERED_TOOL_LIST` characters (a shorter list costs a few
microseconds to read, and many of them would push the long lists out) and at most
:data:`MAX_REMEMBERED_TOOL_LIST` characters,
:data:`MAX_REMEMBERED_TOOL_LIST_CHARS` together; the least recently used text is forgotten first.
Safe to use from several threads."""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from typing import Callable, Dict, Optional, Sequence, Tuple, Union

from . import _native
from ._errors import ToolGateError

#: Tool lists remembered in the process (noted or prepared, on any gate).
REMEMBERED_TOOL_LISTS = 16
#: A tool list text shorter than this (in characters) is read on every filter, never remembered.
MIN_REMEMBERED_TOOL_LIST = 1024
#: A tool list text longer than this (in characters) is read on every filter, never remembered.
MAX_REMEMBERED_TOOL_LIST = 256 * 1024
#: The remembered texts hold at most this many characters together.
MAX_REMEMBERED_TOOL_LIST_CHARS = 4 * 1024 * 1024

_serials = itertools.count(1)


def gate_serial() -> int:
    """A number never given to another gate in this process (names a gate in the memo: a gate's
    limits are the ones its lists were read under)."""
    return next(_serials)


_Key = Tuple[int, str]


class ToolListMemo:
    """Tool list texts by gate serial and dialect (see the module docstring)."""

    __slots__ = ("_texts", "_lists", "_chars", "_lock")

    def __init__(self) -> None:
        # per text and (gate, dialect): None once noted, then the prepared list, or False when the
        # core refused to prepare it (the filter raises its own error; not read twice per filter)
        self._texts: "OrderedDict[str, Dict[_Key, Union[None, bool, _native.ToolList]]]" = OrderedDict()
        self._lists = 0
        self._chars = 0
        self._lock = threading.Lock()

    def prepared(self, gate: int, dialect: str, text: str, prepare: Callable[[], "_native.ToolList"]) -> "Optional[_native.ToolList]":
        """The core's prepared list for ``text`` read by gate ``gate`` in ``dialect``, made with
        ``prepare`` on the second sighting; ``None`` when the list is to be filtered as it comes
        (first seen, too long, or ``prepare`` refused it: the filter then raises its own error)."""
        if len(text) < MIN_REMEMBERED_TOOL_LIST or len(text) > MAX_REMEMBERED_TOOL_LIST:
            return None
        key = (gate, dialect)
        with self._lock:
            lists = self._texts.get(text)
            if lists is None:
                self._texts[text] = {key: None}
                self._lists += 1
                self._chars += len(text)
                self._trim()
                return None
            self._texts.move_to_end(text)
            if key not in lists:
                lists[key] = None
                self._lists += 1
                self._trim()
                return None
            known = lists[key]
            if known is False:
                return None
            if isinstance(known, _native.ToolList):
                return known
        # read outside the lock: other threads' filters go on meanwhile
        try:
            made = prepare()
        except ToolGateError:
            made = None
        with self._lock:
            lists = self._texts.get(text)
            if lists is not None and key in lists:
                lists[key] = False if made is None else made
        return made

    @property
    def size(self) -> int:
        """Lists noted or prepared now (for tests)."""
        return self._lists

    def _trim(self) -> None:
        while self._lists > REMEMBERED_TOOL_LISTS or self._chars > MAX_REMEMBERED_TOOL_LIST_CHARS:
            text, lists = self._texts.popitem(last=False)
            self._lists -= len(lists)
            self._chars -= len(text)


#: The process's memo, shared by every gate's ``filter_tools``.
tool_list_memo = ToolListMemo()

__all__: Sequence[str] = (
    "ToolListMemo",
    "tool_list_memo",
    "gate_serial",
    "REMEMBERED_TOOL_LISTS",
    "MIN_REMEMBERED_TOOL_LIST",
    "MAX_REMEMBERED_TOOL_LIST",
    "MAX_REMEMBERED_TOOL_LIST_CHARS",
)
