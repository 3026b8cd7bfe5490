// MPI datatype -> ddtkit type, through the MPI's own envelope and contents.
//
// Translating at commit (and lazily at first use, for committed types such as the result of
// MPI_Type_dup that never pass through MPI_Type_commit) covers every constructor the MPI has,
// the _c large-count ones and the deprecated spellings included, without intercepting each:
// the MPI reports the constructor and its arguments and we replay them through ddtkit. After
// each node we impose the MPI's own lb and extent (MPICH and Open MPI differ from the
// standard, and from each other, on struct bounds with explicit markers), so count > 1 and
// every enclosing type see the same element spacing as the MPI does. A node whose size
// disagrees with the MPI's, or that cannot be translated, makes its type Pass: the MPI moves it.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "mpi/shim.hpp"

namespace ddtmpi {

namespace {

uint64_t key(MPI_Datatype dt) { return handle_key(dt); }

// The predefined types both libraries know, paired by name (the DDT_ list uses MPI's names).
ddt_type predefined(MPI_Datatype dt) {
  struct Pair {
    MPI_Datatype m;
    ddt_type d;
  };
#define DDTMPI_PAIR_(N) {MPI_##N, DDT_##N},
  static const Pair table[] = {DDT_PREDEFINED_LIST(DDTMPI_PAIR_)};
#undef DDTMPI_PAIR_
  for (const Pair& p : table)
    if (p.m == dt) return p.d;
  return DDT_TYPE_NULL;
}

// One constructor call as get_contents reports it. With large counts (the _c constructors,
// MPI-4) every count, displacement, stride and bound moves to `large`; ndims, order, size,
// rank, distribs, dargs and psizes stay in `ints`.
struct Contents {
  int combiner = 0;
  std::vector<int> ints;
  std::vector<MPI_Aint> addrs;
  std::vector<MPI_Count> large;
  std::vector<MPI_Datatype> types;
  size_t ii = 0, ai = 0, li = 0;
  bool is_large() const { return !large.empty(); }
  int64_t count() { return is_large() ? large.at(li++) : ints.at(ii++); }  // int or MPI_Count
  int64_t addr() { return is_large() ? large.at(li++) : addrs.at(ai++); }  // MPI_Aint or MPI_Count
  int64_t small() { return ints.at(ii++); }                               // int in both forms
  std::vector<int64_t> counts(int64_t n) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(count());
    return v;
  }
  std::vector<int64_t> addrs_n(int64_t n) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(addr());
    return v;
  }
};

int envelope(MPI_Datatype dt, Contents& c, int64_t& ni, int64_t& na, int64_t& nl, int64_t& nd) {
#if MPI_VERSION >= 4
  MPI_Count i, a, l, d;
  int rc = PMPI_Type_get_envelope_c(dt, &i, &a, &l, &d, &c.combiner);
  ni = i, na = a, nl = l, nd = d;
#else
  int i, a, d;
  int rc = PMPI_Type_get_envelope(dt, &i, &a, &d, &c.combiner);
  ni = i, na = a, nl = 0, nd = d;
#endif
  return rc;
}

int contents(MPI_Datatype dt, Contents& c, int64_t ni, int64_t na, int64_t nl, int64_t nd) {
  c.ints.resize(ni);
  c.addrs.resize(na);
  c.large.resize(nl);
  c.types.resize(nd);
#if MPI_VERSION >= 4
  return PMPI_Type_get_contents_c(dt, ni, na, nl, nd, c.ints.data(), c.addrs.data(), c.large.data(), c.types.data());
#else
  (void)nl;
  return PMPI_Type_get_contents(dt, static_cast<int>(ni), static_cast<int>(na), static_cast<int>(nd), c.ints.data(),
                                c.addrs.data(), c.types.data());
#endif
}

// The combiner, or -1. Through the _c envelope where the MPI has it: the plain one fails on
// types built with large counts (mpi4py builds every type with the _c constructors).
int combiner_of(MPI_Datatype dt) {
  Contents c;
  int64_t ni, na, nl, nd;
  return envelope(dt, c, ni, na, nl, nd) == MPI_SUCCESS ? c.combiner : -1;
}

bool is_named(MPI_Datatype dt) { return combiner_of(dt) == MPI_COMBINER_NAMED; }

int distrib(int d) {
  return d == MPI_DISTRIBUTE_BLOCK ? DDT_DISTRIBUTE_BLOCK : d == MPI_DISTRIBUTE_CYCLIC ? DDT_DISTRIBUTE_CYCLIC : DDT_DISTRIBUTE_NONE;
}

