"""Gate state in Redis from Python, through the real extension against a real redis-server on
loopback (no mock): gates in this process and in other Python processes act as one gate — a
confirmation token is taken exactly once under concurrent attempts, taint and rate limits are
shared — sync decisions raise ``E_ASYNC``, Redis killed refuses (``state_unavailable``, never an
allow), and decisions resume when it is back. docs/python.md "Remote state"."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from itertools import count
from typing import Any, Dict, Iterator

import pytest

from toolgate import ToolGate, ToolGateError

_prefix = count()


class Redis:
    """A redis-server on a free loopback port, no persistence; ``kill`` and ``start`` again."""

    def __init__(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}"
        self.proc: "subprocess.Popen[bytes] | None" = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("redis-server did not start within 10 s")

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


@pytest.fixture(scope="module")
def redis() -> Iterator[Redis]:
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not installed (apt-get install -y redis-server); .ci/run installs it")
    r = Redis()
    r.start()
    yield r
    r.kill()


def config(redis: Redis, prefix: "str | None" = None) -> Dict[str, Any]:
    """Tools with taint, a write needing confirmation and a rate limit; state under a prefix of its own."""
    return {
        "labels": ["public", "secret"],
        "tools": [
            {"name": "read_secret", "output": {"label": "secret"}},
            {"name": "post", "sink": {"maxLabel": "public"}},
            {"name": "send_mail", "writes": True},
            {"name": "search"},
        ],
        "rateLimits": [{"tools": ["search"], "per": "subject", "max": 3, "windowSeconds": 3600}],
        "state": {"redis": {"url": redis.url, "keyPrefix": prefix or f"py{os.getpid()}-{next(_prefix)}:", "timeoutMs": 200}},
    }


ALICE = {"subject": "alice", "session": "a1"}


def test_sync_decisions_raise_e_async_naming_the_async_method(redis: Redis) -> None:
    gate = ToolGate(config(redis))
    assert gate.remote_state
    for call, method in ((lambda: gate.check("search", {}), "acheck"), (lambda: gate.guard({"role": "assistant", "tool_calls": []}, "openai"), "aguard"), (lambda: gate.confirm("x"), "aconfirm")):
        with pytest.raises(ToolGateError) as e:
            call()
        assert e.value.code == "E_ASYNC" and method in e.value.message and "state.redis" in e.value.message
    assert asyncio.run(gate.acheck("search", {}, ALICE)).outcome == "passed"
    gate.close()
    assert not ToolGate({"tools": [{"name": "search"}]}).remote_state


def test_two_gates_act_as_one_token_taint_and_rate_limit(redis: Redis) -> None:
    prefix = f"py{os.getpid()}-shared-{next(_prefix)}:"
    a, b = ToolGate(config(redis, prefix)), ToolGate(config(redis, prefix))

    async def run() -> None:
        v = await a.acheck("send_mail", {"to": "bob"}, ALICE)
        assert v.outcome == "confirm"
        token = v.confirmation.token
        # 20 concurrent attempts across both gates: exactly one takes the token
        tries = await asyncio.gather(*[(a if i % 2 else b).aconfirm(token, ALICE) for i in range(20)])
        assert sorted(t.outcome for t in tries).count("passed") == 1
        assert {t.reason for t in tries if t.outcome != "passed"} == {"token_invalid"}
        # taint raised through one gate refuses the sink at the other
        assert (await b.acheck("post", {}, ALICE)).outcome == "passed"
        assert (await a.acheck("read_secret", {}, ALICE)).outcome == "passed"
        refused = await b.acheck("post", {}, ALICE)
        assert refused.outcome == "denied" and refused.reason == "taint"
        # the rate limit counts across both: 3 allowed in all
        outcomes = [(await (a if i % 2 else b).acheck("search", {"q": i}, ALICE)) for i in range(5)]
        assert [o.outcome for o in outcomes] == ["passed"] * 3 + ["denied"] * 2
        assert outcomes[3].reason == "rate_limited"

    asyncio.run(run())
    a.close()
    b.close()


WORKER = """
import asyncio, json, sys
from toolgate import ToolGate
cfg, ops = json.loads(sys.argv[1]), json.loads(sys.argv[2])
gate = ToolGate(cfg)
async def run():
    out = []
    for op in ops:
        if op["kind"] == "check":
            v = await gate.acheck(op["tool"], op["args"], op["ctx"])
        else:
            v = await gate.aconfirm(op["token"], op["ctx"])
        out.append({"outcome": v.outcome, "reason": v.reason, "token": v.confirmation.token if v.confirmation else None})
    return out
