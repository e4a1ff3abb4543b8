"""The one exception of the package: :class:`ToolGateError`, with a stable ``code``."""

from __future__ import annotations

from typing import Literal, Union

from ._contract import CoreErrorCode

ErrorCode = Union[CoreErrorCode, Literal["E_ASYNC", "E_UNAUTHENTICATED"]]
"""The closed set of error codes (the same strings as the Node package's): the core's, generated
from its enums (``E_STATE`` included), and the host's own."""


class ToolGateError(Exception):
    """Raised for what the host got wrong (a config, a turn's shape, a dialect, a receipt) —
    never for bad model output, which is a refusal :class:`~toolgate.Verdict` instead.

    ``code`` is one of :data:`ErrorCode`; the message names what was wrong and where.
    """

    code: str
    message: str

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    def __reduce__(self) -> "tuple[type, tuple[str, str]]":  # picklable with its code
        return (type(self), (self.code, self.message))
