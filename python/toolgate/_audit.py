"""The audit trail's host half (the format of docs/audit.md, the same as the Node package's, so
`toolgate audit verify` checks a Python-written log, and Python and Node processes can take turns
on one file): the core builds one JSON record per decision into a bounded buffer; this drains it,
links every line to the one before (``prev``: the SHA-256 of the previous line's bytes, base64url
— or, with ``audit.chainKeyEnv`` / ``chainKeyFile``, the previous line's own ``mac``: every keyed
line ends in the HMAC-SHA-256 under the key of its content), and writes the lines to the sinks:
an append-only JSONL file (one write per batch of whole lines; rotation by size continues the
chain), standard output, and a callback (the core cuts each record to fit what ``verify`` reads). A gate opening a keyed log links to its last line only when that line's ``mac`` proves
it; otherwise its ``open`` record says ``unprovenTail`` (and ``verify`` reports that line).

Nothing is written on the hot path: records are drained every ``FLUSH_EVERY`` decisions, every
``FLUSH_MS`` by a background thread, on ``gate.flush()``, when the gate is collected and at exit.
A failing sink is reported to the core, which then refuses calls (``audit_unavailable``) unless
``audit.onFailure`` is ``"allow"``.
"""

from __future__ import annotations

import atexit
import base64
import datetime
import errno
import hashlib
import hmac
import json
import os
import re
import stat
import sys
import threading
import warnings
import weakref
from typing import Any, Callable, Dict, List, Optional

from ._contract import AUDIT_MAX_LINE_BYTES
from ._errors import ToolGateError

FLUSH_EVERY = 1024
"""Decisions between two synchronous drains."""
FLUSH_MS = 100
"""Milliseconds between background drains."""
KEYED_CHAIN = "hmac-sha256"
MIN_CHAIN_KEY_BYTES = 16

MAX_LINE_BYTES = AUDIT_MAX_LINE_BYTES
"""The longest line ``verify`` reads and a gate reads back on (re)open; the core cuts every record
it builds to fit with ``prev`` and ``mac`` added (docs/audit.md)."""
_BACK_CHUNK = 1 << 16
"""Bytes read at a time when scanning a file backwards for a newline (src-ts/audit/chain.ts)."""


def _b64url(digest: bytes) -> str:
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def line_hash(line: bytes) -> str:
    """SHA-256 of a line's bytes, base64url: the ``prev`` of the line after it."""
    return _b64url(hashlib.sha256(line).digest())


def line_mac(key: bytes, line: bytes) -> str:
    """HMAC-SHA-256 of ``line`` under ``key``, base64url (a keyed line's own ``mac`` is this over
    the line without that member: see :func:`proven_seal`)."""
    return _b64url(hmac.new(key, line, hashlib.sha256).digest())


def chain_key_id(key: bytes) -> str:
    """A chain key's public id (it names the key in ``open`` records, and tells nothing of it)."""
    return line_mac(key, b"toolgate audit chain key id")[:16]


# A keyed line's own MAC (``"mac"``, the last member): the HMAC-SHA-256 under the key of the line
# as it reads without that member — its bytes up to ``,"mac":"…"`` followed by ``}``. The next
# line's ``prev`` is that value, so one HMAC per line both authenticates the line and chains it.
_SEAL_PREFIX = b',"mac":"'
_SEAL_BYTES = len(_SEAL_PREFIX) + 43 + 2
"""``,"mac":"`` + 43 base64url characters + ``"}``."""
_B64URL = re.compile(rb"[A-Za-z0-9_-]{43}")


def seal_in(line: bytes) -> Optional[str]:
    """The ``mac`` member a line ends in (not checked), or ``None`` when it ends in none."""
    if len(line) <= _SEAL_BYTES or not line.endswith(b'"}'):
        return None
    at = len(line) - _SEAL_BYTES
    if line[at : at + len(_SEAL_PREFIX)] != _SEAL_PREFIX:
        return None
    mac = line[at + len(_SEAL_PREFIX) : -2]
    return mac.decode("ascii") if _B64URL.fullmatch(mac) else None


def _seal_of(key: bytes, body: bytes) -> str:
    """The HMAC-SHA-256 under ``key`` of a line's content (``body``: the line without its ``mac``
    member and without its closing brace)."""
    h = hmac.new(key, body, hashlib.sha256)
    h.update(b"}")
    return _b64url(h.digest())


