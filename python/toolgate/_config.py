"""The host's half of a config (the core does no I/O): reading a config file (JSON or YAML,
bounded, regular files only), reading the receipt key that ``receipts.privateKeyEnv`` /
``privateKeyFile`` names, and resolving file paths against the config file's folder. A key
written twice is refused on the raw text (:func:`parse_json_config`, before anything is
re-serialized), and YAML is kept to what means the same to the Node reader (src-ts/config-file.ts,
the same rules): JSON's types, no tags beyond ``!!str``/``!!map``/``!!seq``, no plain scalar
YAML 1.1 and 1.2 read differently."""

from __future__ import annotations

import json
import math
import os
import re
import stat
from typing import Any, Dict, Optional

from ._errors import ToolGateError

MAX_CONFIG_BYTES = 16 * 1024 * 1024
"""The largest config file :func:`read_config_file` reads."""
MAX_YAML_ALIASES = 100
"""YAML aliases allowed in one config (a few are handy; thousands are an expansion attack)."""


def _read_bounded(path: str, limit: int, what: str) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise ToolGateError("E_CONFIG", f"{what} {path}: cannot be read ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ToolGateError("E_CONFIG", f"{what} {path}: not a regular file")
        if st.st_size > limit:
            raise ToolGateError("E_CONFIG", f"{what} {path}: {st.st_size} bytes, over the limit of {limit} bytes")
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise ToolGateError("E_CONFIG", f"{what} {path}: over the limit of {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _NotJson(Exception):
    pass


def _pairs(pairs: "list[tuple[str, Any]]") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def _not_json(name: str) -> Any:
    raise _NotJson(name)


def _duplicate_place(text: str, key: str) -> str:
    """Where ``key`` is first written twice in JSON ``text`` (line, and the object's place), for
    the message: one pass, a set per object, run only once a duplicate is known."""
    frames: "list[Optional[set]]" = []
    at: "list[Any]" = []
    expect_key = False
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[{}\[\],]', text):
        tok = m.group()
        if tok[0] == '"':
            if not expect_key:
                continue
            expect_key = False
            k = json.loads(tok)
            seen = frames[-1] if frames else None
            if seen is None:
                break
            if k in seen:
                place = ""
                for p in at[:-1]:
                    place = f"{place}[{p}]" if isinstance(p, int) else (p if place == "" else f"{place}.{p}")
                return f"line {text.count(chr(10), 0, m.start()) + 1}: duplicate key {json.dumps(k)}" + (f" in `{place}`" if place else "")
            seen.add(k)
            at[-1] = k
        elif tok == "{":
            frames.append(set())
            at.append("")
            expect_key = True
        elif tok == "[":
            frames.append(None)
            at.append(0)
        elif tok in "}]":
            if frames:
                frames.pop()
                at.pop()
            expect_key = False
        elif frames:
            if frames[-1] is not None:
                expect_key = True
            else:
                at[-1] += 1
    return f"duplicate key {json.dumps(key)}"


def parse_json_config(text: str, where: str = "config") -> Any:
    """JSON config text parsed, a key written twice in one object refused (``json.loads`` keeps
    the last of two silently, so a config re-serialized from it would say something its text
    does not): ``E_CONFIG`` naming ``where``, the line and the key's place. The one check of JSON
    config text (Node's is ``duplicateKeys`` in src-ts/config-file.ts). ``None`` for text that is
    not JSON (NaN and Infinity included): the core names its error."""
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_not_json)
    except _DuplicateKey as e:
        raise ToolGateError("E_CONFIG", f"{where}: {_duplicate_place(text, e.key)} (a reader keeps one of the two silently); write it once") from None
    except (ValueError, RecursionError, _NotJson):
        return None


# Plain (unquoted, untagged) YAML scalars: the same rules as src-ts/config-file.ts (keep in step).
# Read alike by YAML 1.1 (PyYAML) and YAML 1.2 (the Node reader): these four forms.
_PLAIN_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_PLAIN_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_PLAIN_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
_PLAIN_FLOAT = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)\.[0-9]*(?:[eE][-+][0-9]+)?$")
# Any other plain scalar that either version reads as something other than a string.
_PLAIN_SPECIAL = re.compile(
    "|".join(
        [
            r"^(?:yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF)$",
            r"^[-+]?(?:0b[0-1_]+|0o?[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?)$",
            r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?$",
            r"^[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)$",
            r"^[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)?$",
            r"^(?:<<|=)$",
        ]
    )
)
_MAX_EXACT = 2**53 - 1
_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"


class _Refused(Exception):
    pass


