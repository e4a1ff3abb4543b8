"""toolgate.mcp against the real pinned MCP Python SDK: servers built with the SDK, reached
through its in-memory client (`mcp.Client(server)`); the tools record what they received."""

from __future__ import annotations

import anyio
import mcp_types as types
from mcp import Client
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer

from toolgate import ToolGate
from toolgate.mcp import guard_call_tool, guard_list_tools, guard_server

CONFIG = {
    "tools": [
        {"name": "read_file", "resource": "file:{path*}", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}}, "required": ["path"]}},
        {"name": "write_file", "writes": True, "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}},
    ],
    "policy": {"rules": [{"effect": "allow", "tools": ["read_file"], "resources": ["file:docs/**"]}, {"effect": "allow", "tools": ["write_file"]}]},
}


def high_level(ran):
    server = MCPServer("files")

    @server.tool()
    def read_file(path: str, head: int = 0) -> str:
        """Read a file."""
        ran.append(("read_file", path, head))
        return f"{path}:{head}"

    @server.tool()
    def write_file(path: str, content: str) -> str:
        """Write a file."""
        ran.append(("write_file", path))
        return "written"

    @server.tool()
    def exec_cmd(cmd: str) -> str:
        """Not declared to the gate."""
        ran.append(("exec_cmd", cmd))
        return "ran"

    return guard_server(server, ToolGate(CONFIG), context={"subject": "ana"})


def text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def test_mcp_server_calls_through_the_in_memory_client():
    ran: list = []

    async def main():
        async with Client(high_level(ran)) as client:
            listed = sorted(t.name for t in (await client.list_tools()).tools)
            ok = await client.call_tool("read_file", {"path": "docs/a.md", "head": "5"})
            escape = await client.call_tool("read_file", {"path": "docs/../../etc/shadow"})
            outside = await client.call_tool("read_file", {"path": "secrets/key"})
            undeclared = await client.call_tool("exec_cmd", {"cmd": "id"})
            write = await client.call_tool("write_file", {"path": "docs/a.md", "content": "x"})
            return listed, ok, escape, outside, undeclared, write

    listed, ok, escape, outside, undeclared, write = anyio.run(main)
    assert listed == ["read_file", "write_file"]  # exec_cmd is never listed
    assert (ok.is_error, text(ok)) == (False, "docs/a.md:5")
    assert escape.is_error and "climbs above" in text(escape)
    assert outside.is_error and "no policy rule" in text(outside)
    assert undeclared.is_error and "Unknown tool `exec_cmd`" in text(undeclared)
    assert write.is_error and "confirmation" in text(write)  # a client without elicitation cannot be asked: refused
    assert ran == [("read_file", "docs/a.md", 5)]


def test_low_level_server_handlers():
    ran: list = []

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[
            types.Tool(name="read_file", inputSchema={"type": "object"}),
            types.Tool(name="drop_db", inputSchema={"type": "object"}),
        ])

    async def call_tool(ctx, params):
        ran.append((params.name, params.arguments))
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])

    gate = ToolGate(CONFIG)
    server = Server("low", on_list_tools=guard_list_tools(list_tools, gate), on_call_tool=guard_call_tool(call_tool, gate, context=lambda ctx: {"subject": "ana"}))

    async def main():
        async with Client(server) as client:
            listed = [t.name for t in (await client.list_tools()).tools]
            ok = await client.call_tool("read_file", {"path": "docs/x", "head": "2"})
            bad = await client.call_tool("drop_db", {})
            return listed, ok, bad

    listed, ok, bad = anyio.run(main)
    assert listed == ["read_file"]
    assert not ok.is_error and bad.is_error
    assert ran == [("read_file", {"path": "docs/x", "head": 2})]


def run_write(answer, mode="legacy"):
    """A `writes` call through a client whose user answers `answer` (None: no elicitation)."""
    ran: list = []
    asked: list = []

    async def elicit(ctx, params):
        asked.append(params.message)
        return answer

    async def main():
        # elicitation is a server-to-client request: the handshake-era protocol (`legacy`); on the
        # 2026 protocol, with no back-channel, the user cannot be asked and the call is refused
        kwargs = {"mode": mode} if answer is None else {"elicitation_callback": elicit, "mode": mode}
        async with Client(high_level(ran), **kwargs) as client:
            return await client.call_tool("write_file", {"path": "docs/a.md", "content": "x"})

    return anyio.run(main), ran, asked


def test_writes_ask_the_user_through_elicitation_and_run_once_approved():
    result, ran, asked = run_write(types.ElicitResult(action="accept", content={"approve": True}))
    assert not result.is_error and text(result) == "written"
    assert ran == [("write_file", "docs/a.md")]
    assert "write_file" in asked[0]


def test_declined_cancelled_or_unaskable_writes_never_run():
    accept = types.ElicitResult(action="accept", content={"approve": True})
    cases = [(types.ElicitResult(action="accept", content={"approve": False}), "legacy"), (types.ElicitResult(action="decline"), "legacy"), (types.ElicitResult(action="cancel"), "legacy"), (None, "legacy"), (accept, "auto")]
    for answer, mode in cases:
        result, ran, _ = run_write(answer, mode)
        assert result.is_error and ran == [], (answer, mode)