def proven_seal(key: bytes, line: bytes) -> Optional[str]:
    """The line's ``mac`` member when it is the HMAC of the line's content under ``key`` (the line
    is proven), else ``None``."""
    mac = seal_in(line)
    if mac is None:
        return None
    return mac if hmac.compare_digest(_seal_of(key, line[: len(line) - _SEAL_BYTES]), mac) else None


def _newline_before(fd: int, to: int, lo: int) -> int:
    """The position of the last newline in bytes ``[lo, to)`` of an open file, or -1: read
    backwards a chunk at a time, so a long line costs one chunk of memory."""
    end = to
    while end > lo:
        start = max(lo, end - _BACK_CHUNK)
        buf = os.pread(fd, end - start, start)
        at = buf.rfind(b"\n")
        if at >= 0:
            return start + at
        if not buf:
            break
        end = start
    return -1


class _Tail:
    """The end of an open file as a gate finds it when it opens the file."""

    __slots__ = ("line", "too_long", "torn", "size")

    def __init__(self, line: Optional[bytes], too_long: bool, torn: int, size: int) -> None:
        self.line = line
        """The last whole line's bytes (without its newline; possibly empty), or ``None`` when the
        file holds no whole line or that line is :attr:`too_long`."""
        self.too_long = too_long
        """The last whole line is longer than the bound: never read in part."""
        self.torn = torn
        """Bytes after the last newline (a torn line), to be cut off."""
        self.size = size


def _last_line(fd: int, max_line_bytes: int = MAX_LINE_BYTES) -> _Tail:
    """The last whole line of an open file, and the length of any torn tail after it (found
    whatever its length). The line is read back to the newline before it, however far that is, up
    to ``max_line_bytes`` (the longest line ``verify`` reads and a trail writes): a longer line is
    never read in part (src-ts/audit/chain.ts, ``lastLine``)."""
    size = os.fstat(fd).st_size
    if size == 0:
        return _Tail(None, False, 0, size)
    # bytes, not decoded text: a tail cut inside a multi-byte character must not move the cut
    end = _newline_before(fd, size, 0)
    torn = size - end - 1
    if end < 0:
        return _Tail(None, False, torn, size)
    lo = max(0, end - max_line_bytes - 1)
    start = _newline_before(fd, end, lo)
    if start < 0 and lo > 0:
        return _Tail(None, True, torn, size)
    want = end - start - 1
    parts: List[bytes] = []
    got = 0
    while got < want:
        piece = os.pread(fd, want - got, start + 1 + got)
        if not piece:
            raise OSError(f"the file shrank while its last line was read ({got} of {want} bytes)")
        parts.append(piece)
        got += len(piece)
    return _Tail(b"".join(parts), False, torn, size)


