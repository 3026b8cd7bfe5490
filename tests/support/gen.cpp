#include "gen.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace {

int64_t pick(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// Basic types weighted toward the interesting ones: long double, bool, unsigned, complex, pairs.
int random_basic(std::mt19937_64& rng) {
  static const int common[] = {0, 4, 6, 7, 12, 13, 14, 15, 24, 25, 26, 33, 36, 37, 3, 9, 11};
  if (pick(rng, 0, 3) == 0) return static_cast<int>(pick(rng, 0, 37));
  return common[pick(rng, 0, sizeof common / sizeof common[0] - 1)];
}

TPtr gen(std::mt19937_64& rng, const GenOptions& opt, int depth) {
  auto t = std::make_shared<TNode>();
  if (depth == 0 || pick(rng, 0, 5) == 0) {
    t->kind = TNode::Basic;
    t->basic = random_basic(rng);
    return t;
  }
  auto kid = [&] { return gen(rng, opt, depth - 1); };
  int k = static_cast<int>(pick(rng, 1, 12));
  t->kind = static_cast<TNode::Kind>(k);
  int64_t n = pick(rng, 1, 5);
  if (pick(rng, 0, 19) == 0) n = 0;  // empty types appear in real code too
  switch (t->kind) {
    case TNode::Contig:
      t->count = n;
      t->kids = {kid()};
      break;
    case TNode::Vector:
      t->count = n;
      t->bl = pick(rng, 0, 4);
      t->stride = opt.allow_overlap ? pick(rng, -6, 6) : (pick(rng, 0, 1) ? 1 : -1) * (t->bl + pick(rng, 0, 3));
      t->kids = {kid()};
      break;
    case TNode::HVector:
      t->count = n;
      t->bl = pick(rng, 0, 4);
      t->stride = pick(rng, -96, 96);
      t->kids = {kid()};
      break;
    case TNode::Indexed:
    case TNode::HIndexed:
    case TNode::IndexedBlock:
    case TNode::HIndexedBlock: {
      bool bytes = t->kind == TNode::HIndexed || t->kind == TNode::HIndexedBlock;
      t->count = n;
      t->bl = pick(rng, 0, 4);
      for (int64_t i = 0; i < n; ++i) {
        t->bls.push_back(pick(rng, 0, 4));
        t->displs.push_back(bytes ? pick(rng, -128, 128) : pick(rng, -10, 10));
      }
      t->kids = {kid()};
      break;
    }
    case TNode::Struct:
      t->count = pick(rng, 1, 4);
      for (int64_t i = 0; i < t->count; ++i) {
        t->bls.push_back(pick(rng, 0, 3));
        t->displs.push_back(pick(rng, -64, 64));
        t->kids.push_back(kid());
      }
      break;
    case TNode::Subarray:
      t->ndims = static_cast<int>(pick(rng, 1, 3));
      t->order = static_cast<int>(pick(rng, 0, 1));
      for (int i = 0; i < t->ndims; ++i) {
        int64_t s = pick(rng, 1, 5), ss = pick(rng, 1, s);
        t->sizes.push_back(s);
        t->subsizes.push_back(ss);
        t->starts.push_back(pick(rng, 0, s - ss));
      }
      t->kids = {kid()};
      break;
    case TNode::Darray: {
      t->ndims = static_cast<int>(pick(rng, 1, 3));
      t->order = static_cast<int>(pick(rng, 0, 1));
      t->psize = 1;
      for (int i = 0; i < t->ndims; ++i) {
        int64_t g = pick(rng, 1, 8);
        int dist = static_cast<int>(pick(rng, 0, 2));
        int p = dist == DDT_DISTRIBUTE_NONE ? 1 : static_cast<int>(pick(rng, 1, 3));
        int darg = DDT_DISTRIBUTE_DFLT_DARG;
        if (pick(rng, 0, 1)) darg = dist == DDT_DISTRIBUTE_BLOCK ? static_cast<int>((g + p - 1) / p + pick(rng, 0, 2))
                                                                 : static_cast<int>(pick(rng, 1, 3));
        if (dist == DDT_DISTRIBUTE_NONE) darg = DDT_DISTRIBUTE_DFLT_DARG;
        t->sizes.push_back(g);
        t->distribs.push_back(dist);
        t->dargs.push_back(darg);
        t->psizes.push_back(p);
        t->psize *= p;
      }
      t->prank = static_cast<int>(pick(rng, 0, t->psize - 1));
      t->kids = {kid()};
      break;
    }
    case TNode::Resized: {
      t->kids = {kid()};
      RefType c;
      ref_eval(*t->kids[0], c, 1 << 20);
      t->lb = c.lb + pick(rng, -16, 16);
      t->extent = std::max<int64_t>(0, c.extent() + pick(rng, -8, 24));
      if (opt.allow_negative_extent && pick(rng, 0, 15) == 0) t->extent = -pick(rng, 1, 32);
      break;
    }
    case TNode::Dup:
      t->kids = {kid()};
      break;
    default:
      break;
  }
  return t;
}

}  // namespace

