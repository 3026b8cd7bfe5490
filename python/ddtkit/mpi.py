"""from_mpi: an mpi4py ``MPI.Datatype`` translated into a ddtkit type.

The translation reads the type the way MPI lets any tool read it: ``Get_envelope`` names the
combiner and ``Get_contents`` returns the constructor's arguments, recursively down to named
types, which map to ddtkit's predefined types by handle. Both argument layouts are read: the
classic one (integers and addresses) and MPI-4's large-count one, where counts and
displacements come in the large-count array (mpi4py 4 builds types with the large-count
constructors whenever the MPI has them). mpi4py is imported only when ``from_mpi`` is called.
"""

from . import _core

from ._predefined import PREDEFINED as _PREDEFINED

# mpi4py's names of the named types whose representation ddtkit has, by ddtkit's name. C++
# types share the representation of the C types of the same meaning.
_NAMES = {
    "CHAR": "CHAR", "SIGNED_CHAR": "SIGNED_CHAR", "UNSIGNED_CHAR": "UNSIGNED_CHAR",
    "BYTE": "BYTE", "SHORT": "SHORT", "UNSIGNED_SHORT": "UNSIGNED_SHORT", "INT": "INT",
    "UNSIGNED": "UNSIGNED", "LONG": "LONG", "UNSIGNED_LONG": "UNSIGNED_LONG",
    "LONG_LONG": "LONG_LONG", "UNSIGNED_LONG_LONG": "UNSIGNED_LONG_LONG", "FLOAT": "FLOAT",
    "DOUBLE": "DOUBLE", "LONG_DOUBLE": "LONG_DOUBLE", "C_BOOL": "C_BOOL",
    "INT8_T": "INT8_T", "INT16_T": "INT16_T", "INT32_T": "INT32_T", "INT64_T": "INT64_T",
    "UINT8_T": "UINT8_T", "UINT16_T": "UINT16_T", "UINT32_T": "UINT32_T", "UINT64_T": "UINT64_T",
    "C_FLOAT_COMPLEX": "C_FLOAT_COMPLEX", "C_DOUBLE_COMPLEX": "C_DOUBLE_COMPLEX",
    "C_LONG_DOUBLE_COMPLEX": "C_LONG_DOUBLE_COMPLEX", "WCHAR": "WCHAR", "AINT": "AINT",
    "OFFSET": "OFFSET", "COUNT": "COUNT", "PACKED": "PACKED", "FLOAT_INT": "FLOAT_INT",
    "DOUBLE_INT": "DOUBLE_INT", "LONG_INT": "LONG_INT", "TWOINT": "2INT",
    "SHORT_INT": "SHORT_INT", "LONG_DOUBLE_INT": "LONG_DOUBLE_INT",
    "CXX_BOOL": "C_BOOL", "CXX_FLOAT_COMPLEX": "C_FLOAT_COMPLEX",
    "CXX_DOUBLE_COMPLEX": "C_DOUBLE_COMPLEX", "CXX_LONG_DOUBLE_COMPLEX": "C_LONG_DOUBLE_COMPLEX",
}

_named = None  # handle -> (mpi4py name, ddtkit Type), built at the first call


def _named_types(MPI):
    global _named
    if _named is None:
        table = {}
        for mpi_name, ddt_name in _NAMES.items():
            dt = getattr(MPI, mpi_name, None)
            if dt is None or dt == MPI.DATATYPE_NULL:
                continue
            t = _PREDEFINED[ddt_name]
            # An MPI's type and ddtkit's must have the same size, or bytes would differ.
            if dt.Get_size() == t.size:
                table.setdefault(MPI._handleof(dt), (mpi_name, t))
        _named = table
    return _named


def _split(n, seq):
    return list(seq[:n]), list(seq[n:2 * n])


