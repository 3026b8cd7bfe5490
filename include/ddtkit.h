/* ddtkit: MPI-complete derived datatypes, a canonical layout computed once at commit, and
 * pack / unpack / iov / copy over any byte range of the packed stream.
 *
 * Conventions (see DESIGN.md): every function returns DDT_SUCCESS or an error code and never
 * aborts; sizes, counts and displacements are int64_t; on failure no caller buffer is written
 * (outputs such as *newtype are left as they were unless stated otherwise). Committed types are
 * immutable and may be used from any number of threads at once. */
#ifndef DDTKIT_H
#define DDTKIT_H

#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ddt_type_s *ddt_type; /* opaque; predefined handles are constants DDT_INT, ... */

/* ---- error codes ---------------------------------------------------------------------- */
enum {
  DDT_SUCCESS = 0,
  DDT_ERR_ARG = 1,        /* null pointer or otherwise invalid argument */
  DDT_ERR_COUNT = 2,      /* negative count or block length */
  DDT_ERR_TYPE = 3,       /* null, freed or unusable datatype handle */
  DDT_ERR_NOT_COMMITTED = 4, /* a type used for data movement before ddt_type_commit */
  DDT_ERR_OVERFLOW = 5,   /* a size, extent or displacement does not fit in 64 bits */
  DDT_ERR_TRUNCATE = 6,   /* output buffer too small, or range beyond the packed stream */
  DDT_ERR_DIMS = 7,       /* invalid subarray / darray dimensions, sizes or starts */
  DDT_ERR_DISTRIB = 8,    /* invalid darray distribution or distribution argument */
  DDT_ERR_NO_MEM = 9,
  DDT_ERR_SIZE_MISMATCH = 10, /* ddt_copy with different packed sizes */
  DDT_ERR_CORRUPT = 11,   /* serialized bytes that fail validation */
  DDT_ERR_VERSION = 12,   /* serialized by an incompatible format version */
  DDT_ERR_PREDEFINED = 13, /* operation not allowed on a predefined type (e.g. set_bounds) */
  DDT_ERR_COMM = 14,      /* runtime: not in a job started by `ddtkit run`, or not initialised */
  DDT_ERR_PEER = 15,      /* runtime: a peer process of the operation has died */
  DDT_ERR_DEVICE = 16     /* GPU (ddtkit_cuda.h): no usable CUDA device, or a CUDA call failed */
};

/* ---- predefined types ------------------------------------------------------------------ */
/* X(NAME): one entry per predefined type, in a fixed order (the serialized form and the
 * tests index this list, so entries are only ever appended). */
#define DDT_PREDEFINED_LIST(X) \
  X(CHAR) \
  X(SIGNED_CHAR) \
  X(UNSIGNED_CHAR) \
  X(BYTE) \
  X(SHORT) \
  X(UNSIGNED_SHORT) \
  X(INT) \
  X(UNSIGNED) \
  X(LONG) \
  X(UNSIGNED_LONG) \
  X(LONG_LONG) \
  X(UNSIGNED_LONG_LONG) \
  X(FLOAT) \
  X(DOUBLE) \
  X(LONG_DOUBLE) \
  X(C_BOOL) \
  X(INT8_T) \
  X(INT16_T) \
  X(INT32_T) \
  X(INT64_T) \
  X(UINT8_T) \
  X(UINT16_T) \
  X(UINT32_T) \
  X(UINT64_T) \
  X(C_FLOAT_COMPLEX) \
  X(C_DOUBLE_COMPLEX) \
  X(C_LONG_DOUBLE_COMPLEX) \
  X(WCHAR) \
  X(AINT) \
  X(OFFSET) \
  X(COUNT) \
  X(PACKED) \
  X(FLOAT_INT) \
  X(DOUBLE_INT) \
  X(LONG_INT) \
  X(2INT) \
  X(SHORT_INT) \
  X(LONG_DOUBLE_INT)