TPtr random_type(std::mt19937_64& rng, const GenOptions& opt, RefType& ref, int64_t max_entries,
                 int64_t max_span) {
  for (;;) {
    TPtr t = gen(rng, opt, static_cast<int>(pick(rng, 1, opt.max_depth)));
    if (!ref_eval(*t, ref, max_entries)) continue;
    if (ref.true_ub - ref.true_lb > max_span || std::abs(ref.extent()) > max_span) continue;
    if (std::abs(ref.lb) > max_span || std::abs(ref.true_lb) > max_span) continue;
    return t;
  }
}

ddt_type build_ddt(const TNode& t, int* err) {
  *err = DDT_SUCCESS;
  if (t.kind == TNode::Basic) {
    static const ddt_type all[] = {
#define X(N) DDT_##N,
        DDT_PREDEFINED_LIST(X)
#undef X
    };
    return all[t.basic];
  }
  std::vector<ddt_type> kids;
  for (const TPtr& k : t.kids) {
    ddt_type c = build_ddt(*k, err);
    if (!c) {
      for (ddt_type x : kids) ddt_type_free(&x);
      return nullptr;
    }
    kids.push_back(c);
  }
  ddt_type out = DDT_TYPE_NULL;
  int e = DDT_ERR_ARG;
  ddt_type o = kids.empty() ? DDT_TYPE_NULL : kids[0];
  std::vector<int64_t> d64(t.displs);
  switch (t.kind) {
    case TNode::Contig: e = ddt_type_contiguous(t.count, o, &out); break;
    case TNode::Vector: e = ddt_type_vector(t.count, t.bl, t.stride, o, &out); break;
    case TNode::HVector: e = ddt_type_hvector(t.count, t.bl, t.stride, o, &out); break;
    case TNode::Indexed: e = ddt_type_indexed(t.count, t.bls.data(), d64.data(), o, &out); break;
    case TNode::HIndexed: e = ddt_type_hindexed(t.count, t.bls.data(), d64.data(), o, &out); break;
    case TNode::IndexedBlock: e = ddt_type_indexed_block(t.count, t.bl, d64.data(), o, &out); break;
    case TNode::HIndexedBlock: e = ddt_type_hindexed_block(t.count, t.bl, d64.data(), o, &out); break;
    case TNode::Struct: e = ddt_type_struct(t.count, t.bls.data(), d64.data(), kids.data(), &out); break;
    case TNode::Subarray:
      e = ddt_type_subarray(t.ndims, t.sizes.data(), t.subsizes.data(), t.starts.data(), t.order, o, &out);
      break;
    case TNode::Darray:
      e = ddt_type_darray(t.psize, t.prank, t.ndims, t.sizes.data(), t.distribs.data(), t.dargs.data(),
                          t.psizes.data(), t.order, o, &out);
      break;
    case TNode::Resized: e = ddt_type_resized(o, t.lb, t.extent, &out); break;
    case TNode::Dup: e = ddt_type_dup(o, &out); break;
    default: break;
  }
  for (ddt_type x : kids)
    if (x != DDT_TYPE_NULL) ddt_type_free(&x);  // predefined handles refuse, harmlessly
  if (e == DDT_SUCCESS && t.override_bounds) {
    e = ddt_type_set_bounds(out, t.ov_lb, t.ov_extent);
    if (e != DDT_SUCCESS) ddt_type_free(&out);
  }
  if (e != DDT_SUCCESS) {
    *err = e;
    return nullptr;
  }
  return out;
}