print(json.dumps(asyncio.run(run())))
"""


def in_process(cfg: Dict[str, Any], ops: list) -> list:
    done = subprocess.run([sys.executable, "-c", WORKER, json.dumps(cfg), json.dumps(ops)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_state_is_shared_with_other_python_processes(redis: Redis) -> None:
    prefix = f"py{os.getpid()}-procs-{next(_prefix)}:"
    cfg = config(redis, prefix)
    # another process issues the token and taints the session
    issued = in_process(cfg, [{"kind": "check", "tool": "send_mail", "args": {"to": "bob"}, "ctx": ALICE}, {"kind": "check", "tool": "read_secret", "args": {}, "ctx": ALICE}])
    assert issued[0]["outcome"] == "confirm"
    gate = ToolGate(cfg)

    async def here() -> None:
        refused = await gate.acheck("post", {}, ALICE)
        assert refused.reason == "taint"
        assert (await gate.aconfirm(issued[0]["token"], ALICE)).outcome == "passed"

    asyncio.run(here())
    # and the token is spent for every process
    again = in_process(cfg, [{"kind": "confirm", "token": issued[0]["token"], "ctx": ALICE}])
    assert again[0]["outcome"] != "passed" and again[0]["reason"] == "token_invalid"
    gate.close()


def test_redis_down_refuses_with_state_unavailable_and_resumes(redis: Redis) -> None:
    gate = ToolGate(config(redis))

    async def decide() -> Any:
        return await gate.acheck("search", {"q": "x"}, {"subject": "carol", "session": "c1"})

    assert asyncio.run(decide()).outcome == "passed"
    redis.kill()
    try:
        down = asyncio.run(decide())
        assert down.outcome == "denied" and down.reason == "state_unavailable" and "state" in down.message
        assert not down.allowed
        # a guard while down refuses every call it would need state for
        report = asyncio.run(gate.aguard({"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}]}, "openai", subject="carol", session="c1"))
        assert [c.reason for c in report.calls] == ["state_unavailable"]
    finally:
        redis.start()
    deadline = time.monotonic() + 10
    while asyncio.run(decide()).outcome != "passed":
        assert time.monotonic() < deadline, "decisions did not resume once Redis was back"
        time.sleep(0.1)


def test_close_refuses_later_decisions(redis: Redis) -> None:
    gate = ToolGate(config(redis))
    assert asyncio.run(gate.acheck("search", {}, ALICE)).outcome == "passed"
    gate.close()
    after = asyncio.run(gate.acheck("search", {}, ALICE))
    assert after.reason == "state_unavailable"


def test_a_bad_redis_url_is_e_config(redis: Redis) -> None:
    cfg = config(redis)
    cfg["state"]["redis"]["url"] = "http://127.0.0.1:1"
    with pytest.raises(ToolGateError) as e:
        ToolGate(cfg)
    assert e.value.code == "E_CONFIG"


def test_async_decisions_are_made_on_what_was_passed_not_on_objects_changed_while_they_wait(redis: Redis) -> None:
    gate = ToolGate(config(redis))

    async def run() -> None:
        assert (await gate.acheck("read_secret", {}, ALICE)).outcome == "passed"
        for _ in range(10):
            ctx = dict(ALICE)
            task = asyncio.ensure_future(gate.acheck("post", {}, ctx))
            await asyncio.sleep(0)  # acheck has started and handed the call to a worker
            ctx["session"] = "clean"  # the host reuses its dict for the next caller
            v = await task
            # before: decided on the worker for the changed dict, a clean session: passed
            assert (v.outcome, v.reason) == ("denied", "taint")
            turn = {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "post", "arguments": "{}"}}]}
            ctx = dict(ALICE)
            task = asyncio.ensure_future(gate.aguard(turn, "openai", **ctx))
            await asyncio.sleep(0)
            turn["tool_calls"][0]["function"]["name"] = "search"
            r = await task
            assert [(c.tool, c.reason) for c in r.calls] == [("post", "taint")]

    asyncio.run(run())
    gate.close()


def test_aguard_with_engines_finishes_on_the_shared_state_as_it_is_once_they_answer(redis: Redis) -> None:
    # the turn is kept decided while the engine waits; the second step reads Redis then, on a worker thread
    cfg = config(redis)
    other = ToolGate(cfg)
    asked = []

    async def main() -> Any:
        release = asyncio.Event()

        async def engine(req: Dict[str, Any]) -> str:
            asked.append(req["tool"])
            await release.wait()
            return "delegate"

        gate = ToolGate(cfg, engines=[engine], engine_timeout_ms=5000)
        ctx = {"subject": "eve", "session": "e1"}
        turn = {"role": "assistant", "tool_calls": [{"id": "p1", "type": "function", "function": {"name": "post", "arguments": '{"text":"hi"}'}}]}
        task = asyncio.ensure_future(gate.aguard(turn, "openai", **ctx))
        while not asked:
            await asyncio.sleep(0.005)
        # another gate taints the session through Redis while the engine answers
        assert (await other.acheck("read_secret", {}, ctx)).allowed
        release.set()
        report = await task
        gate.close()
        return report

    report = asyncio.run(main())
    assert asked == ["post"]
    assert [(c.allowed, c.reason) for c in report.calls] == [(False, "taint")]
    other.close()