#define DDT_DECLARE_PREDEFINED_(N) extern struct ddt_type_s ddt_predef_##N;
DDT_PREDEFINED_LIST(DDT_DECLARE_PREDEFINED_)
#undef DDT_DECLARE_PREDEFINED_
#define DDT_TYPE_NULL ((ddt_type)0)
#define DDT_CHAR (&ddt_predef_CHAR)
#define DDT_SIGNED_CHAR (&ddt_predef_SIGNED_CHAR)
#define DDT_UNSIGNED_CHAR (&ddt_predef_UNSIGNED_CHAR)
#define DDT_BYTE (&ddt_predef_BYTE)
#define DDT_SHORT (&ddt_predef_SHORT)
#define DDT_UNSIGNED_SHORT (&ddt_predef_UNSIGNED_SHORT)
#define DDT_INT (&ddt_predef_INT)
#define DDT_UNSIGNED (&ddt_predef_UNSIGNED)
#define DDT_LONG (&ddt_predef_LONG)
#define DDT_UNSIGNED_LONG (&ddt_predef_UNSIGNED_LONG)
#define DDT_LONG_LONG (&ddt_predef_LONG_LONG)
#define DDT_UNSIGNED_LONG_LONG (&ddt_predef_UNSIGNED_LONG_LONG)
#define DDT_FLOAT (&ddt_predef_FLOAT)
#define DDT_DOUBLE (&ddt_predef_DOUBLE)
#define DDT_LONG_DOUBLE (&ddt_predef_LONG_DOUBLE)
#define DDT_C_BOOL (&ddt_predef_C_BOOL)
#define DDT_INT8_T (&ddt_predef_INT8_T)
#define DDT_INT16_T (&ddt_predef_INT16_T)
#define DDT_INT32_T (&ddt_predef_INT32_T)
#define DDT_INT64_T (&ddt_predef_INT64_T)
#define DDT_UINT8_T (&ddt_predef_UINT8_T)
#define DDT_UINT16_T (&ddt_predef_UINT16_T)
#define DDT_UINT32_T (&ddt_predef_UINT32_T)
#define DDT_UINT64_T (&ddt_predef_UINT64_T)
#define DDT_C_FLOAT_COMPLEX (&ddt_predef_C_FLOAT_COMPLEX)
#define DDT_C_DOUBLE_COMPLEX (&ddt_predef_C_DOUBLE_COMPLEX)
#define DDT_C_LONG_DOUBLE_COMPLEX (&ddt_predef_C_LONG_DOUBLE_COMPLEX)
#define DDT_WCHAR (&ddt_predef_WCHAR)
#define DDT_AINT (&ddt_predef_AINT)
#define DDT_OFFSET (&ddt_predef_OFFSET)
#define DDT_COUNT (&ddt_predef_COUNT)
#define DDT_PACKED (&ddt_predef_PACKED)
#define DDT_FLOAT_INT (&ddt_predef_FLOAT_INT)
#define DDT_DOUBLE_INT (&ddt_predef_DOUBLE_INT)
#define DDT_LONG_INT (&ddt_predef_LONG_INT)
#define DDT_2INT (&ddt_predef_2INT)
#define DDT_SHORT_INT (&ddt_predef_SHORT_INT)
#define DDT_LONG_DOUBLE_INT (&ddt_predef_LONG_DOUBLE_INT)

/* ---- constructors (MPI-4.1 semantics) --------------------------------------------------
 * Each constructor makes a new derived type in *newtype, which the caller commits before moving
 * data with it and releases with ddt_type_free. A derived type holds its own references to the
 * types it was built from, so those may be freed at once. Block lengths count elements of
 * oldtype; strides and displacements count extents of oldtype, or bytes where the name says
 * so (the h- forms, struct). A negative count or block length is DDT_ERR_COUNT, a null or freed
 * oldtype DDT_ERR_TYPE, a null newtype or array DDT_ERR_ARG, a size or bound beyond 64 bits
 * DDT_ERR_OVERFLOW. Bounds (lb, extent) follow the standard's rules, explicit bounds of resized,
 * subarray and darray members included. */
/* Storage orders of ddt_type_subarray and ddt_type_darray: C (row-major, the last dimension
 * varies fastest) and Fortran (column-major, the first varies fastest). */
enum { DDT_ORDER_C = 0, DDT_ORDER_FORTRAN = 1 };
/* Per-dimension distributions of ddt_type_darray, and the darg that asks for the default
 * block size of a block distribution, ceil(gsize / psize). */
enum { DDT_DISTRIBUTE_BLOCK = 0, DDT_DISTRIBUTE_CYCLIC = 1, DDT_DISTRIBUTE_NONE = 2 };
#define DDT_DISTRIBUTE_DFLT_DARG (-49767)

/* count copies of oldtype, each one extent of oldtype after the previous. */
int ddt_type_contiguous(int64_t count, ddt_type oldtype, ddt_type *newtype);
/* count blocks of blocklength elements of oldtype, block i starting i * stride extents of oldtype
 * after the first: column j of a row-major n x m matrix of doubles is
 * ddt_type_vector(n, 1, m, DDT_DOUBLE, &t) applied at &a[0][j]. A negative stride walks backwards. */
int ddt_type_vector(int64_t count, int64_t blocklength, int64_t stride, ddt_type oldtype, ddt_type *newtype);
/* ddt_type_vector with the stride in bytes. */
int ddt_type_hvector(int64_t count, int64_t blocklength, int64_t stride_bytes, ddt_type oldtype, ddt_type *newtype);
/* count blocks, block i of blocklengths[i] elements of oldtype at displs[i] extents of oldtype,
 * in the order given (unsorted and overlapping displacements are kept as written). */
int ddt_type_indexed(int64_t count, const int64_t blocklengths[], const int64_t displs[], ddt_type oldtype, ddt_type *newtype);
/* ddt_type_indexed with the displacements in bytes. */
int ddt_type_hindexed(int64_t count, const int64_t blocklengths[], const int64_t displs_bytes[], ddt_type oldtype, ddt_type *newtype);
/* ddt_type_indexed with one block length for every block. */
int ddt_type_indexed_block(int64_t count, int64_t blocklength, const int64_t displs[], ddt_type oldtype, ddt_type *newtype);
/* ddt_type_indexed_block with the displacements in bytes. */
int ddt_type_hindexed_block(int64_t count, int64_t blocklength, const int64_t displs_bytes[], ddt_type oldtype, ddt_type *newtype);
/* count blocks, block i of blocklengths[i] elements of types[i] at byte displacement
 * displs_bytes[i]: the fields of a C struct, with offsetof() as displacements. The extent is
 * the span of the fields rounded up to the strictest alignment among their basic types, as a C
 * compiler pads the struct, unless a member carries an explicit upper bound (from resized). */
