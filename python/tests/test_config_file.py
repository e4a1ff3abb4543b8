"""ToolGate.from_file: JSON and YAML, bounded, regular files only; hostile files fail closed."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time

import pytest

from conftest import ROOT
from toolgate import ToolGate, ToolGateError
from toolgate._config import read_config_file

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


# A config must mean exactly what its text says, in Python as in Node, or be refused (the review's
# inputs; Node: __test__/adversarial/config-meaning.test.ts). A key written twice was refused
# only until the config was re-serialized (a relative `audit.jsonl`, a receipt key), and then the
# later `"effect": "allow"` won; duplicates in `inputSchema.properties` / `args` always passed.
TOOL = '{"name":"delete_file","destructive":true,"inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}'
RULES = '"policy":{"rules":[{"effect":"allow","tools":["*"]},{"effect":"deny","effect":"allow","tools":["delete_file"]}]}'
RULES_ESCAPED = '"policy":{"rules":[{"effect":"allow","tools":["*"]},{"effect":"deny","\\u0065ffect":"allow","tools":["delete_file"]}]}'
JSON_DUPLICATES = [
    ("dup1.json", f'{{"tools":[{TOOL}],\n {RULES}}}', 'line 2: duplicate key "effect" in `policy.rules[1]`'),
    ("dup2.json", f'{{"tools":[{TOOL}],\n "audit":{{"jsonl":"a.jsonl"}},\n {RULES}}}', 'line 3: duplicate key "effect" in `policy.rules[1]`'),
    ("dup2-env.json", f'{{"tools":[{TOOL}],"receipts":{{"privateKeyEnv":"TG_MEANING_KEY"}},{RULES_ESCAPED}}}', 'duplicate key "effect"'),
    ("dup3.json", '{"tools":[{"name":"delete_file","inputSchema":{"type":"object","properties":{"path":{"type":"string","pattern":"^tmp/"},"path":{"type":"string"}}}}]}', 'duplicate key "path" in `tools[0].inputSchema.properties`'),
    ("dup4.json", '{"tools":[{"name":"delete_file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},\n  "args":{"path":{"glob":"tmp/**"},"path":{"glob":"**"}}}]}', 'line 2: duplicate key "path" in `tools[0].args`'),
]


@pytest.mark.parametrize("name, text, contains", JSON_DUPLICATES)
def test_a_key_written_twice_is_refused_even_when_re_serialized(tmp_path, monkeypatch, name, text, contains):
    monkeypatch.setenv("TG_MEANING_KEY", "k" * 43)
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(ToolGateError) as e:
        ToolGate.from_file(p)
    assert e.value.code == "E_CONFIG" and contains in e.value.message and str(p) in e.value.message


def test_a_config_given_as_text_is_checked_before_it_is_re_serialized(tmp_path):
    text = f'{{"tools":[{TOOL}],"audit":{{"jsonl":"never-written.jsonl"}},{RULES}}}'
    with pytest.raises(ToolGateError) as e:
        ToolGate(text)
    assert e.value.message.startswith('config: line 1: duplicate key "effect" in `policy.rules[1]`')
    once = text.replace('"effect":"deny","effect":"allow"', '"effect":"deny"').replace("never-written.jsonl", str(tmp_path / "a.jsonl"))
    assert ToolGate(once).check("delete_file", '{"path": "/etc/passwd"}').outcome == "denied"
    with pytest.raises(ToolGateError) as e:
        ToolGate('{"tools": [{"name": "a", "name": "b"}]}')
    assert 'duplicate key "name" in `tools[0]`' in e.value.message


SCHEMA = "inputSchema:\n      type: object\n      properties:\n        path: {type: string}\n"


def yaml_tool(extra: str) -> str:
    return f"tools:\n  - name: delete_file\n    destructive: true\n    {SCHEMA}{extra}"


# YAML one reader reads differently from the other, or that holds no JSON value: refused by both.
YAML_REFUSED = [
    ("omap.yaml", 'tools:\n  - name: delete_file\n    destructive: true\n    inputSchema: !!omap\n      - type: object\n      - required: [path]\n      - properties: {path: {type: string, pattern: "^tmp/"}}\n      - additionalProperties: false\n    args: !!omap\n      - path: {glob: "tmp/**"}\n', "tag:yaml.org,2002:omap is not allowed"),
    ("set.yaml", yaml_tool("    args: !!set {path}\n"), "tag:yaml.org,2002:set is not allowed"),
    ("foo-tag.yaml", "tools:\n  - name: delete_file\n    description: !foo x\n", "!foo"),
    ("python-tag.yaml", "tools:\n  - name: delete_file\n    description: !!python/object:os.system x\n", "python/object:os.system"),
    ("binary.yaml", "tools:\n  - name: delete_file\n    description: !!binary aGVsbG8=\n", "binary is not allowed"),
    ("int-tag.yaml", 'tools:\n  - name: delete_file\n    inputSchema: {type: object, properties: {mode: {enum: [!!int "0755"]}}}\n', "int is not allowed"),
    ("nan.yaml", yaml_tool("        n: {type: number, maximum: .nan}\n"), '".nan"'),
    ("inf.yaml", yaml_tool("        n: {type: number, maximum: .inf}\n"), '".inf"'),
    ("huge.yaml", yaml_tool("        n: {type: number, maximum: 1.0e+999}\n"), "not finite"),
    ("big-int.yaml", yaml_tool("        n: {type: integer, maximum: 9007199254740993}\n"), "2^53-1"),
    ("y1.yaml", yaml_tool('    args:\n      path: {glob: "tmp/**"}\n') + "loop: {maxIdentical: 010, windowSeconds: 60}\n", 'line 10: "010" is a number'),
    ("y7.yaml", "tools:\n  - name: delete_file\n    inputSchema:\n      type: object\n      properties:\n        mode: {type: integer, enum: [0755, 0644]}\n", 'line 6: "0755" is a number'),
    ("underscore.yaml", "tools: [{name: delete_file}]\nloop: {maxIdentical: 1_000, windowSeconds: 60}\n", '"1_000"'),
    ("octal-o.yaml", "tools: [{name: delete_file}]\nloop: {maxIdentical: 0o17, windowSeconds: 60}\n", '"0o17"'),
    ("hex.yaml", "tools: [{name: delete_file}]\nloop: {maxIdentical: 0x1F, windowSeconds: 60}\n", '"0x1F"'),
    ("exp.yaml", "tools: [{name: delete_file}]\nloop: {maxIdentical: 1e3, windowSeconds: 60}\n", '"1e3"'),
    ("sexagesimal.yaml", "tools: [{name: delete_file}]\nloop: {maxIdentical: 3, windowSeconds: 1:30}\n", '"1:30"'),
    ("yes.yaml", yaml_tool("        path: {type: string, enum: [yes, no, on, off]}\n").replace("        path: {type: string}\n", "", 1), '"yes" is a boolean'),
    ("date.yaml", yaml_tool("        d: {type: string, const: 2024-01-01}\n"), '"2024-01-01" is a date'),
    ("y3.yaml", 'tools:\n  - name: delete_file\n    inputSchema:\n      type: object\n      properties:\n        "1": {type: string, pattern: "^tmp/"}\n        1: {type: string}\n', "line 7: a key must be a string"),
    ("y4.yaml", yaml_tool('    args:\n      <<: {path: {glob: "**"}}\n      path: {glob: "tmp/**"}\n'), '"<<" is a merge key'),
    ("dup-yaml.yaml", yaml_tool('        path: {type: string, pattern: "^tmp/"}\n'), 'line 8: duplicate key "path"'),
    ("control.yaml", 'tools:\n  - name: "delete_file"\n    description: a\x01b\n', "control"),
]

# Every form that stays, quoted forms of the rest: the same value to both readers (the Node test reads it too).
YAML_ACCEPTED = (ROOT / "__test__" / "fixtures" / "config-same-meaning.yaml").read_text()


@pytest.mark.parametrize("name, text, contains", YAML_REFUSED)
def test_yaml_that_readers_read_differently_is_refused(tmp_path, name, text, contains):
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(ToolGateError) as e:
        ToolGate.from_file(p)
    assert e.value.code == "E_CONFIG" and contains in e.value.message and str(p) in e.value.message


def test_yaml_that_stays_means_what_it_says(tmp_path):
    p = tmp_path / "accepted.yaml"
    p.write_text(YAML_ACCEPTED)
    config = json.loads(read_config_file(str(p)))
    props = config["tools"][0]["inputSchema"]["properties"]
    assert props["mode"]["enum"] == ["0755", "0644", "010", "yes", "1_000", "2024-01-01", "y", "n"]
    assert props["n"] == {"type": "number", "minimum": 0, "maximum": 1500, "multipleOf": 0.5, "default": 2}
    assert props["b"]["enum"] == [True, False, True] and props["copy"] == props["path"]
    gate = ToolGate.from_file(p)
    assert not gate.check("delete_file", '{"path": "/etc/passwd"}').allowed
    assert gate.check("delete_file", '{"path": "tmp/x", "mode": "0755"}').allowed


def test_the_same_yaml_file_means_the_same_in_node_and_python(tmp_path):
    """Each YAML case through both readers (Node's readConfigText from dist/, `npm run build:ts`):
    refused by both, or the same JSON value from both."""
    node = shutil.which("node")
    dist = ROOT / "dist" / "config-file.js"
    if node is None or not dist.exists():
        pytest.fail("node and the built npm package (dist/, `npm run build:ts`) are needed for the cross-reader check")
    cases = [(n, t) for n, t, _ in YAML_REFUSED] + [("accepted.yaml", YAML_ACCEPTED)]
    paths = []
    for name, text in cases:
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    script = (
        f"const {{ readConfigText }} = require({json.dumps(str(dist))});"
        "const out = {};"
        "for (const p of process.argv.slice(1)) { try { out[p] = JSON.parse(readConfigText(p).text) } catch (e) { out[p] = { refused: e.code } } }"
        "process.stdout.write(JSON.stringify(out))"
    )
    done = subprocess.run([node, "-e", script, *paths], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    in_node = json.loads(done.stdout)
    for p in paths:
        try:
            in_python = json.loads(read_config_file(p))
        except ToolGateError as e:
            in_python = {"refused": e.code}
        assert in_python == in_node[p], p
    assert in_node[str(tmp_path / "accepted.yaml")] != {"refused": "E_CONFIG"}
    assert sum(v == {"refused": "E_CONFIG"} for v in in_node.values()) == len(YAML_REFUSED)


def test_duplicate_detection_is_linear(tmp_path):
    keys = ",".join(f'"k{i}":{{"type":"string"}}' for i in range(40_000))
    text = f'{{"tools":[{{"name":"t","inputSchema":{{"type":"object","properties":{{{keys},"k0":{{}}}}}}}}]}}'
    yml = "tools:\n  - name: t\n    inputSchema:\n      type: object\n      properties:\n" + "".join(f"        k{i}: {{type: string}}\n" for i in range(40_000)) + "        k0: {}\n"
    (tmp_path / "many.json").write_text(text)
    (tmp_path / "many.yaml").write_text(yml)
    t = time.monotonic()
    with pytest.raises(ToolGateError, match='duplicate key "k0"'):
        ToolGate.from_file(tmp_path / "many.json")
    with pytest.raises(ToolGateError, match='line 40006: duplicate key "k0"'):
        ToolGate.from_file(tmp_path / "many.yaml")
    assert time.monotonic() - t < 10  # libyaml's events: ~0.4 s; PyYAML's pure-Python reader ~6 s