def _plain_scalar(s: str) -> Any:
    """A plain scalar's value, as YAML 1.2's core schema reads it (and JavaScript holds it: an
    integral float is an int); ``_Refused`` for one readers read differently (see
    ``plainScalarProblem`` in src-ts/config-file.ts)."""
    if _PLAIN_NULL.match(s):
        return None
    if _PLAIN_BOOL.match(s):
        return s[0] in "tT"
    if _PLAIN_INT.match(s):
        n = int(s)
        if abs(n) > _MAX_EXACT:
            raise _Refused(f"the integer {s} is past 2^53-1, where readers round it differently; quote it (or write it in a JSON config)")
        return n
    if _PLAIN_FLOAT.match(s):
        f = float(s)
        if not math.isfinite(f):
            raise _Refused(f"the number {s} is not finite (JSON has no such number)")
        return int(f) if f.is_integer() and abs(f) < 1e21 else f
    if _PLAIN_SPECIAL.match(s):
        what = "a date or time" if re.match(r"^[0-9]{4}-", s) else "a number" if re.match(r"^[-+]?[.0-9]", s) else "a merge key" if s == "<<" else "a boolean or special value"
        fix = ", or write the number in decimal without a leading zero or _" if what == "a number" else ", or write the merged keys out" if s == "<<" else ""
        raise _Refused(f'{json.dumps(s)} is {what} to one YAML version and not to another (YAML 1.1 and 1.2 read it differently): quote it ("{s}") for the string{fix}')
    return s