int ddt_type_struct(int64_t count, const int64_t blocklengths[], const int64_t displs_bytes[], const ddt_type types[], ddt_type *newtype);
/* The block subsizes[] starting at starts[] of an ndims-dimensional array of sizes[] elements of
 * oldtype, stored in order (DDT_ORDER_C or DDT_ORDER_FORTRAN). Its extent is the whole array's,
 * so count 2 means the same block of two consecutive arrays. DDT_ERR_DIMS for ndims < 1 or a
 * block outside the array; DDT_ERR_ARG for an unknown order. */
int ddt_type_subarray(int ndims, const int64_t sizes[], const int64_t subsizes[], const int64_t starts[], int order, ddt_type oldtype, ddt_type *newtype);
/* The part that process rank of size owns of an ndims-dimensional global array of gsizes[]
 * elements of oldtype, distributed over a process grid of psizes[] (product: size) dimension by
 * dimension: distribs[i] is DDT_DISTRIBUTE_BLOCK, _CYCLIC or _NONE and dargs[i] its block size
 * (or DDT_DISTRIBUTE_DFLT_DARG). Its extent is the whole global array's. DDT_ERR_DIMS for
 * shapes that do not fit, DDT_ERR_DISTRIB for a distribution or darg that is not allowed. */
int ddt_type_darray(int size, int rank, int ndims, const int64_t gsizes[], const int distribs[], const int dargs[], const int psizes[], int order, ddt_type oldtype, ddt_type *newtype);
/* oldtype with lower bound lb and extent extent, in bytes: the same bytes move, but element i
 * of a count starts i * extent bytes after the first. A column resized to one double's extent
 * makes count columns consecutive columns of the matrix. */
int ddt_type_resized(ddt_type oldtype, int64_t lb, int64_t extent, ddt_type *newtype);
/* A new handle on a type with oldtype's layout and bounds (combiner DDT_COMBINER_DUP); a dup
 * of a committed type is committed. */
int ddt_type_dup(ddt_type oldtype, ddt_type *newtype);
/* Plans type for data movement: its executor is chosen here, once, so that pack, unpack, iov
 * and copy, which need a committed type (DDT_ERR_NOT_COMMITTED otherwise), only run it. A
 * committed type is immutable and may be used from any number of threads at once. */
int ddt_type_commit(ddt_type type);
/* Releases the caller's reference to a derived type; the type itself lives on while types built
 * from it (or returned by ddt_type_contents) still use it. DDT_ERR_PREDEFINED for a
 * predefined type. */
int ddt_type_free(ddt_type *type); /* sets *type to DDT_TYPE_NULL */

/* ---- queries ---------------------------------------------------------------------------- */
/* Bytes of data in one element: the length of the packed stream of count 1. */
int ddt_type_size(ddt_type type, int64_t *size);
/* Lower bound and extent in bytes, as MPI_Type_get_extent: element i of a count starts
 * i * extent bytes after the first, and the first one lb bytes from the buffer address. */
int ddt_type_extent(ddt_type type, int64_t *lb, int64_t *extent);
/* The bytes one element touches, from its lowest to one past its highest byte (explicit bounds
 * set by resized and the like ignored), as MPI_Type_get_true_extent. */
int ddt_type_true_extent(ddt_type type, int64_t *true_lb, int64_t *true_extent);

/* Combiners, as MPI_Type_get_envelope reports them. DDT_COMBINER_LAYOUT marks a type made by
 * ddt_type_deserialize: it has a layout but no constructor history, hence no contents. */
enum {
  DDT_COMBINER_NAMED = 0, DDT_COMBINER_CONTIGUOUS, DDT_COMBINER_VECTOR, DDT_COMBINER_HVECTOR,
  DDT_COMBINER_INDEXED, DDT_COMBINER_HINDEXED, DDT_COMBINER_INDEXED_BLOCK,
  DDT_COMBINER_HINDEXED_BLOCK, DDT_COMBINER_STRUCT, DDT_COMBINER_SUBARRAY, DDT_COMBINER_DARRAY,
  DDT_COMBINER_RESIZED, DDT_COMBINER_DUP, DDT_COMBINER_LAYOUT
};
/* The arguments a type was built with, in MPI_Type_get_contents order: integers holds the
 * counts, block lengths, element displacements and array shapes; addresses the byte
 * strides, byte displacements, lb and extent; datatypes the old types. */
int ddt_type_envelope(ddt_type type, int64_t *num_integers, int64_t *num_addresses,
                      int64_t *num_datatypes, int *combiner);
/* Each returned derived type carries a new reference the caller releases with ddt_type_free,
 * as MPI_Type_get_contents does; predefined handles need no free. */
int ddt_type_contents(ddt_type type, int64_t max_integers, int64_t max_addresses,
                      int64_t max_datatypes, int64_t integers[], int64_t addresses[],
                      ddt_type datatypes[]);

/* For an MPI interposer: make a not yet committed derived type report the given lb and extent
 * (those of the MPI underneath, where it differs from the standard's bounds) without changing
 * its typemap. Later constructors that use it take these bounds. */
int ddt_type_set_bounds(ddt_type type, int64_t lb, int64_t extent);

/* The layout of one element of a committed type, from its plan and in constant time: *blocks
 * is the number of contiguous blocks of its canonical layout (1: the element is one contiguous
 * block; 0: no data), *ascending is 1 when the blocks lie at ascending addresses without
 * overlap. For count elements, they stay ascending when the extent is at least the true extent. */
