"""toolgate: the gate between an LLM agent and its tools.

For every tool call a model emits it answers one question fast: run it (with these exact
arguments), or send this back to the model. Almost-right arguments are repaired against the
tool's JSON Schema, wrong ones get a short model-readable message, and with a ``policy`` nothing
runs unless a rule allows it. The decisions are made by the same Rust core as the Node package's,
byte for byte. See ``docs/python.md`` in the repository.

>>> from toolgate import ToolGate
>>> gate = ToolGate({"tools": [{"name": "search", "inputSchema": {"type": "object",
...     "properties": {"limit": {"type": "integer"}}, "required": ["limit"]}}]})
>>> v = gate.check("search", '{"limit": "10"}')
>>> (v.outcome, v.arguments)
('repaired', {'limit': 10})
"""

from ._context import CallContext, Caller
from ._engines import EngineAnswer, EngineRequest, PolicyEngine
from ._errors import ErrorCode, ToolGateError
from ._gate import Dialect, ToolGate
from ._prepared_tools import PreparedTools
from ._receipt import generate_receipt_key, verify_receipt
from ._report import AllowedCall, TurnReport
from ._stream import ToolCallStream
from ._verdict import Confirmation, Flag, Outcome, Reason, TurnCall, Verdict

__all__ = [
    "AllowedCall",
    "CallContext",
    "Caller",
    "Confirmation",
    "Dialect",
    "EngineAnswer",
    "EngineRequest",
    "ErrorCode",
    "Flag",
    "Outcome",
    "PolicyEngine",
    "PreparedTools",
    "Reason",
    "ToolCallStream",
    "ToolGate",
    "ToolGateError",
    "TurnCall",
    "TurnReport",
    "Verdict",
    "generate_receipt_key",
    "verify_receipt",
]

__version__ = "0.1.0"
