"""Audit trails written by the Python package are the Node package's format: the Node CLI
(`toolgate audit verify`, the built dist/) verifies them, and names a tampered line. Restarts are
child processes (a restarted host is one); Python and Node processes take turns on one file."""

from __future__ import annotations

import base64
import gc
import hashlib
import hmac
import json
import re
import sys
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from toolgate import ToolGate, ToolGateError

NODE = shutil.which("node")
CLI = ROOT / "dist" / "cli" / "main.js"
TOOLS = [{"name": "search", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}, "required": ["q"]}}]


def verify(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    if NODE is None or not CLI.exists():
        pytest.fail("node and the built npm package (dist/) are needed to verify with the Node CLI")
    return subprocess.run([NODE, str(CLI), "audit", "verify", *args, "--format", "json"], capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})})


def lines(path: Path) -> list:
    return [json.loads(x) for x in path.read_text().splitlines()]


# -- the last line of a log, where a gate (re)opening the file picks the chain up ----------------

KEY = "k3y-0f-the-audit-chain-2026-long-enough"
KEYED = {"chainKeyEnv": "AUDIT_KEY"}
TAIL_TOOLS = [{"name": "transfer"}, {"name": "read"}, {"name": "note"}]
MAX_LINE_BYTES = 16 * 1024 * 1024  # src-ts/audit/lines.ts
DIST = ROOT / "dist" / "index.js"
PY_RUN = """import json, sys
from toolgate import ToolGate
log, calls, audit, tools = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
g = ToolGate({"tools": tools, "audit": {"jsonl": log, **audit}})
with open(calls, encoding="utf-8") as f:
    for sub, tool, args in json.load(f):
        g.check(tool, args, {"subject": sub})
g.flush()
"""
NODE_RUN = """const [log, calls, audit, tools] = process.argv.slice(1)
const { ToolGate } = require(process.env.TOOLGATE_DIST)
const g = new ToolGate({ tools: JSON.parse(tools), audit: { jsonl: log, ...JSON.parse(audit) } })
for (const [subject, tool, args] of JSON.parse(require('node:fs').readFileSync(calls, 'utf8'))) g.check(tool, args, { subject })
g.flush()
"""


def run(kind: str, log: Path, calls: list, audit: dict = KEYED) -> None:
    """One process of a host (a start, some decisions, its exit), ``kind`` "py" or "node":
    ``calls`` [subject, tool, arguments] (in a file: a tool named with a million characters is
    over the limit of one argv string)."""
    if kind == "node" and (NODE is None or not DIST.exists()):
        pytest.fail("node and the built npm package (dist/) are needed for a Node process")
    n = len(list(log.parent.glob("calls-*.json")))
    where = log.parent / f"calls-{n}.json"
    where.write_text(json.dumps(calls), encoding="utf-8")
    argv = [str(log), str(where), json.dumps(audit), json.dumps(TAIL_TOOLS)]
    cmd = [sys.executable, "-c", PY_RUN, *argv] if kind == "py" else [str(NODE), "-e", NODE_RUN, *argv]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, "AUDIT_KEY": KEY, "TOOLGATE_DIST": str(DIST)})
    assert done.returncode == 0, done.stderr


def verify_tail(*args: str) -> tuple:
    """The Node CLI's exit code and JSON report, the chain key in ``AUDIT_KEY``."""
    done = verify(*args, env={"AUDIT_KEY": KEY})
    return done.returncode, (json.loads(done.stdout) if done.stdout else {"stderr": done.stderr})


def raw_lines(path: Path) -> list:
    return path.read_bytes().split(b"\n")[:-1]


def rewrite(path: Path, index: int, edit) -> None:
    """What someone with write access to the file and no key does: rewrite a line, keeping its
    ``prev`` (and ``mac``)."""
    ls = raw_lines(path)
    edited = edit(ls[index])
    assert edited != ls[index]
    ls[index] = edited
    path.write_bytes(b"".join(x + b"\n" for x in ls))


def mallory_to_alice(line: bytes) -> bytes:
    return line.replace(b'"sub":"mallory"', b'"sub":"alice"').replace(b'"tool":"transfer"', b'"tool":"read"')


