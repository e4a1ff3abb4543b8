""":class:`ToolGate`, the typed Python face of one compiled gate. Conversion only: every decision
is the Rust core's (through ``toolgate._native``), the same as the Node package's."""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, TypeVar, Union

from . import _native
from ._audit import AuditTrail
from ._config import parse_json_config, prepare_config, read_config_file
from ._context import CallContext, Caller, caller_arg, context_text, keyword_caller, plain_context
from ._engines import DEFAULT_ENGINE_TIMEOUT_MS, EngineErrorReporter, PolicyEngine, ask_async, ask_sync, engine_request
from ._errors import ToolGateError
from ._json import Unreadable, json_text, payload_text, well_formed
from ._report import NativeReport, TurnReport, read_native_report
from ._stream import ToolCallStream
from ._prepared_tools import PreparedTools
from ._tools import filter_tool_list, live_tools
from ._tool_list_memo import gate_serial, tool_list_memo
from ._verdict import Verdict, from_native

T = TypeVar("T")
R = TypeVar("R")


def _tool_str(tool: Any) -> str:
    """The tool name as ``str``: a str subclass is decided by its value, never by its own
    ``__str__`` (which could name another tool than the one the host looks up and runs)."""
    return tool if type(tool) is str else str.__str__(tool) if isinstance(tool, str) else str(tool)


def _dialect_str(dialect: Any) -> Any:
    """A dialect name as the binding takes it (a lone surrogate as U+FFFD, as Node hands it on:
    ``E_DIALECT`` names it the same); anything else is left for ``_guard_native`` to refuse."""
    return well_formed(dialect) if isinstance(dialect, str) else dialect


def _engine_facts(first: Verdict, engine: List[str]) -> Optional[Dict[str, Any]]:
    """What the engines are asked about a first step's verdict (``engine``: its question, if it
    has one); ``None`` when it has none: refused before their stage, it is final."""
    if not engine:
        return None
    return {"engine": engine[0], "action": first.action, "resource": first.resource}


def _asked(tool: str, step: "_native.PendingCall", text: str) -> "tuple[Verdict, Dict[str, Any]]":
    """The first step's verdict of a call kept for the engines, and the facts they are asked about."""
    engine: List[str] = []
    first = from_native(tool, step.verdict(), text, engine)
    facts = _engine_facts(first, engine)
    if facts is None:
        raise ToolGateError("E_CONFIG", f"check: the call to `{tool}` was kept for the engines without a question for them")
    return first, facts


def _check_dialect(dialect: Any) -> None:
    if not isinstance(dialect, str):
        raise ToolGateError("E_DIALECT", "guard: `dialect` must be a Dialect name or \"auto\"")


def _remote_sync(method: str) -> ToolGateError:
    return ToolGateError("E_ASYNC", f"{method}: this gate keeps its state in Redis (state.redis), which a sync call would block its caller waiting for; use `await gate.a{method}(...)`")

Context = Union[CallContext, Mapping[str, Any]]
"""A caller: a :class:`CallContext` (or any mapping with its keys)."""

_CallerArg = Union[str, "_native.Caller", None]
"""A decision's caller as the binding takes it: context JSON text, or a prepared native caller."""

Dialect = str
"""``"openai"``, ``"openai-responses"``, ``"anthropic"``, ``"langchain"``, ``"pydantic-ai"``,
``"mcp"``, ``"ai-sdk"``, ``"gemini"`` or ``"ai-sdk-ui"`` (``guard`` also takes ``"auto"``)."""