def _arguments(MPI, combiner, ints, addrs, counts):
    """The constructor's arguments as (name, args) in ddtkit's order, from either MPI layout.

    For each combiner, the large-count layout (counts non-empty) moves every count and
    displacement into ``counts``; the classic one keeps element counts and displacements in
    ``ints`` and byte displacements in ``addrs``.
    """
    C = MPI
    big = len(counts) > 0
    if combiner == C.COMBINER_CONTIGUOUS:
        return "contiguous", [(counts if big else ints)[0]]
    if combiner == C.COMBINER_VECTOR:
        a = counts if big else ints
        return "vector", [a[0], a[1], a[2]]
    if combiner == C.COMBINER_HVECTOR:
        return "hvector", (counts[:3] if big else [ints[0], ints[1], addrs[0]])
    if combiner in (C.COMBINER_INDEXED, C.COMBINER_HINDEXED):
        a = counts if big else ints
        n = a[0]
        bls = a[1:1 + n]
        if big or combiner == C.COMBINER_INDEXED:
            displs = a[1 + n:1 + 2 * n]
        else:
            displs = addrs[:n]
        return ("indexed" if combiner == C.COMBINER_INDEXED else "hindexed"), [bls, displs]
    if combiner in (C.COMBINER_INDEXED_BLOCK, C.COMBINER_HINDEXED_BLOCK):
        a = counts if big else ints
        n, bl = a[0], a[1]
        if big or combiner == C.COMBINER_INDEXED_BLOCK:
            displs = a[2:2 + n]
        else:
            displs = addrs[:n]
        name = "indexed_block" if combiner == C.COMBINER_INDEXED_BLOCK else "hindexed_block"
        return name, [bl, displs]
    if combiner == C.COMBINER_STRUCT:
        a = counts if big else ints
        n = a[0]
        bls = a[1:1 + n]
        displs = a[1 + n:1 + 2 * n] if big else addrs[:n]
        return "struct", [bls, displs]
    if combiner == C.COMBINER_SUBARRAY:
        if big:  # ints: ndims, order; counts: sizes, subsizes, starts
            nd, order = ints[0], ints[1]
            shapes = counts
        else:  # ints: ndims, sizes, subsizes, starts, order
            nd, order = ints[0], ints[1 + 3 * ints[0]]
            shapes = ints[1:1 + 3 * nd]
        return "subarray", [shapes[:nd], shapes[nd:2 * nd], shapes[2 * nd:3 * nd], _order(MPI, order)]
    if combiner == C.COMBINER_DARRAY:
        size, rank, nd = ints[0], ints[1], ints[2]
        if big:  # ints: size, rank, ndims, distribs, dargs, psizes, order; counts: gsizes
            gsizes, rest = counts[:nd], ints[3:]
        else:  # ints: size, rank, ndims, gsizes, distribs, dargs, psizes, order
            gsizes, rest = ints[3:3 + nd], ints[3 + nd:]
        distribs = [_distrib(MPI, d) for d in rest[:nd]]
        dargs = [_core.DISTRIBUTE_DFLT_DARG if d == MPI.DISTRIBUTE_DFLT_DARG else d
                 for d in rest[nd:2 * nd]]
        psizes = rest[2 * nd:3 * nd]
        return "darray", [size, rank, gsizes, distribs, dargs, psizes, _order(MPI, rest[3 * nd])]
    if combiner == C.COMBINER_RESIZED:
        a = counts if big else addrs
        return "resized", [a[0], a[1]]
    if combiner == C.COMBINER_DUP:
        return "dup", []
    raise TypeError(f"ddtkit: MPI combiner {_combiner_name(MPI, combiner)} has no ddtkit "
                    "equivalent")


def _order(MPI, order):
    if order == MPI.ORDER_C:
        return _core.ORDER_C
    if order == MPI.ORDER_FORTRAN:
        return _core.ORDER_FORTRAN
    raise ValueError(f"ddtkit: unknown MPI array order {order}")


def _distrib(MPI, d):
    for mpi_name, value in (("DISTRIBUTE_BLOCK", _core.DISTRIBUTE_BLOCK),
                            ("DISTRIBUTE_CYCLIC", _core.DISTRIBUTE_CYCLIC),
                            ("DISTRIBUTE_NONE", _core.DISTRIBUTE_NONE)):
        if d == getattr(MPI, mpi_name):
            return value
    raise ValueError(f"ddtkit: unknown MPI distribution {d}")


def _combiner_name(MPI, combiner):
    for name in dir(MPI):
        if name.startswith("COMBINER_") and getattr(MPI, name) == combiner:
            return name
    return str(combiner)


def _translate(MPI, dt):
    t = _build(MPI, dt)
    if not t.predefined:
        # The bounds the MPI reports, which users of this type send with; they differ from the
        # standard's where an MPI departs from it (MPICH ignores explicit lb/ub markers inside
        # structs). Enclosing types built from t take these bounds too.
        bounds = dt.Get_extent()
        if t.get_extent() != tuple(bounds):
            t.set_bounds(*bounds)
    return t


def _build(MPI, dt):
    named = _named_types(MPI)
    ni, na, nc, nd, combiner = dt.Get_envelope()
    if combiner == MPI.COMBINER_NAMED:
        entry = named.get(MPI._handleof(dt))
        if entry is None:
            raise TypeError(f"ddtkit: the named MPI type {dt.Get_name()!r} has no ddtkit equivalent")
        return entry[1]
    ints, addrs, counts, types = dt.Get_contents()
    try:
        name, args = _arguments(MPI, combiner, ints, addrs, counts)
        children = [_translate(MPI, c) for c in types]
    finally:
        for c in types:  # Get_contents returns new handles for derived types; MPI frees none
            if c.Get_envelope()[-1] != MPI.COMBINER_NAMED:
                c.Free()
    if name == "struct":
        return _core.struct(args[0], args[1], children)
    if name == "resized":
        return _core.resized(children[0], args[0], args[1])
    if name == "dup":
        return _core.dup(children[0])
    if name == "darray":
        return _core.darray(*args[:6], children[0], args[6])
    if name == "subarray":
        return _core.subarray(*args[:3], children[0], args[3])
    return getattr(_core, name)(*args, children[0])


def from_mpi(datatype):
    """The committed ddtkit type with the typemap of the mpi4py ``MPI.Datatype`` ``datatype``.

    Built from the type's envelope and contents, recursively; named types map to ddtkit's
    predefined types. Each derived level reports the lb and extent the MPI reports for it (see
    ``_translate``), so ``count`` elements move the bytes the MPI moves. TypeError for a type ddtkit cannot express (Fortran or other named types
    without a ddtkit equivalent, F90 parameterized combiners); ddtkit.Error if the C API rejects
    the arguments.
    """
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError("ddtkit.from_mpi needs mpi4py (pip install mpi4py)") from e
    if not isinstance(datatype, MPI.Datatype):
        raise TypeError(f"ddtkit: from_mpi takes an MPI.Datatype, not {type(datatype).__name__}")
    if datatype == MPI.DATATYPE_NULL:
        raise ValueError("ddtkit: from_mpi of MPI.DATATYPE_NULL")
    t = _translate(MPI, datatype)
    if t.predefined:
        return t
    return t.commit()