def b64(digest: bytes) -> str:
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def own_mac(line: bytes) -> str:
    """A keyed line's mac as the docs define it: the HMAC of the line without its ``mac`` member."""
    return b64(hmac.new(KEY.encode(), re.sub(rb',"mac":"[^"]*"\}$', b"}", line), hashlib.sha256).digest())


def test_a_forged_last_record_is_never_vouched_for_by_a_restart(tmp_path):
    log = tmp_path / "restart.jsonl"
    run("py", log, [["mallory", "transfer", {"amount": 9000}]])
    rewrite(log, -1, mallory_to_alice)
    forged = raw_lines(log)[-1]
    run("py", log, [["bob", "read", {}]])
    code, report = verify_tail(str(log), "--key-env", "AUDIT_KEY")
    # before: OK — the restarted gate HMAC'd the forged line, and verify --key accepted it
    assert code == 1 and report["break"]["kind"] == "changed" and report["break"]["line"] == 2, report
    recs = lines(log)
    assert [r["type"] for r in recs] == ["open", "decision", "open", "decision"]
    # the restarted gate did not vouch for line 2: it says so, and links by the plain SHA-256
    assert recs[2]["unprovenTail"] is True and recs[2]["chain"] == "hmac-sha256"
    assert recs[2]["prev"] == b64(hashlib.sha256(forged).digest())
    # the option for legacy tails does not accept a forged one: the line's own mac fails
    code, report = verify_tail(str(log), "--key-env", "AUDIT_KEY", "--allow-unproven-tail")
    assert code == 1 and report["break"]["kind"] == "changed" and report["break"]["line"] == 2, report
    # the mac stripped from the forged line: reported too
    stripped = tmp_path / "stripped.jsonl"
    run("py", stripped, [["mallory", "transfer", {"amount": 9000}]])
    rewrite(stripped, -1, lambda x: re.sub(rb',"mac":"[^"]*"\}$', b"}", mallory_to_alice(x)))
    run("py", stripped, [["bob", "read", {}]])
    assert lines(stripped)[2]["unprovenTail"] is True
    code, report = verify_tail(str(stripped), "--key-env", "AUDIT_KEY")
    assert code == 1 and report["break"]["kind"] == "changed" and report["break"]["line"] == 2, report


def test_a_forged_last_record_then_a_new_gate_in_the_same_process(tmp_path, monkeypatch):
    log = tmp_path / "in-process.jsonl"
    monkeypatch.setenv("AUDIT_KEY", KEY)
    g1 = ToolGate({"tools": TAIL_TOOLS, "audit": {"jsonl": str(log), **KEYED}})
    g1.check("transfer", {"amount": 9000}, {"subject": "mallory"})
    g1.flush()
    rewrite(log, -1, mallory_to_alice)
    g2 = ToolGate({"tools": [*TAIL_TOOLS, {"name": "new_tool"}], "audit": {"jsonl": str(log), **KEYED}})
    g1.check("read", {}, {"subject": "bob"})
    g1.flush()
    g2.flush()
    assert lines(log)[2]["type"] == "open" and lines(log)[2]["unprovenTail"] is True
    code, report = verify_tail(str(log), "--key-env", "AUDIT_KEY")
    assert code == 1 and report["break"]["kind"] == "changed" and report["break"]["line"] == 2, report


def test_an_honest_restart_links_by_the_last_lines_mac(tmp_path):
    log = tmp_path / "honest.jsonl"
    run("py", log, [["ana", "read", {}]])
    run("py", log, [["ana", "transfer", {"amount": 5}]])
    ls = raw_lines(log)
    recs = [json.loads(x) for x in ls]
    assert "unprovenTail" not in recs[2]
    # each line ends in its own mac (the HMAC of the line without it); the next prev is that mac
    for i, line in enumerate(ls):
        assert line.endswith(b',"mac":"' + recs[i]["mac"].encode() + b'"}') and recs[i]["mac"] == own_mac(line)
        assert recs[i]["prev"] == (recs[i - 1]["mac"] if i else None)
    code, report = verify_tail(str(log), "--key-env", "AUDIT_KEY")
    assert (code, report["keyed"], report["summary"]["lines"], report["summary"]["head"], report["warnings"]) == (0, True, 4, recs[3]["mac"], [])


