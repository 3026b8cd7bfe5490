"""The predefined types, one Type object each, shared by every module of the package (so that
``from_mpi(MPI.DOUBLE) is ddtkit.DOUBLE``)."""

from . import _core

#: every predefined type by its C name without the ``DDT_`` prefix ("DOUBLE", "2INT", ...)
PREDEFINED = _core.predefined()