int ddt_type_blocks(ddt_type type, int64_t *blocks, int *ascending);

/* ---- execution -------------------------------------------------------------------------- */
/* pack, unpack and copy return DDT_ERR_ARG, and write nothing, when a buffer with relative
 * displacements would touch the first 64 KiB of the address space (a NULL or near-NULL base);
 * types built on absolute addresses (MPI_BOTTOM) work with a NULL buffer as MPI defines.
 * On x86-64 CPUs with AVX-512 (BW and VBMI), blocks of 1-12 bytes at strides of up to 64 move with
 * 64-byte byte permutes (an unpack under a store mask, which writes no byte between the blocks);
 * DDTKIT_AVX512=0 in the environment turns that off (read once, when the first type is committed). */
/* bytes [offset, offset + outsize) of the packed stream of (inbuf, incount, type); *packed = bytes written */
int ddt_pack(const void *inbuf, int64_t incount, ddt_type type, int64_t offset, void *outbuf, int64_t outsize, int64_t *packed);
/* insize bytes from inbuf into stream positions [offset, offset + insize) of (outbuf, outcount, type) */
int ddt_unpack(const void *inbuf, int64_t insize, void *outbuf, int64_t outcount, ddt_type type, int64_t offset, int64_t *unpacked);
/* merged contiguous pieces of the stream from offset on: at most max_iov of them; *bytes = stream bytes they cover.
 * Touches no byte of buf, so a NULL buf lists the pieces as offsets. */
int ddt_iov(const void *buf, int64_t count, ddt_type type, int64_t offset, struct iovec *iov, int64_t max_iov, int64_t *n_iov, int64_t *bytes);
/* the packed stream of (src, scount, stype) into (dst, dcount, dtype); packed sizes must be equal */
int ddt_copy(const void *src, int64_t scount, ddt_type stype, void *dst, int64_t dcount, ddt_type dtype);

/* ---- layout identity -------------------------------------------------------------------- */
/* Hash of the canonical layout of ONE element (the bytes count 1 moves, with their
 * displacements and order). The extent, which places further elements, is not part of it: two
 * types with equal hashes and equal extents move the same bytes for any count. */
int ddt_type_hash(ddt_type type, uint8_t out[16]);
/* The layout and bounds of type as compact, versioned bytes that ddt_type_deserialize reads in
 * any process: buf receives *needed bytes when bufsize >= *needed, else DDT_ERR_TRUNCATE and
 * nothing is written (call with bufsize 0 to learn the size). */
int ddt_type_serialize(ddt_type type, void *buf, int64_t bufsize, int64_t *needed); /* *needed always set */
/* A new, committed type with the layout and bounds serialized in buf. It has no constructor
 * history (combiner DDT_COMBINER_LAYOUT, no contents). Every byte is validated: hostile input
 * gives DDT_ERR_CORRUPT, another format version DDT_ERR_VERSION, never a crash. */
int ddt_type_deserialize(const void *buf, int64_t size, ddt_type *newtype);
/* Size, bounds and canonical layout in words, for people (the wording may change between
 * versions): a NUL-terminated text in buf, or DDT_ERR_TRUNCATE and nothing written when it
 * does not fit in bufsize bytes. */
int ddt_type_describe(ddt_type type, char *buf, int64_t bufsize);

/* ---- the type notation (docs/notation.md) ------------------------------------------------ */
/* Builds the type written in text, the notation of docs/notation.md: constructor calls nested
 * freely over predefined types named in lowercase, e.g. "vector(4, 1, 5, double)" or
 * "struct([1, 3], [0, 8], [int, vector(2, 1, 4, float)])". *newtype is a new type the caller
 * frees with ddt_type_free and commits before moving data (a bare predefined name gives a dup
 * of it, already committed). On error *newtype = DDT_TYPE_NULL and, when errsize > 0, errbuf
 * holds a NUL-terminated message (cut to errsize) that starts with the position of the fault,
 * "character N (line L, column C): ..."; the code is DDT_ERR_ARG for text that is not the
 * notation (syntax, unknown names, lists of different lengths, integers beyond 64 bits, nesting
 * deeper than 300), or the constructor's own code for arguments it rejects (DDT_ERR_COUNT for a
 * negative count, ...); DDT_ERR_NO_MEM (message "out of memory") when memory runs out. errbuf
 * is not written on success. Safe on hostile text. */
int ddt_type_parse(const char *text, ddt_type *newtype, char *errbuf, int64_t errsize);
/* Writes type in the notation, from its constructor history (envelope and contents), recursively;
 * parsing the text gives a type with the same layout hash, size, lb and extent. Bounds set by
 * ddt_type_set_bounds appear as resized(...); a type from ddt_type_deserialize, which has no
 * history, is written as its canonical layout over bytes inside a resized. *needed is always set:
 * the bytes the text takes with its NUL (0 on an error other than DDT_ERR_TRUNCATE). When bufsize
 * < *needed the result is DDT_ERR_TRUNCATE and buf is not written at all. DDT_ERR_OVERFLOW when
 * the text would exceed 256 MiB (a type sharing children many times over is written out in full
 * at each use) or nest deeper than 300. */
int ddt_type_notation(ddt_type type, char *buf, int64_t bufsize, int64_t *needed);