def test_python_and_node_processes_take_turns_on_one_keyed_file(tmp_path, monkeypatch):
    log = tmp_path / "turns.jsonl"
    run("py", log, [["ana", "read", {}], ["ana", "nope", {}]])
    run("node", log, [["bob", "transfer", {"amount": 1}]])
    run("py", log, [["carol", "note", {}]])
    run("node", log, [["dan", "read", {}]])
    # a Python gate that stays open while a Node process takes a turn picks the chain up from it
    monkeypatch.setenv("AUDIT_KEY", KEY)
    gate = ToolGate({"tools": TAIL_TOOLS, "audit": {"jsonl": str(log), **KEYED}})
    gate.check("read", {}, {"subject": "erin"})
    gate.flush()
    run("node", log, [["fay", "read", {}]])
    gate.check("note", {}, {"subject": "erin"})
    gate.flush()
    ls = raw_lines(log)
    recs = [json.loads(x) for x in ls]
    assert [r["type"] for r in recs] == ["open", "decision", "decision", "open", "decision", "open", "decision", "open", "decision", "open", "decision", "open", "decision", "decision"]
    assert not any("unprovenTail" in r or "tornBytesRemoved" in r for r in recs)
    for i, line in enumerate(ls):
        assert recs[i]["mac"] == own_mac(line) and recs[i]["prev"] == (recs[i - 1]["mac"] if i else None)
    # the same members in the same order, whichever package wrote the line
    assert list(recs[0]) == list(recs[3]) and list(recs[4]) == list(recs[6])
    code, report = verify_tail(str(log), "--key-env", "AUDIT_KEY")
    assert (code, report["summary"]["lines"], report["summary"]["opens"], report["warnings"]) == (0, 14, 6, []), report
    # unkeyed, the same
    plain = tmp_path / "turns-plain.jsonl"
    for kind in ("py", "node", "py"):
        run(kind, plain, [["ana", "read", {}]], {})
    code, report = verify_tail(str(plain))
    assert (code, report["summary"]["opens"]) == (0, 3), report


def test_a_last_line_over_1_mib_is_read_back_whole_on_restart(tmp_path):
    named = tmp_path / "long.jsonl"
    run("py", named, [["mallory", "n" * 1_100_000, {}]], {})
    run("py", named, [["ana", "note", {}]], {})
    args = tmp_path / "long-args.jsonl"
    run("py", args, [["mallory", "note", {"text": "x" * 1_100_000}]], {"includeArguments": True})
    run("py", args, [["ana", "note", {}]], {"includeArguments": True})
    for f in (named, args):
        assert f.stat().st_size > 1_100_000
        code, report = verify_tail(str(f))
        # before: BROKEN — the next open linked to a part of the line (or to nothing)
        assert (code, report["summary"]["opens"]) == (0, 2), report.get("break")
    # keyed, the same: the long line's mac proves it
    keyed = tmp_path / "long-keyed.jsonl"
    run("py", keyed, [["mallory", "n" * 1_100_000, {}]])
    run("py", keyed, [["ana", "note", {}]])
    assert "unprovenTail" not in lines(keyed)[2]
    assert verify_tail(str(keyed), "--key-env", "AUDIT_KEY")[0] == 0


def test_a_record_over_the_line_bound_is_cut_to_size(tmp_path):
    log = tmp_path / "huge.jsonl"
    run("py", log, [["mallory", "t" * (MAX_LINE_BYTES + 1000), {}]])
    run("py", log, [["ana", "note", {}]])
    ls = raw_lines(log)
    assert max(len(x) for x in ls) <= MAX_LINE_BYTES
    cut = json.loads(ls[1])
    assert (cut["type"], cut["outcome"], cut["reason"], cut["tool"]) == ("decision", "rejected", "unknown_tool", "t" * 4096)
    assert cut["truncated"]["cut"] == ["tool"] and cut["truncated"]["bytes"] > MAX_LINE_BYTES
    assert list(cut)[-4:] == ["truncated", "configHash", "prev", "mac"]
    assert "unprovenTail" not in lines(log)[2]
    code, report = verify_tail(str(log), "--key-env", "AUDIT_KEY")
    assert code == 0, report  # before: malformed (a line over 16 MiB)


