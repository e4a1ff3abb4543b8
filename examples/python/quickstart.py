"""The Python quickstart of docs/python.md: repair an almost-right call, refuse a wrong one."""

from toolgate import ToolGate

gate = ToolGate({
    "tools": [{
        "name": "search",
        "inputSchema": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
        },
    }]
})

v = gate.check("search", '{"query": "rust", "limit": "10"}')  # the model sent "10", not 10
print(v.outcome, v.arguments)        # repaired {'query': 'rust', 'limit': 10}
print([f.code for f in v.flags])     # ['StringToInteger']

v = gate.check("serch", '{"query": "rust"}')
print(v.outcome, v.reason)           # rejected unknown_tool
print(v.message)                     # send this back to the model: it names `search`