struct Cache {
  std::shared_mutex mu;
  std::unordered_map<uint64_t, TypeRef> map;
};
Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: MPI calls may come from atexit handlers
  return *c;
}

TypeRef cached(MPI_Datatype dt) {
  Cache& c = cache();
  std::shared_lock<std::shared_mutex> lock(c.mu);
  auto it = c.map.find(key(dt));
  return it == c.map.end() ? nullptr : it->second;
}

ddt_type translate(MPI_Datatype dt, int depth);

// The ddtkit type of a child: the cached translation of a type the application committed, or a
// fresh one (the caller frees it; *fresh says whether it must).
thread_local bool saw_x87;  // set while translating a type that holds an x87 long double

ddt_type child(MPI_Datatype dt, int depth, bool* fresh) {
  *fresh = false;
  if (ddt_type p = predefined(dt)) {
    saw_x87 |= p == DDT_LONG_DOUBLE || p == DDT_C_LONG_DOUBLE_COMPLEX || p == DDT_LONG_DOUBLE_INT;
    return p;
  }
  if (TypeRef r = cached(dt)) {
    saw_x87 |= r->x87;
    if (r->t) return r->t;
    if (r->mode == TypeInfo::Pass && !is_named(dt)) return DDT_TYPE_NULL;
  }
  *fresh = true;
  return translate(dt, depth + 1);
}

// Builds the ddtkit type of one constructor call; DDT_TYPE_NULL if it cannot.
ddt_type build(Contents& c, int depth) {
  std::vector<ddt_type> kids;
  std::vector<bool> fresh;
  bool ok = true;
  for (MPI_Datatype k : c.types) {
    bool f = false;
    ddt_type t = ok ? child(k, depth, &f) : DDT_TYPE_NULL;
    ok = ok && t != DDT_TYPE_NULL;
    kids.push_back(t);
    fresh.push_back(f);
  }
  ddt_type out = DDT_TYPE_NULL, o = kids.empty() ? DDT_TYPE_NULL : kids[0];
  if (ok) {
    switch (c.combiner) {
      case MPI_COMBINER_DUP: ddt_type_dup(o, &out); break;
      case MPI_COMBINER_CONTIGUOUS: ddt_type_contiguous(c.count(), o, &out); break;
      case MPI_COMBINER_VECTOR: {
        int64_t n = c.count(), bl = c.count(), stride = c.count();
        ddt_type_vector(n, bl, stride, o, &out);
        break;
      }
      case MPI_COMBINER_HVECTOR: {
        int64_t n = c.count(), bl = c.count(), stride = c.addr();
        ddt_type_hvector(n, bl, stride, o, &out);
        break;
      }
      case MPI_COMBINER_INDEXED: {
        int64_t n = c.count();
        auto bls = c.counts(n), ds = c.counts(n);
        ddt_type_indexed(n, bls.data(), ds.data(), o, &out);
        break;
      }
      case MPI_COMBINER_HINDEXED: {
        int64_t n = c.count();
        auto bls = c.counts(n), ds = c.addrs_n(n);
        ddt_type_hindexed(n, bls.data(), ds.data(), o, &out);
        break;
      }
      case MPI_COMBINER_INDEXED_BLOCK: {
        int64_t n = c.count(), bl = c.count();
        auto ds = c.counts(n);
        ddt_type_indexed_block(n, bl, ds.data(), o, &out);
        break;
      }
      case MPI_COMBINER_HINDEXED_BLOCK: {
        int64_t n = c.count(), bl = c.count();
        auto ds = c.addrs_n(n);
        ddt_type_hindexed_block(n, bl, ds.data(), o, &out);
        break;
      }
      case MPI_COMBINER_STRUCT: {
        int64_t n = c.count();
        auto bls = c.counts(n), ds = c.addrs_n(n);
        ddt_type_struct(n, bls.data(), ds.data(), kids.data(), &out);
        break;
      }
      case MPI_COMBINER_SUBARRAY: {
        int nd = static_cast<int>(c.small());
        auto sz = c.counts(nd), sub = c.counts(nd), st = c.counts(nd);
        int order = static_cast<int>(c.small()) == MPI_ORDER_C ? DDT_ORDER_C : DDT_ORDER_FORTRAN;
        ddt_type_subarray(nd, sz.data(), sub.data(), st.data(), order, o, &out);
        break;
      }
      case MPI_COMBINER_DARRAY: {
        int size = static_cast<int>(c.small()), rank = static_cast<int>(c.small()), nd = static_cast<int>(c.small());
        auto gs = c.counts(nd);
        std::vector<int> dist, dargs, ps;
        for (int i = 0; i < nd; ++i) dist.push_back(distrib(static_cast<int>(c.small())));
        for (int i = 0; i < nd; ++i) {
          int d = static_cast<int>(c.small());
          dargs.push_back(d == MPI_DISTRIBUTE_DFLT_DARG ? DDT_DISTRIBUTE_DFLT_DARG : d);
        }
        for (int i = 0; i < nd; ++i) ps.push_back(static_cast<int>(c.small()));
        int order = static_cast<int>(c.small()) == MPI_ORDER_C ? DDT_ORDER_C : DDT_ORDER_FORTRAN;
        ddt_type_darray(size, rank, nd, gs.data(), dist.data(), dargs.data(), ps.data(), order, o, &out);
        break;
      }
      case MPI_COMBINER_RESIZED: {
        int64_t lb = c.addr(), ext = c.addr();
        ddt_type_resized(o, lb, ext, &out);
        break;
      }
      default: break;  // Fortran-only and f90 combiners: the MPI moves these types itself
    }
  }
  for (size_t i = 0; i < kids.size(); ++i)
    if (fresh[i] && kids[i]) ddt_type_free(&kids[i]);
  return out;
}