const char* kind_name(TNode::Kind k) {
  static const char* names[] = {"basic", "contig", "vector", "hvector", "indexed", "hindexed",
                                "indexed_block", "hindexed_block", "struct", "subarray", "darray",
                                "resized", "dup"};
  return names[k];
}

std::string describe(const TNode& t) {
  std::ostringstream s;
  s << kind_name(t.kind) << "(";
  switch (t.kind) {
    case TNode::Basic: s << t.basic; break;
    case TNode::Resized: s << "lb " << t.lb << ", ext " << t.extent << ", "; break;
    case TNode::Subarray:
    case TNode::Darray:
      s << "nd " << t.ndims << " order " << t.order << " sizes";
      for (auto v : t.sizes) s << " " << v;
      if (t.kind == TNode::Subarray) {
        s << " sub";
        for (auto v : t.subsizes) s << " " << v;
        s << " starts";
        for (auto v : t.starts) s << " " << v;
      } else {
        s << " P " << t.psize << " r " << t.prank << " dist";
        for (size_t i = 0; i < t.distribs.size(); ++i) s << " " << t.distribs[i] << "/" << t.dargs[i] << "/" << t.psizes[i];
      }
      s << ", ";
      break;
    default:
      s << t.count << ", bl " << t.bl << ", stride " << t.stride << ", bls [";
      for (auto v : t.bls) s << v << " ";
      s << "], displs [";
      for (auto v : t.displs) s << v << " ";
      s << "], ";
  }
  for (auto& k : t.kids) s << describe(*k) << " ";
  s << ")";
  return s.str();
}

