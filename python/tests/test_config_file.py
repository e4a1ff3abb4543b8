"""ToolGate.from_file: JSON and YAML, bounded, regular files only; hostile files fail closed."""

from __future__ import annotations

import asyncio
import os

import pytest

from toolgate import ToolGate, ToolGateError

YAML = """
version: 1
tools:
  - name: search
    inputSchema:
      type: object
      properties:
        limit: {type: integer}
"""


def test_json_and_yaml(tmp_path):
    (tmp_path / "g.yaml").write_text(YAML)
    (tmp_path / "g.json").write_text('{"tools": [{"name": "search"}]}')
    assert ToolGate.from_file(tmp_path / "g.yaml").check("search", '{"limit": "2"}').arguments == {"limit": 2}
    assert ToolGate.from_file(str(tmp_path / "g.json")).tools == ("search",)


@pytest.mark.parametrize(
    "name, text, contains",
    [
        ("dup.yaml", "tools: []\ntools: []\n", "duplicate key"),
        ("bomb.yaml", "a: &a [x, x]\n" + "".join(f"b{i}: &b{i} [*{'a' if i == 0 else f'b{i-1}'}, *{'a' if i == 0 else f'b{i-1}'}]\n" for i in range(60)), "aliases"),
        ("python.yaml", "tools: !!python/object/apply:os.system ['true']\n", "python/object"),
        ("date.yaml", "tools: []\nwhen: 2024-01-01\n", "date"),
        ("typo.json", '{"tools": [], "polcy": {}}', "polcy"),
        ("bad.json", "{", "bad.json"),
        ("latin1.json", b"\xff{}", "UTF-8"),
    ],
)
def test_hostile_or_wrong_files_are_e_config(tmp_path, name, text, contains):
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ToolGateError) as e:
        ToolGate.from_file(p)
    assert e.value.code == "E_CONFIG"
    assert contains in str(e.value)
    assert str(p) in e.value.message


def test_not_a_regular_file(tmp_path):
    fifo = tmp_path / "cfg.json"
    os.mkfifo(fifo)  # opening must not block, reading must not happen
    with pytest.raises(ToolGateError) as e:
        ToolGate.from_file(fifo)
    assert "not a regular file" in e.value.message
    with pytest.raises(ToolGateError) as e:
        ToolGate.from_file(tmp_path)
    assert e.value.code == "E_CONFIG"
    with pytest.raises(ToolGateError) as e:
        ToolGate.from_file(tmp_path / "missing.json")
    assert "cannot be read" in e.value.message


def test_size_bound(tmp_path):
    p = tmp_path / "big.json"
    with open(p, "wb") as f:
        f.truncate(17 * 1024 * 1024)
    with pytest.raises(ToolGateError) as e:
        ToolGate.from_file(p)
    assert "over the limit" in e.value.message


def test_key_file_resolves_against_the_config_folder(tmp_path):
    from toolgate import generate_receipt_key

    key = generate_receipt_key()
    (tmp_path / "k").write_text(key["privateKey"] + "\n")
    (tmp_path / "g.json").write_text('{"tools": [{"name": "t"}], "receipts": {"privateKeyFile": "k"}}')
    assert ToolGate.from_file(tmp_path / "g.json").public_key == key["publicKey"]


def test_remote_state_is_never_silently_local():
    # nothing listens on port 1: a gate with state.redis refuses rather than deciding from memory
    gate = ToolGate({"tools": [{"name": "t"}], "rateLimits": [{"tools": ["t"], "per": "session", "max": 9, "windowSeconds": 60}], "state": {"redis": {"url": "redis://127.0.0.1:1", "timeoutMs": 50}}})
    assert gate.remote_state
    with pytest.raises(ToolGateError) as e:
        gate.check("t", {})
    assert e.value.code == "E_ASYNC" and "state.redis" in e.value.message
    v = asyncio.run(gate.acheck("t", {}))
    assert not v.allowed and v.reason == "state_unavailable"