// Translates a derived (non-named) type, or a named one that is plain bytes; DDT_TYPE_NULL if
// it cannot be translated exactly. The returned type is committed and carries the MPI's bounds.
ddt_type translate(MPI_Datatype dt, int depth) {
  if (depth > 64) return DDT_TYPE_NULL;
  Contents c;
  int64_t ni, na, nl, nd;
  if (envelope(dt, c, ni, na, nl, nd) != MPI_SUCCESS) return DDT_TYPE_NULL;
  MPI_Count size, lb, extent, tlb, text;
  PMPI_Type_size_x(dt, &size);
  PMPI_Type_get_extent_x(dt, &lb, &extent);
  PMPI_Type_get_true_extent_x(dt, &tlb, &text);
  ddt_type t = DDT_TYPE_NULL;
  if (c.combiner == MPI_COMBINER_NAMED) {
    // A named type outside the shared list (Fortran, C++, aliases): its bytes, when its data
    // is exactly [0, size) and its extent is its size.
    if (lb == 0 && extent == size && tlb == 0 && text == size) ddt_type_contiguous(size, DDT_BYTE, &t);
  } else {
    if (contents(dt, c, ni, na, nl, nd) != MPI_SUCCESS) return DDT_TYPE_NULL;
    try {
      t = build(c, depth);
    } catch (const std::exception&) {  // contents shaped differently than this combiner's
      t = DDT_TYPE_NULL;
    }
    for (MPI_Datatype k : c.types)
      if (!is_named(k)) PMPI_Type_free(&k);
  }
  if (!t) return DDT_TYPE_NULL;
  int64_t s, l, e;
  ddt_type_size(t, &s);
  ddt_type_extent(t, &l, &e);
  if (s != size || ((l != lb || e != extent) && ddt_type_set_bounds(t, lb, extent) != DDT_SUCCESS) ||
      ddt_type_commit(t) != DDT_SUCCESS) {
    ddt_type_free(&t);
    return DDT_TYPE_NULL;
  }
  return t;
}

const char* combiner_name(MPI_Datatype dt) {
  const int c = combiner_of(dt);
  if (c < 0) return "?";
  switch (c) {
    case MPI_COMBINER_NAMED: return "named";
    case MPI_COMBINER_DUP: return "dup";
    case MPI_COMBINER_CONTIGUOUS: return "contiguous";
    case MPI_COMBINER_VECTOR: return "vector";
    case MPI_COMBINER_HVECTOR: return "hvector";
    case MPI_COMBINER_INDEXED: return "indexed";
    case MPI_COMBINER_HINDEXED: return "hindexed";
    case MPI_COMBINER_INDEXED_BLOCK: return "indexed_block";
    case MPI_COMBINER_HINDEXED_BLOCK: return "hindexed_block";
    case MPI_COMBINER_STRUCT: return "struct";
    case MPI_COMBINER_SUBARRAY: return "subarray";
    case MPI_COMBINER_DARRAY: return "darray";
    case MPI_COMBINER_RESIZED: return "resized";
    default: return "other";
  }
}