class ToolGate:
    """The gate between an agent and its tools. Construct once (every schema is compiled here),
    then call :meth:`check` for every tool call; it never raises on bad model output.

    Safe to share between threads: the decisions run in Rust without the GIL, on an immutable
    gate whose loop/taint/confirmation state is locked inside the core.

    >>> gate = ToolGate({"tools": [{"name": "search", "inputSchema": {"type": "object",
    ...     "properties": {"limit": {"type": "integer"}}, "required": ["limit"]}}]})
    >>> gate.check("search", '{"limit": "10"}').arguments
    {'limit': 10}
    """

    __slots__ = ("_gate", "_serial", "_remote", "_check", "_tools", "_writes", "_audit", "_engines", "_engine_timeout_ms", "_on_engine_error", "__weakref__")

    def __init__(
        self,
        config: Union[Mapping[str, Any], str],
        *,
        engines: Optional[Sequence[PolicyEngine]] = None,
        engine_timeout_ms: float = DEFAULT_ENGINE_TIMEOUT_MS,
        on_engine_error: Optional[EngineErrorReporter] = None,
        on_audit: Optional[Callable[[str], None]] = None,
        _base_dir: Optional[str] = None,
    ) -> None:
        """Compiles ``config`` (a dict, or its JSON text). ``ToolGateError`` ``E_CONFIG`` names the
        key, or the tool and schema location, when it is wrong (unknown keys included).
        ``engines`` are asked in order after the built-in rules (a built-in deny is final); each
        may take ``engine_timeout_ms`` before it counts as a deny; ``on_engine_error`` is told why
        an engine's answer became a deny. With an ``audit`` block, every decision is recorded
        (hash-chained JSONL, docs/audit.md); ``on_audit`` also receives every record line."""
        if engines is not None and (isinstance(engines, (str, bytes)) or not all(callable(e) for e in engines)):
            raise ToolGateError("E_CONFIG", "engines: expected a list of callables")
        if isinstance(engine_timeout_ms, bool) or not isinstance(engine_timeout_ms, (int, float)) or not (0 < engine_timeout_ms < float("inf")):
            raise ToolGateError("E_CONFIG", f"engine_timeout_ms: expected a positive number of milliseconds, got {engine_timeout_ms!r}")
        if on_engine_error is not None and not callable(on_engine_error):
            raise ToolGateError("E_CONFIG", "on_engine_error: expected a callable")
        self._engines = tuple(engines) if engines else None
        self._engine_timeout_ms = float(engine_timeout_ms)
        self._on_engine_error = on_engine_error
        parsed: Any
        if isinstance(config, str):
            text = config
            # a key written twice is refused here, before prepare_config's re-serialization
            # could keep one of them silently; None for text that is not JSON (the core names it)
            parsed = parse_json_config(config)
        elif isinstance(config, Mapping):
            parsed = dict(config)
            text = ""
        else:
            raise ToolGateError("E_CONFIG", f"config: expected a dict or JSON text, got {type(config).__name__}")
        sinks: Optional[Dict[str, Any]] = None
        if isinstance(parsed, dict):
            prepared, sinks = prepare_config(parsed, _base_dir)
            if not text or prepared != parsed:
                encoded = json_text(prepared)
                if isinstance(encoded, Unreadable):
                    raise ToolGateError("E_CONFIG", f"config: cannot be serialized to JSON ({encoded.detail})")
                text = encoded
        self._gate = _native.Gate(text)
        self._serial = gate_serial()
        self._remote = bool(self._gate.remote_state)
        self._check = self._gate.check
        self._tools = tuple(self._gate.tool_names())
        tools = parsed.get("tools") if isinstance(parsed, dict) else None
        self._writes = frozenset(t["name"] for t in tools if isinstance(t, dict) and t.get("writes") is True) if isinstance(tools, list) else frozenset()
        if on_audit is not None and not callable(on_audit):
            raise ToolGateError("E_CONFIG", "on_audit: expected a callable")
        config_hash = self._gate.audit_config_hash
        self._audit: Optional[AuditTrail] = None
        if config_hash is not None:
            self._audit = AuditTrail(self._gate, {**(sinks or {}), "on_audit": on_audit}, config_hash)
            weakref.finalize(self, self._audit.close)  # a collected gate's last records are written
        elif on_audit is not None:
            raise ToolGateError("E_CONFIG", 'on_audit: the config has no `audit` block (add "audit": {} to record decisions)')

    @classmethod
    def from_file(cls, path: Union[str, "os.PathLike[str]"], **options: Any) -> "ToolGate":
        """Loads a config file (``.json``, ``.yaml`` or ``.yml``; at most 16 MiB; a regular file)
        and compiles it; paths inside it resolve against its folder. Errors are ``E_CONFIG``
        naming the file. ``options`` as for the constructor."""
        path = os.fspath(path)
        text = read_config_file(path)
        try:
            return cls(text, _base_dir=os.path.dirname(os.path.abspath(path)), **options)
        except ToolGateError as e:
            raise ToolGateError(e.code, f"config file {path}: {e.message}") from None

    @property
    def tools(self) -> tuple:
        """The declared tool names, in config order."""
        return self._tools

    def flush(self) -> None:
        """Writes every buffered audit record out now (a no-op without an ``audit`` block)."""
        if self._audit is not None:
            self._audit.flush()

    @property
    def remote_state(self) -> bool:
        """Whether the gate keeps its state in Redis (``state.redis``): its sync decisions raise
        ``E_ASYNC`` and the async ones wait for Redis on a worker thread."""
        return self._remote

    def close(self) -> None:
        """Writes every buffered audit record, and drops the Redis connections of a gate with
        ``state.redis`` (decisions after it are refused, ``state_unavailable``). A no-op for a
        gate with neither."""
        self.flush()
        self._gate.close()

    @property
    def audit_dropped(self) -> int:
        """Audit records lost since the gate was built (a full buffer or a failed sink)."""
        return int(self._gate.audit_dropped) + (self._audit.lost if self._audit is not None else 0)

    @property
    def writes_tools(self) -> frozenset:
        """The declared tools marked ``writes`` (confirm-before-write unless a rule says
        ``"confirm": false``): adapters ask the user's approval up front for these."""
        return self._writes

    @property
    def public_key(self) -> Optional[str]:
        """The receipts' verifying key (base64url); ``None`` unless receipts are configured."""
        return self._gate.public_key

    @property
    def has_policy(self) -> bool:
        """Whether the config has a ``policy`` block (deny by default)."""
        return self._gate.has_policy

    # -- one call -------------------------------------------------------------------------

    def caller(self, ctx: Optional[Context] = None) -> Caller:
        """Prepares a caller once: ``ctx`` is read and checked now (``E_CONFIG`` for a key that is
        not a :class:`CallContext` field or a value of the wrong type), and the returned
        :class:`Caller` is passed in its place — ``check(tool, args, caller)``,
        ``guard(payload, dialect, caller=caller)``, ``filter_tools(tools, dialect, caller=caller)``,
        ``stream(dialect, caller=caller)``, ``confirm(token, caller)`` — so a decision with a known
        caller costs no serialization and no parse of its context. Decisions are the same as with
        ``ctx``."""
        text = context_text(ctx) if ctx else None
        return Caller(_native.Caller(text), text)

    def check(self, tool: str, args: Union[str, bytes, Mapping[str, Any], None] = None, ctx: Optional[Union[Context, Caller]] = None) -> Verdict:
        """Decides one call. ``args`` is the raw JSON text the model sent (the hot path: parsed
        strictly in Rust, once) or an already-parsed dict; ``""`` and ``None`` mean ``{}``.
        Returns ``passed`` (run ``arguments_json``, the caller's own text), ``repaired`` (run the
        repaired ``arguments``; each change is a flag), or a refusal with a model-readable
        ``message``. Never raises on model output; ``E_CONFIG`` for a ``ctx`` the host got wrong,
        ``E_ASYNC`` when a plugged engine is asynchronous, or the gate keeps its state in Redis
        (``state.redis``; use :meth:`acheck`)."""
        if self._remote:
            raise _remote_sync("check")
        return self._check_here(tool, args, ctx)

    def _check_here(self, tool: str, args: Union[str, bytes, Mapping[str, Any], None], ctx: Optional[Union[Context, Caller]]) -> Verdict:
        text = "" if args is None else json_text(args)
        return self._check_text(tool, text, caller_arg(ctx), ctx)

    def _check_text(self, tool: str, text: "Union[str, Unreadable]", c: _CallerArg, ctx: Optional[Union[Context, Caller]]) -> Verdict:
        """Decides on the arguments' and the caller's text, made when the call was made (a host
        changing its objects afterwards changes nothing; ``ctx`` is read only for engines)."""
        # a str subclass is decided by its value, never by its own __str__ (which could name
        # another tool than the one the host looks up and runs)
        tool = tool if type(tool) is str else _tool_str(tool)
        # the binding gets a lone surrogate as U+FFFD, as Node's does (the verdict keeps `tool`)
        name = tool if tool.isascii() else well_formed(tool)
        if self._audit is not None:
            self._audit.decided(1)
        if isinstance(text, Unreadable):
            return from_native(tool, self._gate.check_unreadable(name, text.detail, c), None)
        if self._engines is None:
            return from_native(tool, self._check(name, text, c), text)
        step = self._gate.check_step(name, text, c)
        if isinstance(step, tuple):
            return from_native(tool, step, text)
        first, facts = _asked(tool, step, text)
        answer = ask_sync(self._engines, engine_request(tool, first.arguments, facts, plain_context(ctx)), self._engine_timeout_ms, "check", self._on_engine_error)
        return from_native(tool, step.finish(answer), text)

    async def acheck(self, tool: str, args: Union[str, bytes, Mapping[str, Any], None] = None, ctx: Optional[Union[Context, Caller]] = None) -> Verdict:
        """:meth:`check` awaiting asynchronous engines (each bounded by ``engine_timeout_ms``).
        Works on any gate; without engines and remote state it is :meth:`check` (sub-microsecond
        work is not worth a thread hop). With remote state (``state.redis``) each decision waits
        for Redis on a worker thread, never on the event loop."""
        text = "" if args is None else json_text(args)
        if isinstance(text, Unreadable) or (self._engines is None and not self._remote):
            return self._check_here(tool, args, ctx)
        c = caller_arg(ctx)
        if self._engines is None:
            # the texts are made here, on the caller's thread: the worker decides on what was passed
            return await self._off_loop(self._check_text, tool, text, c, None)
        tool = _tool_str(tool)
        if self._audit is not None:
            self._audit.decided(1)
        # the first step reads no state: decided in place
        step = self._gate.check_step(well_formed(tool), text, c)
        if isinstance(step, tuple):
            return from_native(tool, step, text)
        first, facts = _asked(tool, step, text)
        answer = await ask_async(self._engines, engine_request(tool, first.arguments, facts, plain_context(ctx)), self._engine_timeout_ms, self._on_engine_error)
        return await self._off_loop(lambda: from_native(tool, step.finish(answer), text))

    async def _off_loop(self, fn: Callable[..., R], *args: Any) -> R:
        """``fn(*args)`` here when the state is in memory; on a worker thread when it is in Redis
        (the native call releases the GIL while it waits)."""
        if not self._remote:
            return fn(*args)
        return await asyncio.get_running_loop().run_in_executor(None, lambda: fn(*args))

    # -- confirm-before-write -------------------------------------------------------------

    def confirm(self, token: str, ctx: Optional[Union[Context, Caller]] = None) -> Verdict:
        """The second step of confirm-before-write: ``token`` is the host-only
        ``verdict.confirmation.token`` of a ``confirm`` outcome, ``ctx`` the caller confirming
        (the same subject). Policy, engines, loop and taint run again with the current state; if
        they still allow, the call's verdict (``passed``/``repaired``, with its exact arguments)
        is returned exactly once. An unknown, used, expired or other caller's token is
        ``token_invalid``. ``E_ASYNC`` on a gate with remote state (use :meth:`aconfirm`)."""
        if self._remote:
            raise _remote_sync("confirm")
        return self._confirm_here(token, ctx)

    def _confirm_here(self, token: str, ctx: Optional[Union[Context, Caller]]) -> Verdict:
        c = caller_arg(ctx)
        return self._confirm_text(token, c, ctx)

    def _confirm_text(self, token: str, c: _CallerArg, ctx: Optional[Union[Context, Caller]]) -> Verdict:
        if self._engines is None:
            return self._confirm_native(token, c, None)
        first, facts = self._confirm_stage_one(token, c)
        if facts is None:
            return self._first_is_final(first)
        answer = ask_sync(self._engines, engine_request(first.tool, first.arguments, facts, plain_context(ctx)), self._engine_timeout_ms, "confirm", self._on_engine_error)
        return self._confirm_native(token, c, answer)

    async def aconfirm(self, token: str, ctx: Optional[Union[Context, Caller]] = None) -> Verdict:
        """:meth:`confirm` awaiting asynchronous engines (and, with remote state, Redis on a
        worker thread)."""
        c = caller_arg(ctx)
        if self._engines is None:
            return await self._off_loop(self._confirm_native, token, c, None)
        first, facts = await self._off_loop(self._confirm_stage_one, token, c)
        if facts is None:
            return self._first_is_final(first)
        answer = await ask_async(self._engines, engine_request(first.tool, first.arguments, facts, plain_context(ctx)), self._engine_timeout_ms, self._on_engine_error)
        return await self._off_loop(self._confirm_native, token, c, answer)

    def _confirm_native(self, token: str, c: _CallerArg, engine: Optional[str], out: Optional[List[str]] = None) -> Verdict:
        if self._audit is not None and engine != "":
            self._audit.decided(1)
        tool, t = self._gate.confirm(str(token), c, engine)
        return from_native(tool or "", t, None, out)

    def _first_is_final(self, first: Verdict) -> Verdict:
        """A confirmation refused before the engines' stage: the answer, recorded by the core as such."""
        if self._audit is not None:
            self._audit.decided(1)
        return first

    def _confirm_stage_one(self, token: str, c: _CallerArg) -> "tuple[Verdict, Optional[Dict[str, Any]]]":
        engine: List[str] = []
        first = self._confirm_native(token, c, "", engine)
        return first, _engine_facts(first, engine)

    def mark_session(self, session: str, label: str) -> None:
        """Raises a session's taint to ``label`` by hand (for data the host knows came from
        outside, e.g. a fetched web page); taint never goes down. ``E_CONFIG`` for a label not in
        ``labels``."""
        self._gate.mark_session(well_formed(str(session)), well_formed(str(label)))

    # -- whole turns ----------------------------------------------------------------------

    def guard(self, payload: Any, dialect: str = "auto", *, protocol_version: Optional[str] = None, **ctx: Any) -> TurnReport:
        """Guards a whole model turn: reads every tool call in ``dialect``'s wire shape (or
        recognizes the shape with ``"auto"``), decides each, and answers a :class:`TurnReport`.
        ``payload`` is raw JSON text (the hot path: parsed once, strictly, in Rust) or a parsed
        value; ``ctx`` the caller (``subject=…, roles=[…], session=…``). A call's broken
        arguments refuse that call only; a broken turn raises ``E_PAYLOAD`` naming the dialect
        and JSON path; an unknown dialect, or a turn ``"auto"`` cannot tell, ``E_DIALECT``;
        ``E_ASYNC`` on a gate with remote state (use :meth:`aguard`)."""
        if self._remote:
            raise _remote_sync("guard")
        return self._guard_here(payload, _dialect_str(dialect), protocol_version, ctx)

    def _guard_here(self, payload: Any, dialect: str, protocol_version: Optional[str], ctx: Mapping[str, Any]) -> TurnReport:
        text = payload_text(payload, f"{dialect} payload")
        c = keyword_caller(ctx)
        if self._engines is None:
            return read_native_report(self._guard_native(dialect, text, c, protocol_version), payload, text)
        step = self._guard_step(dialect, text, c, protocol_version)
        if isinstance(step, tuple):
            return read_native_report(step, payload, text)
        context = plain_context(ctx)
        questions = step.questions()
        got = [ask_sync(self._engines, engine_request(q["tool"], q["arguments"], q, context), self._engine_timeout_ms, "guard", self._on_engine_error) for q in questions]
        return read_native_report(self._finish(step, questions, got), payload, text)

    async def aguard(self, payload: Any, dialect: str = "auto", *, protocol_version: Optional[str] = None, **ctx: Any) -> TurnReport:
        """:meth:`guard` awaiting asynchronous engines (each call's engines in payload order; with
        remote state, Redis on a worker thread)."""
        dialect = _dialect_str(dialect)
        # the texts are made here, on the caller's thread: the worker decides on what was passed
        text = payload_text(payload, f"{dialect} payload")
        c = keyword_caller(ctx)
        if self._engines is None:
            return await self._off_loop(lambda: read_native_report(self._guard_native(dialect, text, c, protocol_version), payload, text))
        step = await self._off_loop(self._guard_step, dialect, text, c, protocol_version)
        if isinstance(step, tuple):
            return read_native_report(step, payload, text)
        context = plain_context(ctx)
        questions = step.questions()
        got = [await ask_async(self._engines, engine_request(q["tool"], q["arguments"], q, context), self._engine_timeout_ms, self._on_engine_error) for q in questions]
        return read_native_report(await self._off_loop(self._finish, step, questions, got), payload, text)

    def _guard_native(self, dialect: str, text: str, c: _CallerArg, pv: Optional[str]) -> NativeReport:
        _check_dialect(dialect)
        if self._audit is not None:
            self._audit.decided(1)
        return self._gate.guard(dialect, text, c, pv)

    def _guard_step(self, dialect: str, text: str, c: _CallerArg, pv: Optional[str]) -> "Union[NativeReport, _native.PendingTurn]":
        """The engines' first step: the report when no call reaches them, else the turn decided
        up to them (read once: the second step, :meth:`_finish`, runs only what comes after)."""
        _check_dialect(dialect)
        if self._audit is not None:
            self._audit.decided(1)
        return self._gate.guard_step(dialect, text, c, pv)

    def _finish(self, step: "_native.PendingTurn", questions: List[Dict[str, Any]], got: Sequence[str]) -> NativeReport:
        """The engines' second step: their answers (``got``, one per question) put by call index;
        a call they were not asked about keeps its refusal."""
        answers = ["unasked"] * (1 + max(q["index"] for q in questions))
        for q, a in zip(questions, got):
            answers[q["index"]] = a
        if self._audit is not None:
            self._audit.decided(1)
        return step.finish(answers)

    def filter_tools(self, tools: T, dialect: str, **ctx: Any) -> T:
        """Returns ``tools`` — a tool list in ``dialect``'s request shape (OpenAI ``tools``,
        Anthropic ``tools``, an MCP ``tools/list`` result, Gemini ``functionDeclarations`` …, or a
        request body holding one; JSON text or parsed) — with only the tools this caller could
        call. Undeclared tools are always removed. Lists of live tool objects (LangChain tools,
        Pydantic AI tools, anything with a ``name``) and AI SDK tool records (``ai-sdk``,
        ``ai-sdk-ui``: ``{name: tool}``) keep the caller's own objects; so does a JSON list given
        as Python values: its definitions are the caller's own, in new containers (the outer one
        always, and each one on the way to something removed). Text is answered as text. A JSON
        list this gate is given again (the same text, or values serializing to it, in the same
        dialect) is not read again: from the second time on it is filtered from the core's
        prepared list, with the same answers and errors (16 lists remembered in the process; see
        :meth:`prepare_tools` to skip serializing values as well)."""
        if not isinstance(dialect, str):
            raise ToolGateError("E_DIALECT", "filter_tools: `dialect` is required")
        dialect = well_formed(dialect)
        c = keyword_caller(ctx)
        gate = self._gate
        serial = self._serial

        def listed(d: str, t: str) -> "Optional[_native.ToolList]":
            return tool_list_memo.prepared(serial, d, t, lambda: _native.ToolList(gate, d, t))

        def filter_json(d: str, t: str) -> str:
            known = listed(d, t)
            return gate.filter_tools(d, t, c) if known is None else known.filter(gate, c)

        def filter_removals(d: str, t: str) -> List[List[Union[str, int]]]:
            known = listed(d, t)
            return gate.filter_tools_removals(d, t, c) if known is None else known.removals(gate, c)

        return filter_tool_list(tools, dialect, lambda names: gate.visible_tools(names, c), filter_json, filter_removals)

    def prepare_tools(self, tools: T, dialect: str) -> "PreparedTools[T]":
        """Reads and checks a tool list once, to filter it for many callers:
        ``prepared.filter(**ctx)`` answers what ``filter_tools(tools, dialect, **ctx)`` answers
        for the list as it is now, without sending it to the core or reading it again — the core
        asks only which of the list's names the caller may see, and remembers what each set of
        answers removes. For a host that offers the same tools to every request. Raises now what
        ``filter_tools`` would raise for this list (``E_PAYLOAD`` / ``E_DIALECT``). See
        :class:`PreparedTools` for what its answers hold."""
        if not isinstance(dialect, str):
            raise ToolGateError("E_DIALECT", "prepare_tools: `dialect` is required")
        dialect = well_formed(dialect)
        live = live_tools(tools, dialect)
        if live is not None:
            return PreparedTools(self._gate, "live", live=live)
        text = payload_text(tools, f"{dialect} tool list")
        native = _native.ToolList(self._gate, dialect, text)
        if isinstance(tools, str):
            return PreparedTools(self._gate, "text", native)
        if isinstance(tools, (bytes, bytearray)):
            return PreparedTools(self._gate, "bytes", native)
        # the answers are cut from what the core read, never from the caller's values again
        return PreparedTools(self._gate, "data", native, snapshot=json.loads(text))

    def stream(self, dialect: str, **ctx: Any) -> ToolCallStream:
        """Guards a streamed model turn (``openai``, ``openai-responses``, ``anthropic``,
        ``ai-sdk``, ``gemini``, ``ai-sdk-ui``, ``pydantic-ai``): push every event into the returned :class:`ToolCallStream`; each
        call is decided the moment it completes, text is forwarded live, a call is held until
        complete and then released (repaired) or dropped, and ``end()`` answers the whole turn as
        :meth:`guard` would. Other dialects raise ``E_DIALECT``; a gate with engines ``E_ASYNC``."""
        if self._engines is not None:
            raise ToolGateError("E_ASYNC", "stream: this gate has plugged engines, which a stream cannot wait for; guard the assembled turn with aguard instead")
        if not isinstance(dialect, str):
            raise ToolGateError("E_DIALECT", "stream: `dialect` is required")
        dialect = well_formed(dialect)
        return ToolCallStream(_native.Stream(self._gate, dialect, keyword_caller(ctx)), dialect)
