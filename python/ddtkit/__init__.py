"""ddtkit: MPI-style derived datatypes for Python, over ddtkit's C library.

* ``Type`` and its constructors (``contiguous``, ``vector``, ``hvector``, ``indexed``,
  ``hindexed``, ``indexed_block``, ``hindexed_block``, ``struct``, ``subarray``, ``darray``,
  ``resized``, ``dup``), the predefined types as constants (``ddtkit.DOUBLE``, ...) and the
  queries (``size``, ``extent``, ``true_extent``, ``envelope``, ``contents``, ``blocks``,
  ``hash``, ``serialize``/``deserialize``, ``describe``, ``notation``);
* ``parse(text)``: the type written in the notation of docs/notation.md;
* ``from_array(view)``: the type of a numpy array or view; ``pack`` and ``unpack`` between views
  (or buffers with an explicit type) and packed bytes, whole or by byte range; ``iov``: the
  contiguous pieces of a byte range; ``copy``: from one layout into another;
* ``from_mpi(datatype)``: the type of an mpi4py ``MPI.Datatype``;
* ``Error``: errors of the C API (``ArgumentError`` is also a ``ValueError``).

See docs/python.md.
"""

from enum import IntEnum

from . import _core
from ._core import (Type, contiguous, darray, deserialize, dup, hindexed, hindexed_block,
                    hvector, indexed, indexed_block, resized, subarray, vector, error_string,
                    ORDER_C, ORDER_FORTRAN, DISTRIBUTE_BLOCK, DISTRIBUTE_CYCLIC,
                    DISTRIBUTE_NONE, DISTRIBUTE_DFLT_DARG)
from ._core import struct as struct  # noqa: PLC0414 (shadows the stdlib module name on purpose)
from ._errors import ArgumentError, Error
from .arrays import from_array
from .mpi import from_mpi
from .notation import parse
from .transfer import copy, iov, pack, unpack

__version__ = "0.1.0"

from ._predefined import PREDEFINED as predefined  # noqa: E402
globals().update({name: t for name, t in predefined.items() if name.isidentifier()})
TWOINT = predefined["2INT"]  # DDT_2INT: "2INT" is not a Python name (mpi4py says TWOINT too)


class Combiner(IntEnum):
    """What ``Type.envelope()`` and ``Type.contents()`` report as the combiner."""
    NAMED = 0
    CONTIGUOUS = 1
    VECTOR = 2
    HVECTOR = 3
    INDEXED = 4
    HINDEXED = 5
    INDEXED_BLOCK = 6
    HINDEXED_BLOCK = 7
    STRUCT = 8
    SUBARRAY = 9
    DARRAY = 10
    RESIZED = 11
    DUP = 12
    LAYOUT = 13  # made by deserialize: a layout without constructor history


__all__ = [
    "Type", "Error", "ArgumentError", "Combiner", "predefined",
    "contiguous", "vector", "hvector", "indexed", "hindexed", "indexed_block",
    "hindexed_block", "struct", "subarray", "darray", "resized", "dup", "deserialize",
    "from_array", "from_mpi", "pack", "unpack", "iov", "copy", "parse", "error_string",
    "ORDER_C", "ORDER_FORTRAN", "DISTRIBUTE_BLOCK", "DISTRIBUTE_CYCLIC", "DISTRIBUTE_NONE",
    "DISTRIBUTE_DFLT_DARG", "TWOINT",
] + [name for name in predefined if name.isidentifier()]