TypeRef make_info(MPI_Datatype dt) {
  auto info = std::make_shared<TypeInfo>();
  MPI_Count size = 0;  // every type's, Pass ones too: receives ask it on every call (may_get_ticket)
  if (PMPI_Type_size_x(dt, &size) == MPI_SUCCESS && size > 0) info->size = size;
  if (predefined(dt) || is_named(dt)) {
    info->t = DDT_TYPE_NULL;  // the MPI moves predefined types at memory speed itself
    info->named = true;
    return info;
  }
  saw_x87 = false;
  ddt_type t = translate(dt, 0);
  info->x87 = saw_x87;
  if (t) {
    info->t = t;
    int64_t lb, tlb, text;
    ddt_type_size(t, &info->size);
    ddt_type_extent(t, &lb, &info->extent);
    // The plan answers how many blocks an element has and whether they ascend, from the
    // layout (no listing of blocks). One block per element, and elements that abut, make the
    // whole buffer one piece, which starts at the true lower bound.
    int64_t blocks = 0;
    int ascending = 0;
    ddt_type_blocks(t, &blocks, &ascending);
    ddt_type_true_extent(t, &tlb, &text);
    if (info->size == 0 || (blocks == 1 && info->extent == info->size)) {
      info->mode = TypeInfo::Contig;
      info->offset = tlb;
    } else {
      info->mode = TypeInfo::Pack;
      info->pieces = blocks;
      info->mean_block = info->size / blocks;
      info->monotone = ascending && info->extent >= text;
      info->aligned = naturally_aligned(t, &info->unit);  // the Open MPI pass rule's (pass.cpp)
      info->parts = struct_of_parts(t);
      // The first 16 packed bytes of enough elements to hold them (at most 16 pieces of >= 1 B).
      const int64_t elems = (16 + info->size - 1) / info->size;
      int64_t at = 0;
      each_piece(t, elems, 16, [&](uintptr_t base, size_t len) {
        if (at >= 16 || info->head_n >= 16) return;
        const int64_t take = std::min<int64_t>(static_cast<int64_t>(len), 16 - at);
        info->head_off[info->head_n] = static_cast<int64_t>(base);
        info->head_len[info->head_n++] = static_cast<uint8_t>(take);
        at += take;
      });
      if (at < 16) info->head_n = 0;  // an element smaller than that: unknown, the slow way
    }
  }
  if (verbose()) {
    char desc[160] = "";
    if (info->t) ddt_type_describe(info->t, desc, sizeof desc);
    for (char* c = desc; *c; ++c)
      if (*c == '\n') *c = ';';
    // The translated type in the notation (docs/notation.md), for `ddtkit inspect` to take as
    // it is; cut, with a marker, beyond kMaxNotation characters.
    constexpr int64_t kMaxNotation = 4096;
    std::string notation;
    int64_t need = 0;
    if (info->t && ddt_type_notation(info->t, nullptr, 0, &need) == DDT_ERR_TRUNCATE && need > 0) {
      notation.assign(static_cast<size_t>(need), '\0');
      if (ddt_type_notation(info->t, &notation[0], need, &need) == DDT_SUCCESS) {
        notation.resize(static_cast<size_t>(need - 1));
        // After the description's last ';', or straight after the extent when there is none.
        const std::string lead = *desc ? " notation: " : ", notation: ";
        if (need - 1 > kMaxNotation)
          notation = lead + notation.substr(0, kMaxNotation) + " ...[cut: " + std::to_string(need - 1) +
                     " characters in all]";
        else
          notation = lead + notation;
      } else {
        notation.clear();
      }
    }
    std::fprintf(stderr, "ddtkit-mpi: datatype %#llx (%s): %s, size %lld, extent %lld%s%s%s\n",
                 static_cast<unsigned long long>(key(dt)), combiner_name(dt),
                 info->mode == TypeInfo::Contig ? "contiguous, sent from the user's buffer"
                 : info->mode != TypeInfo::Pack ? "passed to the MPI (not translatable)"
                 : large_pass_candidate(*info)
                     ? "packed by ddtkit (messages of 64 KiB and more whose elements share no byte: passed to the "
                       "MPI, whose single-copy path moves its large pieces as fast)"
                     : "packed by ddtkit",
                 static_cast<long long>(info->size), static_cast<long long>(info->extent), *desc ? ": " : "", desc,
                 notation.c_str());
  }
  return info;
}

TypeRef insert(MPI_Datatype dt) {
  TypeRef info = make_info(dt);
  Cache& c = cache();
  std::unique_lock<std::shared_mutex> lock(c.mu);
  c.map[key(dt)] = info;
  hot.generation.fetch_add(1, std::memory_order_release);
  return info;
}