/* A static NUL-terminated sentence that names code ("unknown error code" for a value that is
 * none of DDT_SUCCESS and the DDT_ERR_ codes): never NULL, never to be freed. */
const char *ddt_error_string(int code);

/* ---- intra-node runtime (src/shm/) --------------------------------------------------------
 * The processes of one node started by `ddtkit run -n N prog args` exchange messages of
 * (buffer, count, type) with MPI's point-to-point semantics: matching by source and tag (with
 * wildcards), messages between one pair never overtake each other, a receive takes any type whose
 * packed size is at least the message's (a longer message is DDT_ERR_TRUNCATE, its first bytes
 * delivered). Small messages (up to one cell's payload, about 16 KB; DDTKIT_EAGER_MAX lowers
 * the limit) are packed straight into a shared cell and unpacked from it, except those of more
 * than 6 KiB sent from ddt_alloc memory in a layout whose blocks, under 128 B, fill their cache
 * lines (or that the CPU's byte permutes move), which the receiver copies once out of the heap as below (a
 * DDTKIT_EAGER_MAX that is set holds for every message, and where the peer's core is far, the
 * cells are streamed as below and these stay eager). Where the host has placed the two
 * processes' cores far apart (different dies), the cells of messages of 2 KiB or more (eager,
 * and the pipelined cells below) are written with non-temporal stores; the runtime learns per
 * peer and size which way is faster (DDTKIT_STREAM_CELLS=0 never streams, 1 always). Larger
 * ones go by rendezvous, where the receiver copies straight from the sender's layout into its own:
 * with plain loads when the send buffer comes from ddt_alloc (the mapped heap below), else with
 * process_vm_readv driven by both layouts where the blocks are long, else through pipelined
 * shared cells (two copies). The sender names its layout by content and sends it once per peer
 * (memoized). ddt_comm_configure selects mechanisms and exchange designs; DDTKIT_MECH=
 * auto|pipe|cma|heap, DDTKIT_EXCHANGE=memoized|descriptor|naive|pipelined and
 * DDTKIT_CACHE_ENTRIES set them from the environment. A peer that dies makes the operations
 * waiting on it fail with DDT_ERR_PEER. Not thread-safe: one thread per process calls these.
 * Device buffers (with the GPU layer of ddtkit_cuda.h linked and initialised): a rendezvous-sized
 * send from device memory is offered by CUDA IPC and copied by one kernel of the receiver; other
 * messages are staged through host memory (packed on the GPU at the send, unpacked on the GPU as
 * the receive completes). */
typedef struct ddt_request_s *ddt_request;
#define DDT_REQUEST_NULL ((ddt_request)0)
typedef struct { int source, tag, error; int64_t bytes; } ddt_status;
#define DDT_ANY_SOURCE (-1)
#define DDT_ANY_TAG (-1)
int ddt_comm_init(void); /* joins the job started by `ddtkit run` */
/* Leaves the job: sends what this process still owes its peers, then waits in a barrier for
 * every process of the job. */
int ddt_comm_finalize(void);
int ddt_comm_rank(int *rank); /* this process's rank in the job, 0 to size - 1 */
int ddt_comm_size(int *size); /* the number of processes in the job */
/* Sends (buf, count, type) to rank dest with tag >= 0 and returns when buf may be reused. */
int ddt_comm_send(const void *buf, int64_t count, ddt_type type, int dest, int tag);
/* Receives into (buf, count, type) the next message from source with tag (DDT_ANY_SOURCE,
 * DDT_ANY_TAG: any); status receives its source, tag, error and byte count. */
int ddt_comm_recv(void *buf, int64_t count, ddt_type type, int source, int tag, ddt_status *status); /* status may be NULL */
/* The non-blocking forms: *req completes through ddt_comm_wait, ddt_comm_test or
 * ddt_comm_waitall, and buf is not to be written (isend) or used (irecv) until then. */
int ddt_comm_isend(const void *buf, int64_t count, ddt_type type, int dest, int tag, ddt_request *req);
int ddt_comm_irecv(void *buf, int64_t count, ddt_type type, int source, int tag, ddt_request *req);
/* Waits until *req completes, fills status (may be NULL) and returns the request's error. */
int ddt_comm_wait(ddt_request *req, ddt_status *status);      /* sets *req to DDT_REQUEST_NULL */
/* *done = 1 when *req has completed, which then ends as in ddt_comm_wait; else *done = 0 and
 * the request stays. A DDT_REQUEST_NULL request counts as done. */
int ddt_comm_test(ddt_request *req, int *done, ddt_status *status);
/* ddt_comm_wait on each of the n requests. */
int ddt_comm_waitall(int n, ddt_request reqs[], ddt_status statuses[]); /* statuses may be NULL */
int ddt_comm_barrier(void); /* returns once every process of the job has entered it */