TPtr tnode_from_ddt(ddt_type t) {
  int64_t ni, na, nd;
  int comb;
  if (ddt_type_envelope(t, &ni, &na, &nd, &comb) != DDT_SUCCESS) return nullptr;
  auto n = std::make_shared<TNode>();
  if (comb == DDT_COMBINER_NAMED) {
    static const ddt_type all[] = {
#define X(N) DDT_##N,
        DDT_PREDEFINED_LIST(X)
#undef X
    };
    for (int i = 0; i < static_cast<int>(sizeof all / sizeof all[0]); ++i)
      if (all[i] == t) n->basic = i;
    return n;
  }
  std::vector<int64_t> ints(ni), addrs(na);
  std::vector<ddt_type> types(nd);
  if (ddt_type_contents(t, ni, na, nd, ints.data(), addrs.data(), types.data()) != DDT_SUCCESS) return nullptr;
  for (ddt_type k : types) {
    n->kids.push_back(tnode_from_ddt(k));
    if (k != DDT_TYPE_NULL) ddt_type_free(&k);  // predefined ones refuse, harmlessly
  }
  for (auto& k : n->kids)
    if (!k) return nullptr;
  auto take = [&](size_t from, size_t count) { return std::vector<int64_t>(ints.begin() + from, ints.begin() + from + count); };
  switch (comb) {
    case DDT_COMBINER_CONTIGUOUS: n->kind = TNode::Contig, n->count = ints[0]; break;
    case DDT_COMBINER_VECTOR: n->kind = TNode::Vector, n->count = ints[0], n->bl = ints[1], n->stride = ints[2]; break;
    case DDT_COMBINER_HVECTOR: n->kind = TNode::HVector, n->count = ints[0], n->bl = ints[1], n->stride = addrs[0]; break;
    case DDT_COMBINER_INDEXED:
      n->kind = TNode::Indexed, n->count = ints[0], n->bls = take(1, ints[0]), n->displs = take(1 + ints[0], ints[0]);
      break;
    case DDT_COMBINER_HINDEXED: n->kind = TNode::HIndexed, n->count = ints[0], n->bls = take(1, ints[0]), n->displs = addrs; break;
    case DDT_COMBINER_INDEXED_BLOCK:
      n->kind = TNode::IndexedBlock, n->count = ints[0], n->bl = ints[1], n->displs = take(2, ints[0]);
      break;
    case DDT_COMBINER_HINDEXED_BLOCK: n->kind = TNode::HIndexedBlock, n->count = ints[0], n->bl = ints[1], n->displs = addrs; break;
    case DDT_COMBINER_STRUCT: n->kind = TNode::Struct, n->count = ints[0], n->bls = take(1, ints[0]), n->displs = addrs; break;
    case DDT_COMBINER_SUBARRAY: {
      int d = static_cast<int>(ints[0]);
      n->kind = TNode::Subarray, n->ndims = d, n->sizes = take(1, d), n->subsizes = take(1 + d, d), n->starts = take(1 + 2 * d, d);
      n->order = static_cast<int>(ints[1 + 3 * d]);
      break;
    }
    case DDT_COMBINER_DARRAY: {
      int d = static_cast<int>(ints[2]);
      n->kind = TNode::Darray, n->psize = static_cast<int>(ints[0]), n->prank = static_cast<int>(ints[1]), n->ndims = d;
      n->sizes = take(3, d);
      for (int i = 0; i < d; ++i) {
        n->distribs.push_back(static_cast<int>(ints[3 + d + i]));
        n->dargs.push_back(static_cast<int>(ints[3 + 2 * d + i]));
        n->psizes.push_back(static_cast<int>(ints[3 + 3 * d + i]));
      }
      n->order = static_cast<int>(ints[3 + 4 * d]);
      break;
    }
    case DDT_COMBINER_RESIZED: n->kind = TNode::Resized, n->lb = addrs[0], n->extent = addrs[1]; break;
    case DDT_COMBINER_DUP: n->kind = TNode::Dup; break;
    default: return nullptr;
  }
  return n;
}

std::vector<TPtr> open_mpi_wrong_pack_types() {
  auto basic = [](int b) {
    auto n = std::make_shared<TNode>();
    n->basic = b;
    return n;
  };
  auto hv = std::make_shared<TNode>();
  hv->kind = TNode::HVector, hv->count = 4, hv->bl = 3, hv->stride = 8, hv->kids = {basic(25)};
  auto r1 = std::make_shared<TNode>();
  r1->kind = TNode::Resized, r1->lb = 4, r1->extent = 20, r1->kids = {basic(24)};
  auto r2 = std::make_shared<TNode>();
  r2->kind = TNode::Resized, r2->lb = 0, r2->extent = 20, r2->kids = {r1};
  auto ix = std::make_shared<TNode>();
  ix->kind = TNode::Indexed, ix->count = 1, ix->bls = {3}, ix->displs = {-4}, ix->kids = {r2};
  return {hv, ix};
}

TPtr random_type_packing(std::mt19937_64& rng, const GenOptions& opt, int64_t total, int64_t max_count, bool no_overlap,
                         RefType& ref, int64_t* count) {
  TPtr t;
  *count = 0;
  for (int tries = 0; tries < 50 && !*count; ++tries) {
    t = random_type(rng, opt, ref);
    if (ref.size > 0 && total > 0 && total % ref.size == 0 && total / ref.size <= max_count &&
        !(no_overlap && ref_overlaps(ref, total / ref.size)))
      *count = total / ref.size;
  }
  return t;
}

void campaign_args(int argc, char** argv, int64_t* types, uint64_t* seed) {
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--types")) *types = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--seed")) *seed = std::strtoull(argv[i + 1], nullptr, 10);
  }
}
