"""The host's half of a config (the core does no I/O): reading a config file (JSON or YAML,
bounded, regular files only), reading the receipt key that ``receipts.privateKeyEnv`` /
``privateKeyFile`` names, and resolving file paths against the config file's folder."""

from __future__ import annotations

import json
import os
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


def _yaml_to_json(raw: str, path: str) -> str:
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        raise ToolGateError("E_CONFIG", f"config file {path}: reading YAML needs PyYAML (pip install pyyaml)") from None

    class Loader(yaml.SafeLoader):
        """SafeLoader refusing duplicate keys and more than MAX_YAML_ALIASES aliases."""

        aliases = 0

        def compose_node(self, parent, index):  # type: ignore[no-untyped-def]
            if self.check_event(yaml.AliasEvent):
                Loader.aliases += 1
                if Loader.aliases > MAX_YAML_ALIASES:
                    raise yaml.YAMLError(f"more than {MAX_YAML_ALIASES} aliases")
            return super().compose_node(parent, index)

        def construct_mapping(self, node, deep=False):  # type: ignore[no-untyped-def]
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    try:
        value = yaml.load(raw, Loader=Loader)  # noqa: S506 — a SafeLoader subclass
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
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
