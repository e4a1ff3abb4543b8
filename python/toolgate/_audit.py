"""The audit trail's host half (the format of docs/audit.md, the same as the Node package's, so
`toolgate audit verify` checks a Python-written log): the core builds one JSON record per
decision into a bounded buffer; this drains it, links every line to the one before (``prev``: the
SHA-256 of the previous line's bytes, base64url — or its HMAC-SHA-256 under ``audit.chainKeyEnv``
/ ``chainKeyFile``), and writes the lines to the sinks: an append-only JSONL file (one write per
batch of whole lines; rotation by size continues the chain), standard output, and a callback.

Nothing is written on the hot path: records are drained every ``FLUSH_EVERY`` decisions, every
``FLUSH_MS`` by a background thread, on ``gate.flush()``, when the gate is collected and at exit.
A failing sink is reported to the core, which then refuses calls (``audit_unavailable``) unless
``audit.onFailure`` is ``"allow"``.
"""

from __future__ import annotations

import atexit
import base64
import datetime
import hashlib
import hmac
import json
import os
import sys
import threading
import warnings
import weakref
from typing import Any, Callable, Dict, List, Optional

from ._errors import ToolGateError

FLUSH_EVERY = 1024
"""Decisions between two synchronous drains."""
FLUSH_MS = 100
"""Milliseconds between background drains."""
KEYED_CHAIN = "hmac-sha256"
MIN_CHAIN_KEY_BYTES = 16


def _b64url(digest: bytes) -> str:
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def line_hash(line: bytes) -> str:
    """SHA-256 of a line's bytes, base64url: the ``prev`` of the line after it."""
    return _b64url(hashlib.sha256(line).digest())


def line_mac(key: bytes, line: bytes) -> str:
    """HMAC-SHA-256 of a line's bytes under ``key``, base64url: ``prev`` in a keyed chain."""
    return _b64url(hmac.new(key, line, hashlib.sha256).digest())


def chain_key_id(key: bytes) -> str:
    """A chain key's public id (it names the key in ``open`` records, and tells nothing of it)."""
    return line_mac(key, b"toolgate audit chain key id")[:16]


def _chained(line: str, prev: Optional[str]) -> str:
    """Inserts ``"prev":…`` as the last member of a record line (the core's lines end in ``}``)."""
    return f'{line[:-1]},"prev":{"null" if prev is None else json.dumps(prev)}}}'


class _Chain:
    """Where one hash chain goes: a JSONL file shared by every trail of this process writing to
    that path (two gates on one file still write one chain), or standard output, or a trail's
    own chain for its callback."""

    def __init__(self, path: Optional[str], key: Optional[bytes]) -> None:
        self.path = path
        self.key = key
        self.lock = threading.RLock()
        self.fd: Optional[int] = None
        self.bytes = 0
        self.prev: Optional[str] = None
        self.users = 0
        self.recovered = 0
        if path is not None:
            try:
                self.fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
                self.bytes = -1
                self.resync()
            except OSError as e:
                if self.fd is not None:
                    os.close(self.fd)
                raise ToolGateError("E_CONFIG", f"audit.jsonl {path}: cannot be opened for appending ({e.strerror or e})") from None

    def link(self, line: str) -> str:
        data = line.encode("utf-8")
        return line_hash(data) if self.key is None else line_mac(self.key, data)

    def resync(self) -> None:
        """Continues from the file as it is (new to this process, or written by another): a torn
        tail is cut off, and the next line links to the last whole one."""
        if self.fd is None:
            return
        size = os.fstat(self.fd).st_size
        if size == self.bytes:
            return
        chunk = min(size, 1 << 20)
        buf = os.pread(self.fd, chunk, size - chunk) if chunk else b""
        end = buf.rfind(b"\n")
        torn = (size if chunk == size else 0) if end < 0 else chunk - end - 1
        if torn > 0:
            os.ftruncate(self.fd, size - torn)
            self.recovered += torn
        self.bytes = size - torn
        if end < 0:
            self.prev = None
            return
        start = buf.rfind(b"\n", 0, end)
        last = buf[start + 1 : end]
        self.prev = None if not last else (line_hash(last) if self.key is None else line_mac(self.key, last))

    def release(self) -> None:
        with _FILES_LOCK:
            self.users -= 1
            if self.users > 0:
                return
            if self.path is not None:
                _FILES.pop(self.path, None)
            if self.fd is not None:
                os.close(self.fd)
                self.fd = None