def test_a_last_line_longer_than_any_a_gate_writes_is_never_hashed_in_part(tmp_path):
    log = tmp_path / "overlong.jsonl"
    run("py", log, [["ana", "note", {}]], {})
    with open(log, "ab") as f:
        f.write(b'{"v":1,"type":"decision","x":"' + b"y" * MAX_LINE_BYTES + b'","prev":null}\n')
    run("py", log, [["ana", "note", {}]], {})
    tail = [json.loads(x) for x in raw_lines(log)[-2:]]
    assert tail[0]["type"] == "open" and tail[0]["unprovenTail"] is True and tail[0]["prev"] is None
    code, report = verify_tail(str(log))
    assert (code, report["break"]["kind"], report["break"]["line"]) == (1, "malformed", 3), report


def test_a_torn_tail_over_1_mib_is_cut_off_whole(tmp_path):
    log = tmp_path / "torn-long.jsonl"
    run("py", log, [["ana", "note", {}]], {})
    torn = b'{"v":1,"type":"decision","x":"' + b"z" * 1_200_000
    with open(log, "ab") as f:
        f.write(torn)
    run("py", log, [["ana", "note", {}]], {})
    recs = lines(log)
    assert recs[2]["type"] == "open" and recs[2]["tornBytesRemoved"] == len(torn)
    code, report = verify_tail(str(log))
    assert code == 0, report  # before: the torn bytes were kept, and the open linked to nothing