// Each thread remembers its last few lookups, valid while the cache has not changed since: an
// application sends the same few types over and over, and this spares each call the shared lock.
struct Recent {
  uint64_t key = 0, generation = ~uint64_t(0);
  TypeRef ref;
};
constexpr int kRecent = 4;
// Initial-exec TLS: the general model calls __tls_get_addr on every access, 2% of a 1-byte
// ping-pong's time under perf. The interposer is loaded at start (LD_PRELOAD), where the static
// TLS block has room; these few bytes fit its surplus even where a program dlopens it.
__attribute__((tls_model("initial-exec"))) thread_local Recent recent[kRecent];
__attribute__((tls_model("initial-exec"))) thread_local int recent_next = 0;

}  // namespace

// What every intercepted call reads first (shim.hpp); this file bumps hot.generation at every
// change of the cache's map.
Hot hot;
__thread PeekHit last_peek __attribute__((tls_model("initial-exec")));

bool read_disabled() {
  const char* e = std::getenv("DDTKIT_DISABLE");
  const bool d = e && *e && std::strcmp(e, "0") != 0;
  hot.disabled.store(d ? 1 : 0, std::memory_order_relaxed);
  return d;
}

bool verbose() {
  static const bool v = [] {
    const char* e = std::getenv("DDTKIT_VERBOSE");
    return e && *e && std::strcmp(e, "0") != 0;
  }();
  return v;
}

TypeRef lookup(MPI_Datatype dt) {
  const uint64_t k = key(dt), g = hot.generation.load(std::memory_order_acquire);
  for (const Recent& r : recent)
    if (r.key == k && r.generation == g) return r.ref;
  TypeRef r = cached(dt);
  if (!r) r = insert(dt);
  Recent& slot = recent[recent_next++ % kRecent];
  slot.key = k, slot.generation = g, slot.ref = r;
  return r;
}

ddt_type predefined_type(MPI_Datatype dt) { return predefined(dt); }

TypeRef predefined_info(MPI_Datatype dt) {
  struct Entry {
    MPI_Datatype m;
    TypeRef info;
  };
  // Built once, for every predefined type with a twin whose size is its extent: the pair types
  // with a gap (MPI_DOUBLE_INT: 12 bytes in 16) keep the MPI's own way. An x87 long double moves
  // as its whole 16-byte slot, so its 6 padding bytes arrive as the sender's (the MPIs leave the
  // receiver's as they were): bytes no program reads.
  static const std::vector<Entry> table = [] {
    std::vector<Entry> v;
#define DDTMPI_INFO_(N) add(MPI_##N, DDT_##N);
    const auto add = [&v](MPI_Datatype m, ddt_type d) {
      int64_t size = 0, lb = 0, extent = 0;
      if (ddt_type_size(d, &size) || ddt_type_extent(d, &lb, &extent) || size <= 0 || size != extent) return;
      auto info = std::make_shared<TypeInfo>();
      info->mode = TypeInfo::Contig, info->t = d, info->size = size, info->extent = extent;
      v.push_back({m, std::move(info)});
    };
    DDT_PREDEFINED_LIST(DDTMPI_INFO_)
#undef DDTMPI_INFO_
    return v;
  }();
  for (const Entry& e : table)
    if (e.m == dt) return e.info;
  return nullptr;
}

bool true_bounds(MPI_Datatype dt, int64_t* lb, int64_t* extent) {
  if (disabled() || predefined(dt) || is_named(dt)) return false;
  TypeRef r = cached(dt);
  if (!r) r = make_info(dt);  // an uncommitted type: translated for this answer only
  return r->t && r->size > 0 && ddt_type_true_extent(r->t, lb, extent) == DDT_SUCCESS;
}

const TypeInfo& peek_slow(MPI_Datatype dt) {
  const uint64_t k = key(dt), g = hot.generation.load(std::memory_order_acquire);
  const TypeInfo* info = nullptr;
  for (const Recent& r : recent)
    if (r.key == k && r.generation == g) info = r.ref.get();
  // The cache holds the translation until dt is freed, so the object outlives this reference.
  if (!info) info = lookup(dt).get();
  // Remembered with the generation read before the lookup: one that inserted dt bumped it, and
  // the next call looks again (and then remembers it).
  last_peek = PeekHit{k, g, info};
  return *info;
}

void on_commit(MPI_Datatype dt) { insert(dt); }

void on_free(MPI_Datatype dt) {
  Cache& c = cache();
  std::unique_lock<std::shared_mutex> lock(c.mu);
  c.map.erase(key(dt));  // operations in flight hold their own reference to the translation
  hot.generation.fetch_add(1, std::memory_order_release);
}

}  // namespace ddtmpi