/* ---- the mapped shared heap and the mechanisms ----------------------------------------------
 * Memory from ddt_alloc lives in shared segments (memfd, sealed against shrinking) that the other
 * processes of the job map read-only on first use, the descriptor passed over a Unix socket
 * (SCM_RIGHTS: no ptrace rights needed). All allocations share one window segment of 64 GiB of
 * address space whose pages exist only once touched, so a layout over several arrays from
 * ddt_alloc is read through one mapping; allocations of 1 MiB and more are page-aligned and
 * zero-filled, and their pages go back to the system on ddt_free. A rendezvous whose send buffer lies in this heap is
 * copied by the receiver with plain loads from the mapping, straight from the sender's layout
 * into its own: one copy, no system call per piece. Where a protocol gives the sender a share
 * (RPUT, COOP) and the receive lies in the receiver's heap, the sender writes it through a
 * writable mapping of that one segment, the receive's span checked to lie inside it (the same
 * trust as CMA's process_vm_writev, without ptrace rights). ddt_alloc works before ddt_comm_init.
 * ddt_free of memory a send still uses is the caller's error, as in MPI. */
int ddt_alloc(int64_t bytes, void **ptr);   /* 64-byte aligned; *ptr = NULL on failure */
int ddt_free(void *ptr);                    /* NULL is allowed; DDT_ERR_ARG for foreign pointers */
/* The usable bytes of the allocation of ddt_alloc that starts at ptr (at least what was asked,
 * a multiple of 64) in *bytes; DDT_ERR_ARG when ptr is not the start of one (memory from malloc,
 * say). The preloadable allocator libddtkit-malloc.so answers realloc and malloc_usable_size
 * with it. */
int ddt_alloc_size(const void *ptr, int64_t *bytes);
/* The file descriptors the heap holds open in this process, in *n: one per segment, kept so that
 * a peer can be sent it on first use. Usually one: the window. An allocation the window cannot
 * hold gets a segment of its own (1 MiB and more) or a new window, so a program could spend its
 * RLIMIT_NOFILE on them; libddtkit-malloc.so (and the interposer's allocator, on unless
 * DDTKIT_MALLOC=0) serves from the heap only while this is under a quarter of that limit. */
int ddt_alloc_descriptors(int64_t *n);

/* Mechanism of the rendezvous and design of the layout exchange, for this process's sends and
 * receives from now on (benchmarks and tests compare them; every process of a transfer should
 * use the same). AUTO: the cost model chooses per message (src/shm/select.hpp). */
enum { DDT_MECH_AUTO = 0, DDT_MECH_PIPE = 1, DDT_MECH_CMA = 2, DDT_MECH_HEAP = 3 };
enum { DDT_EXCHANGE_MEMOIZED = 0, DDT_EXCHANGE_DESCRIPTOR = 1, DDT_EXCHANGE_NAIVE = 2, DDT_EXCHANGE_PIPELINED = 3 };
int ddt_comm_configure(int mechanism, int exchange, int64_t cache_entries); /* cache_entries <= 0: keep */

/* Rendezvous protocol (seed 002): who copies a large message, decided per message by the
 * receiver's setting (the sender follows what the receiver's CTS says, so the processes need not
 * agree). The static protocols:
 *   RGET: the receiver copies from the sender's layout into its own (heap, CMA or cells as the
 *     mechanism says) while the sender waits.
 *   RPUT: the receiver answers with its own layout, address and count (memoized by content hash
 *     as the sender's layout is), and the sender writes into it with process_vm_writev.
 *   COOP (COOP-p2p): both copy at once, split by packed-stream offset: the receiver the first
 *     part (from the heap mapping or by CMA), the sender the rest by CMA write; each completes
 *     once its own share is done and the other's FIN has arrived.
 * The dynamic ones choose among those per message:
 *   COOP_COLL: seed 002's Table II, from the sender's call (blocking or not, and its send mode,
 *     which the RTS carries) and the receiver's (recv or irecv): send/recv, ssend/recv,
 *     rsend/recv COOP; isend/recv and bsend/recv RGET; send/irecv, bsend/irecv, ssend/irecv,
 *     rsend/irecv RPUT; isend/irecv COOP.
 *   COOP_LOAD: each process publishes the stream bytes it has yet to copy (ddt_comm_get_load)
 *     and the bytes it copied lately (decayed over about 20 ms); a process's load is the two
 *     together. Where processes share cores (more ranks than cores) and the loads differ by at
 *     least n / 64, the less loaded side copies the whole message (RGET or RPUT); otherwise the
 *     receiver gives itself x of the n bytes so that both end equally loaded,
 *     x = (n + load(sender) - load(receiver)) / 2 clamped to [0, n]: RGET when x = n, RPUT when
 *     x = 0, COOP split at x otherwise. The constants and their measurements: protocol.cpp.
 *   COOP_CHUNKED: COOP-p2p whose copies run in chunks (ddt_comm_set_chunking), the progress
 *     engine polled between chunks so that other peers' control messages are not held up.
 *   COOP_HCA: the copy striped over this core and a second copy engine (a helper thread, the
 *     one available on a machine without a DMA engine): the engine takes R / (1 + R) of the
 *     bytes, R = its bandwidth over the core's (ddt_comm_set_engine_ratio, default 1).
 *   HYBRID (the default): COOP_COLL where a blocking call decides, COOP_LOAD where neither side
 *     blocks (isend/irecv), RGET where the sender's share would be short pieces written by CMA
 *     (its cost per piece exceeds a second core's gain; a share written through the receive's
 *     heap segment has no such bound) or the message is too small to pay for the CTS round
 *     trip (a lower bound where both calls block, since neither side has other work, than
 *     where one does not; RGET too where RGET would move the message in cells), chunked above
 *     the chunking threshold. Thresholds and the measurements that chose them are beside the
 *     code (src/shm/protocol.cpp).
 * Every protocol but RGET needs a way for the sender to write the receive (the receive in the
 * receiver's heap with DDT_MECH_AUTO or HEAP, else CMA) and a layout exchange (memoized,
 * descriptor); without one, with DDT_MECH_PIPE, or with the naive and pipelined exchanges, the
 * transfer runs as RGET. DDTKIT_PROTOCOL=rget|rput|coop|coll|load|
 * chunked|hca|hybrid sets it at init. DDT_ERR_ARG for another value, DDT_ERR_COMM before
 * ddt_comm_init. */
