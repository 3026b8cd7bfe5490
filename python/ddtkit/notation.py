"""The type notation (docs/notation.md): ``parse(text)`` builds a type, ``Type.notation()`` writes one.

The notation is the constructor calls that build a type, nested freely over the predefined types
named in lowercase: ``vector(4, 1, 5, double)``, ``struct([1, 3], [0, 8], [int, vector(2, 1, 4,
float)])``. It is what ``ddtkit inspect`` reads and what the MPI interposer's ``DDTKIT_VERBOSE=1``
log writes, so a type can travel between a running program, the command line and Python.
"""

import re

from . import _core
from ._errors import from_code

# ddt_type_parse's messages start with the place of the fault.
_PLACE = re.compile(r"character (\d+) \(line (\d+), column (\d+)\)")


def parse(text):
    """The type written in ``text`` (a ``str`` in the notation), not yet committed.

    Text that is not the notation raises ``ddtkit.ArgumentError`` (also a ``ValueError``) with
    the parser's message, which starts with the place of the fault; the exception's
    ``position``, ``line`` and ``column`` (1-based ints) give it too. Arguments a constructor
    rejects raise that constructor's error (a negative count: ``DDT_ERR_COUNT``), with the place.
    ``parse(t.notation())`` has the layout hash, size and bounds of ``t``.
    """
    if not isinstance(text, str):
        raise TypeError(f"ddtkit: the notation must be a str, not {type(text).__name__}")
    if "\0" in text:
        raise ValueError(f"ddtkit: the notation holds a NUL character (at character {text.index(chr(0)) + 1})")
    t, code, message = _core._parse(text)
    if t is not None:
        return t
    error = from_code(code, message)
    place = _PLACE.match(message)
    error.position, error.line, error.column = (
        (int(place.group(1)), int(place.group(2)), int(place.group(3))) if place else (None, None, None))
    raise error
