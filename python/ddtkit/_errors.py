"""Exceptions raised for errors the C API reports.

Every error of ddtkit's C API becomes a :class:`Error` carrying the code and the message of
``ddt_error_string``. Errors that mean "this argument is wrong" (a negative count, bad array
dimensions, a range beyond the packed stream, ...) are raised as :class:`ArgumentError`, which is
both a ``ddtkit.Error`` and a ``ValueError``, so ``except ValueError`` works as Python users
expect.
"""

# The C API's error codes (include/ddtkit.h), by name.
CODES = {
    1: "DDT_ERR_ARG", 2: "DDT_ERR_COUNT", 3: "DDT_ERR_TYPE", 4: "DDT_ERR_NOT_COMMITTED",
    5: "DDT_ERR_OVERFLOW", 6: "DDT_ERR_TRUNCATE", 7: "DDT_ERR_DIMS", 8: "DDT_ERR_DISTRIB",
    9: "DDT_ERR_NO_MEM", 10: "DDT_ERR_SIZE_MISMATCH", 11: "DDT_ERR_CORRUPT",
    12: "DDT_ERR_VERSION", 13: "DDT_ERR_PREDEFINED", 14: "DDT_ERR_COMM", 15: "DDT_ERR_PEER", 16: "DDT_ERR_DEVICE",
}
_ARGUMENT_CODES = {1, 2, 5, 6, 7, 8, 10}


class Error(Exception):
    """An error reported by ddtkit's C API: ``code`` (int), ``name`` and ``message``.

    From ``ddtkit.parse``, ``position``, ``line`` and ``column`` (1-based) give the place of the
    fault in the text; they are None otherwise.
    """

    position = line = column = None

    def __init__(self, code, message):
        self.code = code
        self.name = CODES.get(code, "DDT_ERR_UNKNOWN")
        self.message = message
        super().__init__(f"{self.name}: {message}")


class ArgumentError(Error, ValueError):
    """An argument the C API rejected (count, dimensions, range, sizes)."""


def from_code(code, message):
    """The exception for C error code ``code`` (called by the extension)."""
    cls = ArgumentError if code in _ARGUMENT_CODES else Error
    return cls(code, message)
