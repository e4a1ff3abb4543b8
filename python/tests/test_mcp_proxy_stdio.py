"""`toolgate mcp-proxy` (the Node CLI, built dist/) in front of a real MCP server written with the
official Python SDK (`mcp`, stdio). That server reads its stdin as a text stream in
universal-newline mode, so a bare carriage return ends a line for it, where the MCP stdio framing
(and the proxy's reader) ends lines at `\\n` only. JSON reads `\\r` as whitespace: a client line
`{…allowed call…,"x":\\r{…denied call…}\\r}` is one allowed call to the gate. Forwarded as it came,
the Python server read three lines and ran the denied call between them. The proxy now writes
such a line from the parsed message, and every denied tool here must stay unrun."""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT

NODE = shutil.which("node")
CLI = ROOT / "dist" / "cli" / "main.js"

SERVER = """
import pathlib, sys
from mcp.server.mcpserver import MCPServer

MARKS = pathlib.Path(sys.argv[1])
app = MCPServer("cr-probe")


@app.tool()
def echo(text: str) -> str:
    \"\"\"Echo the text.\"\"\"
    return "ran echo " + text


@app.tool()
def danger(cmd: str) -> str:
    \"\"\"Must never run: the policy denies it.\"\"\"
    (MARKS / "danger").write_text(cmd)
    return "ran danger"


@app.tool()
def wipe() -> str:
    \"\"\"Must never run: the policy denies it.\"\"\"
    (MARKS / "wipe").write_text("ran")
    return "ran wipe"


app.run("stdio")
"""

CONFIG = {
    "version": 1,
    "tools": [{"name": "echo"}, {"name": "danger"}, {"name": "wipe"}],
    "policy": {"rules": [{"effect": "allow", "tools": ["echo"]}]},
}


def rpc(id_: int, method: str, params: dict | None = None) -> str:
    m: dict = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        m["params"] = params
    return json.dumps(m, separators=(",", ":"))


def test_a_call_hidden_behind_bare_carriage_returns_never_reaches_a_python_sdk_server(tmp_path: Path) -> None:
    if NODE is None or not CLI.exists():
        pytest.fail("node and the built npm package (dist/) are needed to run `toolgate mcp-proxy`")
    server = tmp_path / "server.py"
    server.write_text(SERVER)
    marks = tmp_path / "marks"
    marks.mkdir()
    config = tmp_path / "config.json"
    config.write_text(json.dumps(CONFIG))
    hidden_danger = rpc(90, "tools/call", {"name": "danger", "arguments": {"cmd": "rm -rf /"}})
    hidden_wipe = rpc(91, "tools/call", {"name": "wipe"})
    calls = [
        # untouched: the gate passes it as written
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"x":\r' + hidden_danger + "\r}}",
        # repaired (5 -> "5"): the gate writes the arguments back into the client's text
        '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":5},"x":\r' + hidden_wipe + "\r}}",
        rpc(5, "tools/call", {"name": "danger", "arguments": {"cmd": "plain"}}),
    ]
    proxy = subprocess.Popen(
        [NODE, str(CLI), "mcp-proxy", "--config", str(config), "--", sys.executable, str(server), str(marks)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # bytes both ways: the lines go out exactly as written, and answers are split at b"\n" only
    answers: dict = {}
    lines: queue.Queue = queue.Queue()
    assert proxy.stdout is not None
    out = proxy.stdout
    threading.Thread(target=lambda: [lines.put(raw) for raw in iter(out.readline, b"")] + [lines.put(b"")], daemon=True).start()
    try:
        assert proxy.stdin is not None

        def send(line: str) -> None:
            proxy.stdin.write(line.encode() + b"\n")
            proxy.stdin.flush()

        def answer(id_: int) -> dict:
            deadline = time.monotonic() + 30
            while id_ not in answers:
                try:
                    raw = lines.get(timeout=max(0.1, deadline - time.monotonic()))
                except queue.Empty:
                    raise AssertionError(f"no answer for id {id_} in 30 s") from None
                assert raw, f"the proxy closed its output before answering id {id_}"
                m = json.loads(raw)
                if "id" in m:
                    answers[m["id"]] = m
            return answers[id_]

        send(rpc(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cr", "version": "1"}}))
        answer(0)
        send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        send(rpc(1, "tools/list"))
        assert {t["name"] for t in answer(1)["result"]["tools"]} >= {"echo", "danger", "wipe"}
        for line in calls:
            send(line)
        got = {i: answer(i) for i in (3, 4, 5)}
        send(rpc(6, "ping"))
        answer(6)  # the server read everything before it
    finally:
        if proxy.stdin is not None:
            proxy.stdin.close()
        try:
            proxy.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proxy.kill()
        stderr = proxy.stderr.read().decode(errors="replace") if proxy.stderr is not None else ""
    assert sorted(p.name for p in marks.iterdir()) == [], f"a denied tool ran behind the gate; proxy log:\n{stderr}"
    assert got[3]["result"]["content"][0]["text"] == "ran echo hi"
    assert got[4]["result"]["content"][0]["text"] == "ran echo 5"
    assert got[5]["result"]["isError"] is True
    assert "no policy rule allows `danger`" in got[5]["result"]["content"][0]["text"]
    assert 90 not in answers and 91 not in answers
