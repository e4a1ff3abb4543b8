"""Conversion only for ``filter_tools``: which tools a caller may see is decided by the core.
JSON tool lists go to the core whole (it knows each dialect's shape); lists of live tool objects
(LangChain ``BaseTool``, Pydantic AI ``Tool``, anything with a ``name``) and AI SDK tool records
cannot cross as JSON, so for those the core is asked about names and the caller's own objects are
kept, identical (``filterToolList`` in ``src-ts/tools.ts``)."""

from __future__ import annotations

import json
from typing import Any, Callable, List, Mapping, Optional, Sequence

from ._errors import ToolGateError
from ._json import error_text, payload_text, well_formed

Visible = Callable[[List[str]], List[bool]]
FilterJson = Callable[[str, str], str]

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


def filter_tool_list(tools: Any, dialect: str, visible: Visible, filter_json: FilterJson) -> Any:
    """Filters ``tools`` in ``dialect``'s shape; see ``ToolGate.filter_tools``."""
    if isinstance(tools, (list, tuple)) and (dialect == "langchain" or any(_live_name(t) is not None for t in tools)):
        names = []
        for i, t in enumerate(tools):
            n = _spec_name(t) if dialect == "langchain" else (_live_name(t) or _spec_name(t))
            if n is None:
                raise ToolGateError("E_PAYLOAD", f"{dialect} tool list at `[{i}]`: a tool without a name")
            names.append(n)
        keep = visible([well_formed(n) for n in names])
        return type(tools)(t for t, k in zip(tools, keep) if k) if isinstance(tools, tuple) else [t for t, k in zip(tools, keep) if k]
    if dialect in _RECORD_DIALECTS and isinstance(tools, Mapping):
        # an AI SDK tool record ({name: tool}, usually live objects: functions, schemas) is kept
        # by key, the caller's own values, as Node's filterTools keeps it, whatever they hold
        try:
            names = list(tools.keys())
            if all(isinstance(n, str) for n in names):
                keep = visible([well_formed(n) for n in names])
                return {n: tools[n] for n, k in zip(names, keep) if k}
        except ToolGateError:
            raise
        except Exception as e:  # a mapping that fails while it is read
            raise ToolGateError("E_PAYLOAD", f"{dialect} tool list: cannot be read (reading it raised {type(e).__name__}: {error_text(e)})") from None
        # keys that are not strings: read as JSON (the core sees them as the strings JSON makes)
    text = payload_text(tools, f"{dialect} tool list")
    filtered = filter_json(dialect, text)
    return filtered if isinstance(tools, str) else json.loads(filtered)


__all__: Sequence[str] = ("filter_tool_list",)