enum {
  DDT_PROTO_RGET = 0, DDT_PROTO_RPUT = 1, DDT_PROTO_COOP = 2, DDT_PROTO_COOP_COLL = 3, DDT_PROTO_COOP_LOAD = 4,
  DDT_PROTO_COOP_CHUNKED = 5, DDT_PROTO_COOP_HCA = 6, DDT_PROTO_HYBRID = 7
};
int ddt_comm_set_protocol(int protocol);

/* Copies of rendezvous messages of at least min_bytes are made chunk_bytes of stream at a time,
 * this process's progress engine (its cells from every peer) polled between chunks (COOP-chunked;
 * HYBRID uses it above min_bytes, COOP_CHUNKED whatever the size). min_bytes < 0: never
 * chunked; chunk_bytes <= 0 keeps the current chunk. DDT_ERR_COMM before ddt_comm_init;
 * DDTKIT_CHUNK_MIN and DDTKIT_CHUNK_BYTES set them at init. */
int ddt_comm_set_chunking(int64_t min_bytes, int64_t chunk_bytes);

/* COOP_HCA's ratio R = the second engine's copy bandwidth over this core's (> 0; the engine
 * takes R / (1 + R) of each striped copy). DDT_ERR_ARG for R <= 0 or not finite. The engine
 * (a helper thread) spins between copies where this process may run on at least twice as many
 * cores as the job has processes, and sleeps otherwise (a wake-up costs its copy about 14 us);
 * DDTKIT_ENGINE_SPIN=1 or 0 decides instead, at init. */
int ddt_comm_set_engine_ratio(double ratio);

/* COOP-load's counter: the stream bytes that process rank has yet to copy for rendezvous
 * transfers it takes part in (its own shares, counted when the protocol was chosen, uncounted as
 * each copy ends or fails). Zero whenever no transfer is in flight. DDT_ERR_ARG for a rank
 * outside the job or a null pointer. */
int ddt_comm_get_load(int rank, int64_t *pending_bytes);

/* Send modes (MPI's): STANDARD as ddt_comm_send; SYNC completes only once the receive has
 * matched it; BUFFERED completes at once (the message is packed into memory of the runtime's
 * own, from the mapped heap, freed when delivered); READY is standard here (the receive must be
 * posted: an application's promise, not checked), told to the receiver for COOP_COLL. The
 * blocking form waits for the completion the mode defines; the non-blocking one returns a
 * request. DDT_ERR_ARG for an unknown mode, and whatever ddt_comm_send returns. */
enum { DDT_SEND_STANDARD = 0, DDT_SEND_SYNC = 1, DDT_SEND_BUFFERED = 2, DDT_SEND_READY = 3 };
int ddt_comm_send_mode(const void *buf, int64_t count, ddt_type type, int dest, int tag, int mode);
int ddt_comm_isend_mode(const void *buf, int64_t count, ddt_type type, int dest, int tag, int mode,
                        ddt_request *req);

/* Nanoseconds this process spent in each phase of the rendezvous transfers it took part in
 * (FALCON-X's cost split): exchange (sender: serializing, hashing or listing its layout),
 * translate (receiver: deserializing or finding the sender's layout), attach (receiver: mapping
 * the segment and checking and translating the sender's addresses), copy (receiver: moving the
 * bytes; with RPUT and COOP the sender's copy counts at the sender); counts of transfers, of
 * layout-cache hits and of the mechanism each receive used (hits and requests count the
 * receive layouts that RPUT and COOP send back too).
 * Cumulative; subtract two readings. */
typedef struct {
  int64_t sends, receives, cache_hits, layout_requests; /* requests: evicted layouts asked for again */
  int64_t exchange_ns, translate_ns, attach_ns, copy_ns;
  int64_t by_heap, by_cma, by_cells;  /* receives moved by each mechanism */
  /* receives by each rendezvous protocol (ddt_comm_set_protocol): RGET counts the receiver's
   * single copies (heap or CMA; cells count in none), RPUT and COOP the transfers the sender
   * copied in, wholly or in part (their mechanism is counted above as well). Appended fields:
   * the struct grows only at its end. */
  int64_t by_rget, by_rput, by_coop;
  /* copies: rendezvous copies this process made itself (its shares, as receiver or sender: seed
   * 002's figure 17 counts these per rank); copy_bytes: their stream bytes; chunks: chunks the
   * chunked copies were cut into; engine_bytes: bytes the second copy engine moved (COOP_HCA). */
  int64_t copies, copy_bytes, chunks, engine_bytes;
  /* sender: RPUT and COOP shares this process wrote through its mapping of the receive's heap
   * segment (the receive lies in the receiver's ddt_alloc heap), and by CMA (process_vm_writev). */
  int64_t shares_heap, shares_cma;
  /* receives of device sends copied by one kernel through CUDA IPC (ddtkit_cuda.h's GPU layer). */
  int64_t by_ipc;
} ddt_comm_times;
int ddt_comm_get_times(ddt_comm_times *t);