def _yaml_value(raw: str) -> Any:
    """The YAML document in ``raw`` as a JSON value, built from the parser's events (libyaml's
    when PyYAML has it): a key written twice in one mapping (a set per mapping), a key that is
    not a string, a tag beyond ``!!str``/``!!map``/``!!seq``, a plain scalar YAML 1.1 and 1.2
    read differently, more than :data:`MAX_YAML_ALIASES` aliases, and an alias naming a node
    that contains it are ``_Refused`` naming the line."""
    import yaml  # type: ignore[import-untyped]

    loader = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader
    tag_msg = "the tag {} is not allowed (a config holds JSON values: only !!str, !!map and !!seq)"
    # open collections: [container, keys seen (None for a list), pending key, anchor]
    stack: "list[list[Any]]" = []
    anchors: Dict[str, Any] = {}
    open_anchors: "set[str]" = set()
    aliases = 0
    root: Any = None
    documents = 0

    def line(ev: Any) -> int:
        return int(ev.start_mark.line) + 1

    def add(value: Any, ev: Any, is_string: bool) -> None:
        nonlocal root
        if not stack:
            root = value
            return
        top = stack[-1]
        if top[1] is None:
            top[0].append(value)
        elif top[2] is _NO_KEY:
            if not is_string:
                raise _Refused(f"line {line(ev)}: a key must be a string (quote it: a YAML key such as 1, true or null is a different key to each reader)")
            if value in top[1]:
                raise _Refused(f"line {line(ev)}: duplicate key {json.dumps(value)} (a reader keeps one of the two silently); write it once")
            top[1].add(value)
            top[2] = value
        else:
            top[0][top[2]] = value
            top[2] = _NO_KEY

    for ev in yaml.parse(raw, Loader=loader):
        if isinstance(ev, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise _Refused(f"line {line(ev)}: a config is one YAML document")
            if ev.version not in (None, (1, 1), (1, 2)):
                raise _Refused(f"line {line(ev)}: YAML version {ev.version} is not supported")
        elif isinstance(ev, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_YAML_ALIASES:
                raise _Refused(f"more than {MAX_YAML_ALIASES} aliases")
            if ev.anchor in open_anchors:
                raise _Refused(f"line {line(ev)}: an alias names a node that contains it (a cycle has no JSON form)")
            if ev.anchor not in anchors:
                raise _Refused(f"line {line(ev)}: the alias *{ev.anchor} names no anchor")
            value = anchors[ev.anchor]
            add(value, ev, isinstance(value, str))
        elif isinstance(ev, yaml.ScalarEvent):
            if ev.tag is not None and ev.tag != _STR_TAG:
                raise _Refused(f"line {line(ev)}: " + tag_msg.format(ev.tag))
            try:
                value = _plain_scalar(ev.value) if ev.tag is None and ev.implicit[0] else ev.value
            except _Refused as e:
                raise _Refused(f"line {line(ev)}: {e}") from None
            if ev.anchor is not None:
                anchors[ev.anchor] = value
            add(value, ev, isinstance(value, str))
        elif isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            is_map = isinstance(ev, yaml.MappingStartEvent)
            if ev.tag not in (None, "!", _MAP_TAG if is_map else _SEQ_TAG):
                raise _Refused(f"line {line(ev)}: " + tag_msg.format(ev.tag))
            container: Any = {} if is_map else []
            if ev.anchor is not None:
                anchors[ev.anchor] = container
                open_anchors.add(ev.anchor)
            stack.append([container, set() if is_map else None, _NO_KEY, ev.anchor, ev])
        elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            container, _, _, anchor, start = stack.pop()
            if anchor is not None:
                open_anchors.discard(anchor)
            add(container, start, False)
    return root


_NO_KEY = object()


def _yaml_to_json(raw: str, path: str) -> str:
    try:
        import yaml
    except ImportError:
        raise ToolGateError("E_CONFIG", f"config file {path}: reading YAML needs PyYAML (pip install pyyaml)") from None
    try:
        return json.dumps(_yaml_value(raw), ensure_ascii=False, allow_nan=False)
    except _Refused as e:
        raise ToolGateError("E_CONFIG", f"config file {path}: {e}") from None
    except (yaml.YAMLError, TypeError, ValueError, RecursionError) as e:
        raise ToolGateError("E_CONFIG", f"config file {path}: {str(e)[:500]}") from None


def read_config_file(path: str) -> str:
    """The config file at ``path`` as JSON text (``.yaml``/``.yml`` converted; anything else is
    read as JSON). ``E_CONFIG`` naming the file when it cannot be read, is not a regular file,
    is over :data:`MAX_CONFIG_BYTES`, is not UTF-8, or is YAML the gate cannot take."""
    path = os.fspath(path)
    raw = _read_bounded(path, MAX_CONFIG_BYTES, "config file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolGateError("E_CONFIG", f"config file {path}: not UTF-8") from None
    if path.lower().endswith((".yaml", ".yml")):
        return _yaml_to_json(text, path)
    return text


MIN_CHAIN_KEY_BYTES = 16


def _trim_newline(b: bytes) -> bytes:
    """``b`` without one trailing ``\n`` or ``\r\n``."""
    if b.endswith(b"\r\n"):
        return b[:-2]
    return b[:-1] if b.endswith(b"\n") else b


def audit_sinks(audit: Dict[str, Any], at: Any) -> Dict[str, Any]:
    """Where the audit records of a config's ``audit`` block go (see ``_audit.AuditTrail``), with
    the chain key ``audit.chainKeyEnv`` / ``chainKeyFile`` names read: the bytes as given (UTF-8
    for a variable), one trailing newline removed, at least 16 bytes."""
    sinks: Dict[str, Any] = {}
    if isinstance(audit.get("jsonl"), str):
        sinks["jsonl"] = at(audit["jsonl"])
    if isinstance(audit.get("maxFileBytes"), int):
        sinks["max_file_bytes"] = audit["maxFileBytes"]
    if audit.get("stdout") is True:
        sinks["stdout"] = True
    key: Optional[bytes] = None
    where = ""
    if isinstance(audit.get("chainKeyEnv"), str):
        where = "audit.chainKeyEnv"
        value = os.environ.get(audit["chainKeyEnv"])
        if not value:
            raise ToolGateError("E_CONFIG", f"config at `audit.chainKeyEnv`: the environment variable {audit['chainKeyEnv']} is not set")
        key = value.encode("utf-8")
    elif isinstance(audit.get("chainKeyFile"), str):
        where = "audit.chainKeyFile"
        key = _read_bounded(at(audit["chainKeyFile"]), 4096, "config at `audit.chainKeyFile`:")
    if key is not None:
        key = _trim_newline(key)
        if len(key) < MIN_CHAIN_KEY_BYTES:
            raise ToolGateError("E_CONFIG", f"config at `{where}`: the chain key is {len(key)} bytes; at least {MIN_CHAIN_KEY_BYTES} are needed (for example `openssl rand -base64 32`)")
        sinks["chain_key"] = key
    return sinks


def prepare_config(config: Dict[str, Any], base_dir: Optional[str]) -> "tuple[Dict[str, Any], Optional[Dict[str, Any]]]":
    """``config`` with the receipt key read into ``receipts.privateKey`` (from the environment
    variable or file it names) and ``audit.jsonl`` made absolute, and the audit sinks (``None``
    without an ``audit`` block). Paths resolve against ``base_dir`` (the config file's folder;
    default the working directory). Errors are ``E_CONFIG`` naming the key, never the key
    material."""

    def at(p: str) -> str:
        return os.path.abspath(p if base_dir is None or os.path.isabs(p) else os.path.join(base_dir, p))

    out = dict(config)
    receipts = config.get("receipts")
    if isinstance(receipts, dict) and receipts.get("privateKey") is None:
        seed = None
        env = receipts.get("privateKeyEnv")
        file = receipts.get("privateKeyFile")
        if isinstance(env, str):
            seed = os.environ.get(env)
            if seed is None or not seed.strip():
                raise ToolGateError("E_CONFIG", f"config at `receipts.privateKeyEnv`: the environment variable {env} is not set")
        elif isinstance(file, str):
            full = at(file)
            seed = _read_bounded(full, 4096, "config at `receipts.privateKeyFile`:").decode("utf-8", "replace")
        if seed is not None:
            out["receipts"] = {**receipts, "privateKey": seed.strip()}
    audit = config.get("audit")
    if not isinstance(audit, dict):
        return out, None
    if isinstance(audit.get("jsonl"), str):
        out["audit"] = {**audit, "jsonl": at(audit["jsonl"])}
    return out, audit_sinks(audit, at)