# The bytes every line a toolgate writer writes starts with — the core's records, the ``open`` and
# ``rotate`` records of the Node and Python writers, up to the comma after its
# ``type`` (src-ts/audit/chain.ts, ``RECORD_START``).
_RECORD_START = re.compile(rb'\{"v":1,"type":"(?:open|rotate|decision|turn_error)"[,}]')
_START_BYTES = 64
"""Bytes of a file's start read to check it is a toolgate audit log."""
_LOG_FLAGS = os.O_RDWR | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _kind_of(mode: int) -> str:
    """What kind of file ``mode`` is, in words, when it is not a regular file (src-ts/regular-file.ts)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _open_log(path: str, fresh: bool = False) -> int:
    """Opens the audit log ``path`` for appending (created when missing; ``fresh``: created here,
    never an existing file — rotation) and returns its descriptor. The writer modifies no file that
    is not a toolgate audit log, since ``audit.jsonl`` may come from a config nobody vouches for:
    ``E_CONFIG``, before any byte is cut or written, when ``path`` is a symbolic link (never
    followed: a link swapped in later is not either), not a regular file (a FIFO, a device, a
    directory), or a non-empty file whose first line does not start as every toolgate record does
    (``{"v":1,"type":`` and a known type). The same rules and messages as the Node writer's
    ``openLog`` (src-ts/audit/chain.ts)."""
    where = f"audit.jsonl {path}"
    link = f"{where}: is a symbolic link; name the file itself (the audit log is never opened through a link)"
    if not fresh:
        # refused before it is opened: opening a device or FIFO can itself do something
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise ToolGateError("E_CONFIG", f"{where}: cannot be opened for appending ({e.strerror or e})") from None
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise ToolGateError("E_CONFIG", link)
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise ToolGateError("E_CONFIG", f"{where}: is {_kind_of(st.st_mode)}; expected a regular file")
    try:
        fd = os.open(path, _LOG_FLAGS | os.O_CREAT | (os.O_EXCL if fresh else 0), 0o666)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise ToolGateError("E_CONFIG", link) from None
        raise ToolGateError("E_CONFIG", f"{where}: cannot be opened for appending ({e.strerror or e})") from None
    try:
        # what is checked is what was opened
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ToolGateError("E_CONFIG", f"{where}: is {_kind_of(st.st_mode)}; expected a regular file")
        if st.st_size > 0 and not _RECORD_START.match(os.pread(fd, min(_START_BYTES, st.st_size), 0)):
            raise ToolGateError("E_CONFIG", f"{where}: is not a toolgate audit log (its first line is not a toolgate record); it is left as it is — name a new file, an empty one, or a log a gate wrote")
        return fd
    except ToolGateError:
        os.close(fd)
        raise
    except OSError as e:
        os.close(fd)
        raise ToolGateError("E_CONFIG", f"{where}: cannot be read ({e.strerror or e})") from None


class _Chain:
    """Where one hash chain goes: a JSONL file shared by every trail of this process writing to
    that path (two gates on one file still write one chain), or standard output, or a trail's
    own chain for its callback (src-ts/audit/chain.ts, ``Chain``)."""

    def __init__(self, path: Optional[str], key: Optional[bytes]) -> None:
        self.path = path
        self.key = key
        """The chain key (every line carries its own ``mac``), or ``None`` (SHA-256 links)."""
        self.lock = threading.RLock()
        self.fd: Optional[int] = None
        self.bytes = 0
        self.prev: Optional[str] = None
        """What the next line's ``prev`` holds: the SHA-256 of the last line, or, keyed, its ``mac``."""
        self.users = 0
        self.recovered = 0
        """Bytes of a torn tail cut off (reported once, by the next ``open`` record)."""
        self.unproven = False
        """The file's last line could not be proven when the file was (re)read — keyed, it carries
        no ``mac`` of this key over its content; or it is longer than a log line — so ``prev`` is
        not a link the writer vouches for (the line's SHA-256, or ``None``): the next line written
        is an ``open`` (or ``rotate``) record that says so (``unprovenTail``)."""
        if path is not None:
            # a file that is not a toolgate audit log is refused before anything is cut or written
            self.fd = _open_log(path)
            try:
                self.bytes = -1
                self.resync()
            except OSError as e:
                os.close(self.fd)
                self.fd = None
                raise ToolGateError("E_CONFIG", f"audit.jsonl {path}: cannot be opened for appending ({e.strerror or e})") from None

    def append(self, record: str) -> str:
        """Chains one record (a JSON object line without ``prev``): adds ``prev`` (and, keyed,
        ``mac``) as the last members and moves the chain on to it. One hash (or HMAC) per line."""
        # the record without its closing brace, with `prev` added: the line is this and `}`, or,
        # keyed, this, its mac and `}` (the mac is the HMAC of this and `}`)
        link = "null" if self.prev is None else f'"{self.prev}"'
        head = f'{record[:-1]},"prev":{link}'
        if self.key is None:
            line = head + "}"
            self.prev = line_hash(line.encode("utf-8"))
            return line
        mac = _seal_of(self.key, head.encode("utf-8"))
        self.prev = mac
        return f'{head},"mac":"{mac}"}}'

    def resync(self) -> None:
        """Continues from the file as it is (new to this process, or written by another — a Node
        or Python process taking its turn): a torn tail is cut off whole, and the next line links
        to the last whole one — keyed, only when that line's own ``mac`` proves a holder of the
        key wrote it; otherwise the tail is unproven and never vouched for with an HMAC."""
        if self.fd is None:
            return
        if os.fstat(self.fd).st_size == self.bytes:
            return
        last = _last_line(self.fd)
        if last.torn > 0:
            os.ftruncate(self.fd, last.size - last.torn)
            self.recovered += last.torn
        self.bytes = last.size - last.torn
        if last.too_long:
            # longer than any line a gate writes or verify reads: not hashed in part, not linked
            self.prev = None
            self.unproven = True
        elif last.line is None:
            self.prev = None
            self.unproven = False
        else:
            mac = None if self.key is None else proven_seal(self.key, last.line)
            self.prev = mac if mac is not None else line_hash(last.line)
            self.unproven = self.key is not None and mac is None

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
            try:
                with chain.lock:
                    chain.resync()
            except OSError as e:
                raise ToolGateError("E_CONFIG", f"audit.jsonl {where}: cannot be read ({e.strerror or e})") from None
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
        self._write([], opening=True)
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

    def _open_record(self, kind: str, chain: _Chain) -> str:
        """An ``open`` or ``rotate`` record for ``chain``: an ``open`` takes the torn bytes the
        chain cut off, and either says so when the chain's last line is unproven (``unprovenTail``)."""
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        rec: Dict[str, Any] = {"v": 1, "type": kind, "time": now, "pid": os.getpid(), "configHash": self._config_hash}
        if kind == "open" and chain.recovered > 0:
            rec["tornBytesRemoved"] = chain.recovered
        if chain.unproven:
            rec["unprovenTail"] = True
        key = self._sinks.get("chain_key")
        if key is not None:
            rec["chain"] = KEYED_CHAIN
            rec["chainKeyId"] = chain_key_id(key)
        return json.dumps(rec, separators=(",", ":"), ensure_ascii=False)

    def _write(self, records: List[str], opening: bool = False) -> None:
        """Chains ``records`` and writes them to every sink; ``opening``: this trail's ``open``
        record first. While the chain's last line is unproven (or a torn tail was cut since the
        last ``open`` record), a batch starts with an ``open`` record saying so."""
        chain = self._chain
        if chain is None:
            self.lost += len(records)  # closed: nothing can take these any more
            return
        with chain.lock:
            try:
                if chain.path is not None and chain.fd is None:
                    # a rotation failed half-way: opened again (only a toolgate audit log, or a new
                    # or empty file: whatever is at the path now)
                    chain.fd = _open_log(chain.path)
                    chain.bytes = os.fstat(chain.fd).st_size
                if chain.fd is not None:
                    # another process may have written the file since (one taking its turn)
                    chain.resync()
                    limit = self._sinks.get("max_file_bytes")
                    if limit is not None and chain.bytes > 0:
                        # rotate before chaining, so the batch follows the `rotate` record
                        estimate = sum(len(line.encode("utf-8")) + 60 for line in records) + (400 if opening or chain.unproven else 0)
                        if chain.bytes + estimate > limit:
                            self._rotate(chain)
            except (OSError, ToolGateError) as e:
                self._fail(e, len(records))
                return
            recovered = chain.recovered
            unproven = chain.unproven
            lines = records
            if opening or unproven or recovered > 0:
                lines = [self._open_record("open", chain), *records]
                chain.recovered = 0
            start = chain.prev
            written = [chain.append(raw) for raw in lines]
            chain.unproven = False
            out = ("\n".join(written) + "\n").encode("utf-8")
            if chain.fd is not None:
                try:
                    _write_all(chain.fd, out)
                    chain.bytes += len(out)
                except OSError as e:
                    # nothing of this batch is the chain's: the next line follows the last one written
                    chain.prev = start
                    chain.recovered = recovered
                    chain.unproven = unproven
                    self._fail(e, len(records))
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
        ``rotate`` record chained to the old last line (saying so when that line is unproven)."""
        assert chain.path is not None and chain.fd is not None
        os.close(chain.fd)
        chain.fd = None
        n = 1
        while os.path.exists(f"{chain.path}.{n}"):
            n += 1
        os.rename(chain.path, f"{chain.path}.{n}")
        # created here (O_EXCL, no link followed): whatever took the name since the rename is not written to
        chain.fd = _open_log(chain.path, fresh=True)
        chain.bytes = 0
        start = chain.prev
        line = chain.append(self._open_record("rotate", chain))
        data = (line + "\n").encode("utf-8")
        try:
            _write_all(chain.fd, data)
        except OSError:
            chain.prev = start
            raise
        chain.bytes = len(data)
        chain.unproven = False

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