def test_decisions_are_recorded_and_the_node_cli_verifies_the_chain(tmp_path):
    log = tmp_path / "audit.jsonl"
    seen: list = []
    gate = ToolGate({"tools": TOOLS, "audit": {"jsonl": str(log)}}, on_audit=seen.append)
    gate.check("search", '{"q": "a", "n": "2"}', {"subject": "ana", "call_id": "c1"})
    gate.check("nope", "{}")
    gate.guard({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": {"q": 1}}]}, "anthropic")
    gate.flush()
    recs = lines(log)
    assert recs[0]["type"] == "open" and recs[0]["prev"] is None
    assert [r.get("outcome") for r in recs[1:]] == ["repaired", "rejected", "repaired"]
    assert len(seen) == len(recs)
    done = verify(str(log))
    assert done.returncode == 0, done.stdout + done.stderr
    # one changed byte in a middle line: the Node verifier names the line
    text = log.read_text().splitlines()
    text[2] = text[2].replace('"rejected"', '"passed"')
    log.write_text("\n".join(text) + "\n")
    bad = verify(str(log))
    assert bad.returncode != 0
    assert "3" in bad.stdout


def test_two_gates_one_file_one_chain_and_a_torn_tail_is_cut(tmp_path):
    log = tmp_path / "a.jsonl"
    log.write_text("")
    a = ToolGate({"tools": TOOLS, "audit": {"jsonl": str(log)}})
    b = ToolGate({"tools": TOOLS, "audit": {"jsonl": str(log)}})
    for i in range(3):
        a.check("search", '{"q": "x"}')
        b.check("search", '{"q": "y"}')
        a.flush()
        b.flush()
    del a, b
    gc.collect()
    with open(log, "ab") as f:
        f.write(b'{"v":1,"type":"check","torn')
    c = ToolGate({"tools": TOOLS, "audit": {"jsonl": str(log)}})
    c.check("search", '{"q": "z"}')
    c.flush()
    recs = lines(log)
    assert sum(1 for r in recs if r["type"] == "open") == 3
    assert recs[-2]["tornBytesRemoved"] == len(b'{"v":1,"type":"check","torn')
    done = verify(str(log))
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_burst_loses_nothing_and_a_collected_gate_writes_its_last_records(tmp_path):
    log = tmp_path / "burst.jsonl"
    gate = ToolGate({"tools": TOOLS, "audit": {"jsonl": str(log)}})
    for i in range(5000):
        gate.check("search", '{"q": "%d"}' % i)
    del gate
    gc.collect()
    recs = lines(log)
    assert len(recs) == 5001 and {r["type"] for r in recs} == {"open", "decision"}
    assert verify(str(log)).returncode == 0


def test_keyed_chain_verifies_only_with_the_key(tmp_path, monkeypatch):
    log = tmp_path / "keyed.jsonl"
    monkeypatch.setenv("TG_CHAIN_KEY", "0123456789abcdef0123456789abcdef")
    gate = ToolGate({"tools": TOOLS, "audit": {"jsonl": str(log), "chainKeyEnv": "TG_CHAIN_KEY"}})
    gate.check("search", '{"q": "x"}')
    gate.flush()
    assert lines(log)[0]["chain"] == "hmac-sha256"
    assert verify(str(log), "--key-env", "TG_CHAIN_KEY").returncode == 0
    assert verify(str(log)).returncode != 0  # without the key the chain cannot be checked
    monkeypatch.setenv("TG_CHAIN_KEY", "short")
    with pytest.raises(ToolGateError) as e:
        ToolGate({"tools": TOOLS, "audit": {"jsonl": str(log), "chainKeyEnv": "TG_CHAIN_KEY"}})
    assert e.value.code == "E_CONFIG" and "16" in e.value.message and "short" not in e.value.message


def test_rotation_continues_the_chain(tmp_path):
    log = tmp_path / "rot.jsonl"
    gate = ToolGate({"tools": TOOLS, "audit": {"jsonl": str(log), "maxFileBytes": 2000}})
    for i in range(40):
        gate.check("search", '{"q": "%d"}' % i)
        gate.flush()
    rotated = sorted(tmp_path.glob("rot.jsonl.*"))
    assert rotated and lines(log)[0]["type"] == "rotate"
    done = verify(*[str(p) for p in rotated], str(log))
    assert done.returncode == 0, done.stdout + done.stderr


def test_unwritable_log_is_e_config_and_a_failing_sink_refuses_calls(tmp_path):
    with pytest.raises(ToolGateError) as e:
        ToolGate({"tools": TOOLS, "audit": {"jsonl": str(tmp_path / "missing-dir" / "a.jsonl")}})
    assert e.value.code == "E_CONFIG"

    def broken(line: str) -> None:
        raise OSError("disk full")

    with pytest.warns(RuntimeWarning):
        gate = ToolGate({"tools": TOOLS, "audit": {}}, on_audit=broken)
    v = gate.check("search", '{"q": "x"}')  # the open record already failed: onFailure "deny"
    assert (v.outcome, v.reason) == ("denied", "audit_unavailable")


def test_on_audit_needs_an_audit_block():
    with pytest.raises(ToolGateError) as e:
        ToolGate({"tools": TOOLS}, on_audit=print)
    assert e.value.code == "E_CONFIG"


# -- the file audit.jsonl names, when the config comes from a repository or a tenant -------------
# The writer opened any path (absolute, `..`, through symlinks, a FIFO), cut its "torn tail" and
# appended JSON lines. Now it modifies only a toolgate audit log (a new file, an empty one, or one
# whose first line is a toolgate record), never through a final symlink, only a regular file:
# anything else is E_CONFIG before a byte is cut or written (src-ts/audit/chain.ts, openLog;
# __test__/adversarial/audit-file.test.ts).

NOT_A_LOG = "is not a toolgate audit log"
RC_ARG = '{"q": "$(touch /tmp/toolgate-should-never-exist)"}'


def untrusted(tmp_path: Path, audit: dict) -> Path:
    """A config in ``repo/`` (as a repository would ship it), next to a ``victim/`` folder."""
    (tmp_path / "repo").mkdir(exist_ok=True)
    (tmp_path / "victim").mkdir(exist_ok=True)
    n = len(list((tmp_path / "repo").glob("t-*.json")))
    config = tmp_path / "repo" / f"t-{n}.json"
    config.write_text(json.dumps({"tools": TOOLS, "audit": audit}))
    return config


def refused(make) -> ToolGateError:
    with pytest.raises(ToolGateError) as e:
        make()
    assert e.value.code == "E_CONFIG"
    return e.value


def test_a_non_log_file_with_a_torn_tail_is_untouched(tmp_path):
    config = untrusted(tmp_path, {"jsonl": "../victim/data.bin"})
    data = tmp_path / "victim" / "data.bin"
    original = b"header\n\x00\x01\x02\xff\xfethe last 25 bytes, no NL"
    data.write_bytes(original)
    e = refused(lambda: ToolGate.from_file(config))
    assert f"audit.jsonl {data}: {NOT_A_LOG}" in e.message
    assert data.read_bytes() == original
    refused(lambda: ToolGate({"tools": TOOLS, "audit": {"jsonl": str(data)}}))
    assert data.read_bytes() == original


def test_an_rc_like_file_is_never_appended_to(tmp_path):
    rc = tmp_path / "victim" / "fakerc"
    config = untrusted(tmp_path, {"jsonl": str(rc), "includeArguments": True})
    text = "export PATH=$HOME/bin:$PATH\necho rc-loaded\n"
    rc.write_text(text)
    e = refused(lambda: ToolGate.from_file(config))
    assert NOT_A_LOG in e.message
    assert rc.read_text() == text
    for first in ['{"level":"info","msg":"x"}\n', '{"v":2,"type":"open"}\n', '{"type":"open","v":1}\n', '{"v":1,"type":"check"}\n', '\n{"v":1,"type":"open"}\n']:
        other = tmp_path / "victim" / f"other-{len(first)}-{first[2]}.jsonl"
        other.write_text(first + "torn")
        assert NOT_A_LOG in refused(lambda: ToolGate({"tools": TOOLS, "audit": {"jsonl": str(other)}})).message
        assert other.read_text() == first + "torn"


def test_a_symlink_is_refused_and_its_target_untouched(tmp_path):
    (tmp_path / "victim").mkdir()
    log = tmp_path / "victim" / "real.jsonl"
    g = ToolGate({"tools": TOOLS, "audit": {"jsonl": str(log)}})
    g.check("search", '{"q": "x"}')
    g.flush()
    before = log.read_bytes()
    rc = tmp_path / "victim" / "rc"
    rc.write_text("echo hi\n")
    (tmp_path / "link.jsonl").symlink_to(log)
    (tmp_path / "rc.jsonl").symlink_to(rc)
    for name in ("link.jsonl", "rc.jsonl"):
        config = untrusted(tmp_path, {"jsonl": f"../{name}", "includeArguments": True})
        e = refused(lambda: ToolGate.from_file(config))
        assert f"audit.jsonl {tmp_path / name}: is a symbolic link" in e.message
    assert log.read_bytes() == before
    assert rc.read_text() == "echo hi\n"


def test_a_fifo_and_a_directory_are_refused(tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    e = refused(lambda: ToolGate({"tools": TOOLS, "audit": {"jsonl": str(fifo)}}))
    assert f"audit.jsonl {fifo}: is a FIFO (named pipe); expected a regular file" in e.message
    (tmp_path / "d.jsonl").mkdir()
    assert "d.jsonl: is a directory; expected a regular file" in refused(lambda: ToolGate({"tools": TOOLS, "audit": {"jsonl": str(tmp_path / "d.jsonl")}})).message


@pytest.mark.parametrize("keyed", [False, True])
def test_an_existing_log_with_a_torn_tail_still_works(tmp_path, monkeypatch, keyed):
    monkeypatch.setenv("AUDIT_KEY", KEY)
    audit = {"jsonl": "audit.jsonl", **(KEYED if keyed else {})}
    config = untrusted(tmp_path, audit)
    log = tmp_path / "repo" / "audit.jsonl"
    run("py", log, [["ana", "read", {}]], {**audit, "jsonl": str(log)})
    torn = b'{"v":1,"type":"decision","ti'
    with open(log, "ab") as f:
        f.write(torn)
    g = ToolGate.from_file(config)
    g.check("read", "{}")
    g.flush()
    recs = lines(log)
    assert recs[2]["type"] == "open" and recs[2]["tornBytesRemoved"] == len(torn) and "unprovenTail" not in recs[2]
    code, report = verify_tail(str(log), *(["--key-env", "AUDIT_KEY"] if keyed else []))
    assert code == 0, report


def test_a_torn_first_record_and_a_trimmed_log_are_logs_too(tmp_path):
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(b'{"v":1,"type":"open","time":"2026-')
    ToolGate({"tools": TOOLS, "audit": {"jsonl": str(torn)}}).flush()
    assert lines(torn)[0]["tornBytesRemoved"] == len(b'{"v":1,"type":"open","time":"2026-')
    full = tmp_path / "full.jsonl"
    run("py", full, [["ana", "read", {}]], {})
    trimmed = tmp_path / "trimmed.jsonl"
    trimmed.write_bytes(b"".join(x + b"\n" for x in raw_lines(full)[1:]))
    run("py", trimmed, [["ana", "read", {}]], {})
    assert [r["type"] for r in lines(trimmed)] == ["decision", "open", "decision"]