/* FALCON-X's commit_comm: sends type's layout to every peer now, pinned in their layout caches
 * (never evicted) until ddt_type_free_comm, so that the first transfer of it already exchanges
 * only the key. The key is the layout's content hash, which every process computes alike from the
 * layout alone, so no allreduce is needed to agree on an id (FALCON-X needs one because its ids
 * are per-process counters); and a pinned entry can never be stale, since a different layout has
 * a different key. Not collective: each process calls it for the types it will send. */
int ddt_type_commit_comm(ddt_type type);
int ddt_type_free_comm(ddt_type type);

/* ---- collectives over the point-to-point protocols (seed 002's patterns) ---------------------
 * Every process of the job calls each, in the same order, with the same root (in [0, size)).
 * Their messages never match a user's receive (DDT_ANY_TAG included). Types may be derived;
 * the packed bytes sent and received must agree as for a send and its receive (a root's or
 * peer's message longer than the receive: DDT_ERR_TRUNCATE). The root's scatter sends, and the
 * root's gather receives, are non-blocking calls and the other processes' blocking ones, so
 * COOP_COLL (and HYBRID) choose RGET for scatter and bcast (every receiver copies its own) and
 * RPUT for gather (every sender writes its own): seed 002's figures 14 and 15.
 * DDT_ERR_COMM before ddt_comm_init, DDT_ERR_ARG for a bad root, and the codes of the sends and
 * receives they make (DDT_ERR_PEER when a process of the job has died). */
enum { DDT_OP_SUM = 0, DDT_OP_MAX = 1, DDT_OP_MIN = 2 };
/* count elements of type at buf on the root, to every process's buf. */
int ddt_comm_bcast(void *buf, int64_t count, ddt_type type, int root);
/* The root's sendbuf holds size consecutive blocks of sendcount elements of sendtype (block i at
 * sendbuf + i * sendcount * extent); block i goes to process i's recvbuf. */
int ddt_comm_scatter(const void *sendbuf, int64_t sendcount, ddt_type sendtype, void *recvbuf, int64_t recvcount,
                     ddt_type recvtype, int root);
/* The inverse of scatter: every process's sendbuf to block i (process i) of the root's recvbuf;
 * recvbuf, recvcount and recvtype matter on the root only. */
int ddt_comm_gather(const void *sendbuf, int64_t sendcount, ddt_type sendtype, void *recvbuf, int64_t recvcount,
                    ddt_type recvtype, int root);
/* Block j of each process's sendbuf to block i (this process) of process j's recvbuf. */
int ddt_comm_alltoall(const void *sendbuf, int64_t sendcount, ddt_type sendtype, void *recvbuf, int64_t recvcount,
                      ddt_type recvtype);
/* Element-wise op over every process's count elements of type (a predefined numeric type:
 * DDT_ERR_TYPE otherwise) into the root's recvbuf; sendbuf and recvbuf do not overlap. Messages
 * of at least 64 KiB go by reduce-scatter then gather (seed 002's figure 16), smaller ones
 * straight to the root. DDT_ERR_ARG for an op other than sum, max and min. */
int ddt_comm_reduce(const void *sendbuf, void *recvbuf, int64_t count, ddt_type type, int op, int root);

/* ---- starting the runtime under another launcher (mpiexec) ----------------------------------
 * ddt_comm_init joins a job of `ddtkit run`; ddt_comm_init_bootstrap joins one whose processes
 * another launcher started, mpiexec for instance (include/ddtkit_mpi_bootstrap.h does it for an
 * MPI program in one call: ddt_comm_init_mpi(MPI_COMM_WORLD)). The caller gives this process's
 * rank and the number of processes among the processes of its node (the runtime's ranks are
 * these node ranks) and a broadcast from node rank 0 over exactly those processes: bcast(buf,
 * bytes, ctx) sends node rank 0's bytes to every other, returning 0 on success (MPI_Bcast on the
 * node's communicator, say). libddtkit links no MPI. Collective over the node's processes: node
 * rank 0 removes stale segments of crashed jobs, creates the job's segment (0600, this user's
 * only) and broadcasts its name; every process maps it and waits for the others, and the name
 * is unlinked once all hold it. DDT_ERR_ARG for a null b or bcast, size < 1 or above 256, or rank
 * outside [0, size), nothing broadcast; DDT_ERR_COMM when the broadcast fails, node rank 0 could
 * not create the segment (every process then fails, none waits), the runtime is already started,
 * or a process of the node never attached (after a 60 s wait); DDT_ERR_PEER when node rank 0 gave
 * the segment up after broadcasting its name. Without a launcher nobody marks dead ranks: a peer
 * that dies later is found by probing its pid, and its peers' operations fail with DDT_ERR_PEER. */
/* What ddt_comm_init_bootstrap needs from the launcher, and the call (as described above). */
typedef struct {
  int rank, size;  /* this process among the processes of its node */
  void *ctx;       /* passed to bcast */
  int (*bcast)(void *buf, int bytes, void *ctx); /* from node rank 0; 0 on success */
} ddt_bootstrap;
int ddt_comm_init_bootstrap(const ddt_bootstrap *b);

#ifdef __cplusplus
}
#endif
#endif
