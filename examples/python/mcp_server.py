"""An MCP server (MCP Python SDK) whose tools sit behind toolgate.

    python examples/python/mcp_server.py          # a demo through the SDK's in-memory client
    python examples/python/mcp_server.py --stdio  # serve over stdio (e.g. for an MCP host)
"""

import sys

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer

from toolgate import ToolGate
from toolgate.mcp import guard_server

gate = ToolGate({
    "tools": [{"name": "read_file", "resource": "file:{path*}", "inputSchema": {"type": "object",
               "properties": {"path": {"type": "string"}, "head": {"type": "integer"}}, "required": ["path"]}}],
    "policy": {"rules": [{"effect": "allow", "tools": ["read_file"], "resources": ["file:docs/**"]}]},
})

server = MCPServer("docs")


@server.tool()
def read_file(path: str, head: int = 10) -> str:
    """Read the first lines of a file under docs/."""
    return f"(first {head} lines of {path})"


@server.tool()
def run_shell(cmd: str) -> str:
    """Registered by mistake: not declared to the gate, so never listed or run."""
    raise AssertionError("never runs")


guard_server(server, gate, context={"subject": "ana"})


async def demo() -> None:
    async with Client(server) as client:
        print("listed:", [t.name for t in (await client.list_tools()).tools])
        for name, args in [("read_file", {"path": "docs/intro.md", "head": "3"}),
                           ("read_file", {"path": "docs/../../etc/passwd"}),
                           ("run_shell", {"cmd": "id"})]:
            result = await client.call_tool(name, args)
            print(f"{name}{args} -> is_error={result.is_error}: {result.content[0].text}")


if __name__ == "__main__":
    if "--stdio" in sys.argv:
        server.run("stdio")
    else:
        anyio.run(demo)
