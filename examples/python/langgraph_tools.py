"""A LangGraph ToolNode behind toolgate. Runs offline: the AIMessage below stands in for what a
chat model returns (in a real agent the model node produces it).

    python examples/python/langgraph_tools.py
"""

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph

from toolgate import ToolGate
from toolgate.langchain import guarded_tool_node

gate = ToolGate({"tools": [{"name": "search", "inputSchema": {"type": "object", "properties": {
    "query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]}}]})


@tool
def search(query: str, limit: int = 10) -> str:
    """Search the web."""
    return f"{limit} results for {query!r}"


@tool
def shell(cmd: str) -> str:
    """Run a shell command (registered with the node, but not declared to the gate)."""
    raise AssertionError("never runs")


graph = StateGraph(MessagesState)
graph.add_node("tools", guarded_tool_node([search, shell], gate, context={"subject": "ana"}))
graph.add_edge(START, "tools")
app = graph.compile()

turn = AIMessage(content="", tool_calls=[
    {"name": "search", "args": {"query": "toolgate", "limit": "3"}, "id": "c1", "type": "tool_call"},
    {"name": "shell", "args": {"cmd": "cat ~/.ssh/id_rsa"}, "id": "c2", "type": "tool_call"},
])
for message in app.invoke({"messages": [turn]})["messages"][1:]:
    print(f"{message.tool_call_id} [{message.status}] {message.content}")