_FILES: Dict[str, _Chain] = {}
_FILES_LOCK = threading.Lock()
_STDOUT = "\0stdout"


def _chain_for(sinks: Dict[str, Any]) -> _Chain:
    where = sinks.get("jsonl") or (_STDOUT if sinks.get("stdout") else None)
    key = sinks.get("chain_key")
    with _FILES_LOCK:
        chain = _FILES.get(where) if where is not None else None
        if chain is None:
            chain = _Chain(None if where in (None, _STDOUT) else where, key)
            if where is not None:
                _FILES[where] = chain
        else:
            if (chain.key is None) != (key is None) or (key is not None and not hmac.compare_digest(chain.key or b"", key)):
                name = "audit.stdout" if where == _STDOUT else f"audit.jsonl {where}"
                raise ToolGateError("E_CONFIG", f"{name}: another gate of this process writes it with {'no chain key' if chain.key is None else 'another chain key'}; gates sharing a log must share its audit.chainKeyEnv / chainKeyFile")
            with chain.lock:
                chain.resync()
        chain.users += 1
        return chain


class AuditTrail:
    """One gate's trail (see the module docs). ``native`` is the gate's ``toolgate._native.Gate``;
    ``sinks``: ``jsonl`` (absolute path), ``max_file_bytes``, ``stdout``, ``on_audit``,
    ``chain_key`` (bytes)."""

    def __init__(self, native: Any, sinks: Dict[str, Any], config_hash: str) -> None:
        self._native = native
        self._sinks = sinks
        self._config_hash = config_hash
        self._lock = threading.Lock()
        self._since = 0
        self._failed = False
        self.lost = 0
        self._chain: Optional[_Chain] = _chain_for(sinks)
        recovered, self._chain.recovered = self._chain.recovered, 0
        self._write([self._open_record("open", recovered)])
        _watch(self)

    def decided(self, n: int = 1) -> None:
        """Counts decisions; drains synchronously every :data:`FLUSH_EVERY`."""
        self._since += n
        if self._since >= FLUSH_EVERY:
            self.flush()

    def flush(self) -> None:
        """Drains the core's buffer and writes every record out now."""
        with self._lock:
            self._since = 0
            if self._chain is None:
                return
            text = self._native.drain_audit()
            if not text:
                if self._failed:
                    self._retry()
                return
            self._write(text.split("\n")[:-1])

    def close(self) -> None:
        """A last flush, then lets go of the chain (the file closes with its last trail)."""
        with self._lock:
            if self._chain is None:
                return
            text = self._native.drain_audit()
            if text:
                self._write(text.split("\n")[:-1])
            self._chain.release()
            self._chain = None

    def _open_record(self, kind: str, recovered: int) -> str:
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        rec: Dict[str, Any] = {"v": 1, "type": kind, "time": now, "pid": os.getpid(), "configHash": self._config_hash}
        if recovered > 0:
            rec["tornBytesRemoved"] = recovered
        key = self._sinks.get("chain_key")
        if key is not None:
            rec["chain"] = KEYED_CHAIN
            rec["chainKeyId"] = chain_key_id(key)
        return json.dumps(rec, separators=(",", ":"), ensure_ascii=False)

    def _write(self, lines: List[str]) -> None:
        chain = self._chain
        if chain is None:
            self.lost += len(lines)  # closed: nothing can take these any more
            return
        with chain.lock:
            try:
                if chain.path is not None and chain.fd is None:  # a rotation failed half-way
                    chain.fd = os.open(chain.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
                    chain.bytes = os.fstat(chain.fd).st_size
                if chain.fd is not None:
                    chain.resync()
                    limit = self._sinks.get("max_file_bytes")
                    estimate = sum(len(line.encode("utf-8")) + 60 for line in lines)
                    if limit is not None and chain.bytes > 0 and chain.bytes + estimate > limit:
                        self._rotate(chain)
            except OSError as e:
                self._fail(e, len(lines))
                return
            start = chain.prev
            written = []
            for raw in lines:
                line = _chained(raw, chain.prev)
                chain.prev = chain.link(line)
                written.append(line)
            out = ("\n".join(written) + "\n").encode("utf-8")
            if chain.fd is not None:
                try:
                    _write_all(chain.fd, out)
                    chain.bytes += len(out)
                except OSError as e:
                    chain.prev = start  # nothing of this batch is the chain's
                    self._fail(e, len(lines))
                    return
        try:
            if self._sinks.get("stdout"):
                sys.stdout.write(out.decode("utf-8"))
                sys.stdout.flush()
            on_audit: Optional[Callable[[str], None]] = self._sinks.get("on_audit")
            if on_audit is not None:
                for line in written:
                    on_audit(line)
        except Exception as e:  # a failing callback or stdout is a failing sink
            self._fail(e, 0)
            return
        if self._failed:
            self._failed = False
            self._native.set_audit_failed(False)

    def _rotate(self, chain: _Chain) -> None:
        """Renames the full file to ``<file>.<n>`` and starts a fresh one whose first line is a
        ``rotate`` record chained to the old last line."""
        assert chain.path is not None and chain.fd is not None
        os.close(chain.fd)
        chain.fd = None
        n = 1
        while os.path.exists(f"{chain.path}.{n}"):
            n += 1
        os.rename(chain.path, f"{chain.path}.{n}")
        chain.fd = os.open(chain.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
        line = _chained(self._open_record("rotate", 0), chain.prev)
        data = (line + "\n").encode("utf-8")
        _write_all(chain.fd, data)
        chain.bytes = len(data)
        chain.prev = chain.link(line)

    def _fail(self, err: BaseException, lost: int) -> None:
        self.lost += lost
        self._failed = True
        self._native.set_audit_failed(True)
        warnings.warn(f"toolgate audit: the sink failed ({err}); {f'{lost} records lost and counted; ' if lost else ''}calls are refused (audit_unavailable) until it recovers, unless audit.onFailure is \"allow\"", RuntimeWarning, stacklevel=3)

    def _retry(self) -> None:
        """Nothing to write: a file sink that answers again has recovered. A callback or stdout
        sink recovers only by taking the next records (refused calls are recorded too)."""
        if self._chain is None or self._chain.fd is None:
            return
        try:
            os.fstat(self._chain.fd)
        except OSError:
            return
        self._failed = False
        self._native.set_audit_failed(False)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


# -- the background drain ---------------------------------------------------------------------

_LIVE: "weakref.WeakSet[AuditTrail]" = weakref.WeakSet()
_THREAD: Optional[threading.Thread] = None
_THREAD_LOCK = threading.Lock()


def _watch(trail: AuditTrail) -> None:
    """Registers ``trail`` with the one background drain of this process (a daemon thread)."""
    global _THREAD
    _LIVE.add(trail)
    with _THREAD_LOCK:
        if _THREAD is None:
            _THREAD = threading.Thread(target=_drain_forever, name="toolgate-audit", daemon=True)
            _THREAD.start()
            atexit.register(_flush_all)


def _drain_forever() -> None:
    stop = threading.Event()
    while not stop.wait(FLUSH_MS / 1000):
        _flush_all()


def _flush_all() -> None:
    for trail in list(_LIVE):
        try:
            trail.flush()
        except Exception:  # reported by the trail itself; the drain goes on
            pass
