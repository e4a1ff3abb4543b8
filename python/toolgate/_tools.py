"""Conversion only for ``filter_tools``: which tools a caller may see is decided by the core.
JSON tool lists go to the core whole (it knows each dialect's shape); lists of live tool objects
(LangChain ``BaseTool``, Pydantic AI ``Tool``, anything with a ``name``) and AI SDK tool records
cannot cross as JSON, so for those the core is asked about names and the caller's own objects are
kept, identical (``filterToolList`` in ``src-ts/tools.ts``). A JSON list given as text is answered
as text; given as Python values, the core answers where it removed something (paths into the
list as sent) and those positions are cut from the caller's own values."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from ._errors import ToolGateError
from ._json import error_text, payload_text, well_formed

Visible = Callable[[List[str]], List[bool]]
FilterJson = Callable[[str, str], str]
FilterRemovals = Callable[[str, str], List[List[Union[str, int]]]]

class _Mismatch(Exception):
    """A list that is not, at a removal's position, what its JSON text showed."""


def _cut_tree(paths: List[List[Union[str, int]]]) -> Optional[Dict[Union[str, int], Any]]:
    """The removal paths as a tree (``True`` removes that member or element, a dict goes inside
    it); ``None`` for paths the core never answers (empty, or one inside another)."""
    root: Dict[Union[str, int], Any] = {}
    for p in paths:
        if not p:
            return None
        node = root
        for seg in p[:-1]:
            nxt = node.get(seg)
            if nxt is True:
                return None
            if nxt is None:
                nxt = node[seg] = {}
            node = nxt
        if p[-1] in node:
            return None
        node[p[-1]] = True
    return root


def _kept(items: Iterable[Tuple[Any, Any]], node: Dict[Union[str, int], Any]) -> Iterator[Tuple[Any, Any]]:
    """The ``(key, value)`` pairs of ``items`` the tree's cuts leave, each cut inside as told."""
    for k, x in items:
        sub = node.get(k)
        if sub is not True:
            yield k, (x if sub is None else _cut(x, sub))


def _cut(v: Any, node: Dict[Union[str, int], Any]) -> Any:
    """``v`` with the tree's cuts made: the containers on the way copied (``list``, ``tuple`` and
    ``dict`` as themselves, members in order), everything else the caller's own value. Raises
    ``_Mismatch`` when a container on the way is not one JSON text shows as is (a subclass, a key
    that is not a string, a position it does not have)."""
    t = type(v)
    if t is list or t is tuple:
        n = len(v)
        if any(type(k) is not int or not 0 <= k < n for k in node):
            raise _Mismatch
        out = [x for _, x in _kept(enumerate(v), node)]
        return out if t is list else tuple(out)
    if t is dict:
        if any(type(k) is not str or k not in v for k in node):
            raise _Mismatch
        return dict(_kept(v.items(), node))
    raise _Mismatch


_RECORD_DIALECTS = frozenset(("ai-sdk", "ai-sdk-ui"))
"""Dialects whose tool list may be a record ``{name: tool}`` of live objects (``LIVE_OBJECT_DIALECTS``
in ``src-ts/tools.ts``)."""


def _live_name(t: Any) -> Optional[str]:
    """The name of a live tool object (``name`` attribute), else ``None`` (plain JSON data)."""
    if isinstance(t, (dict, list, str, int, float, bool)) or t is None:
        return None
    name = getattr(t, "name", None)
    return name if isinstance(name, str) else None


def _spec_name(t: Any) -> Optional[str]:
    """The name of a LangChain tool spec: ``name``, or an OpenAI-format ``function.name``."""
    if isinstance(t, dict):
        if isinstance(t.get("name"), str):
            return t["name"]
        f = t.get("function")
        if isinstance(f, dict) and isinstance(f.get("name"), str):
            return f["name"]
        return None
    return _live_name(t)


class LiveTools(NamedTuple):
    """A list of live tool objects read once (see :func:`live_tools`): their names and the
    objects, by position, and the container they came in (``list``, ``tuple`` or ``dict``)."""

    container: type
    names: List[str]
    values: List[Any]


def live_tools(tools: Any, dialect: str) -> Optional[LiveTools]:
    """The tool objects of a list the core is asked about by name (live tool objects, AI SDK
    records), read once; ``None`` for any other list (JSON data, sent to the core whole). Raises
    ``E_PAYLOAD`` for a tool without a name, or a record that fails while it is read."""
    if isinstance(tools, (list, tuple)) and (dialect == "langchain" or any(_live_name(t) is not None for t in tools)):
        names = []
        for i, t in enumerate(tools):
            n = _spec_name(t) if dialect == "langchain" else (_live_name(t) or _spec_name(t))
            if n is None:
                raise ToolGateError("E_PAYLOAD", f"{dialect} tool list at `[{i}]`: a tool without a name")
            names.append(well_formed(n))
        return LiveTools(tuple if isinstance(tools, tuple) else list, names, list(tools))
    if dialect in _RECORD_DIALECTS and isinstance(tools, Mapping):
        # an AI SDK tool record ({name: tool}, usually live objects: functions, schemas) is kept
        # by key, the caller's own values, as Node's filterTools keeps it, whatever they hold
        try:
            keys = list(tools.keys())
            if all(isinstance(n, str) for n in keys):
                return LiveTools(dict, keys, [tools[n] for n in keys])
        except ToolGateError:
            raise
        except Exception as e:  # a mapping that fails while it is read
            raise ToolGateError("E_PAYLOAD", f"{dialect} tool list: cannot be read (reading it raised {type(e).__name__}: {error_text(e)})") from None
        # keys that are not strings: read as JSON (the core sees them as the strings JSON makes)
    return None


def kept_live_tools(live: LiveTools, visible: Visible) -> Any:
    """The live tools ``visible`` answers true for, in a new container of the kind they came in."""
    keep = visible([well_formed(n) for n in live.names] if live.container is dict else live.names)
    if live.container is dict:
        return {n: v for n, v, k in zip(live.names, live.values, keep) if k}
    kept = [v for v, k in zip(live.values, keep) if k]
    return tuple(kept) if live.container is tuple else kept


def cut_removals(tools: Any, paths: List[List[Union[str, int]]]) -> Any:
    """``tools`` with the core's removals cut out (new containers on the way, every other value
    the same); ``_MISMATCH`` when the list is not, at a removal's position, what its JSON text
    showed."""
    tree = _cut_tree(paths)
    try:
        if tree is not None:
            return _cut(tools, tree)
    except _Mismatch:
        pass
    return _MISMATCH


_MISMATCH: Any = object()
"""What :func:`cut_removals` answers when the cut cannot be made."""


def filter_tool_list(tools: Any, dialect: str, visible: Visible, filter_json: FilterJson, filter_removals: FilterRemovals) -> Any:
    """Filters ``tools`` in ``dialect``'s shape; see ``ToolGate.filter_tools``."""
    live = live_tools(tools, dialect)
    if live is not None:
        return kept_live_tools(live, visible)
    text = payload_text(tools, f"{dialect} tool list")
    if isinstance(tools, (str, bytes, bytearray)):
        filtered = filter_json(dialect, text)
        return filtered if isinstance(tools, str) else json.loads(filtered)
    # the outer container is always new (with nothing removed, a shallow copy)
    kept = cut_removals(tools, filter_removals(dialect, text))
    # values that are not plain JSON data where something goes: the core's filtered text, parsed
    return json.loads(filter_json(dialect, text)) if kept is _MISMATCH else kept


__all__: Sequence[str] = ("filter_tool_list", "live_tools", "kept_live_tools", "cut_removals", "LiveTools")
