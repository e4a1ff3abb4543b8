"""Audit trails written by the Python package are the Node package's format: the Node CLI
(`toolgate audit verify`, the built dist/) verifies them, and names a tampered line."""

from __future__ import annotations

import gc
import json
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
