#include "reference.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <cwchar>
#include <functional>

namespace {

// Sizes and alignments for DDT_PREDEFINED_LIST's order, written out from the C ABI here rather
// than taken from ddtkit, so a mistake in predefined.cpp is caught.
struct BasicInfo {
  int64_t size, align;
};
const BasicInfo kBasic[] = {
    {1, 1}, {1, 1}, {1, 1}, {1, 1}, {2, 2}, {2, 2}, {4, 4}, {4, 4}, {8, 8}, {8, 8}, {8, 8}, {8, 8},
    {4, 4}, {8, 8}, {16, 16}, {1, 1}, {1, 1}, {2, 2}, {4, 4}, {8, 8}, {1, 1}, {2, 2}, {4, 4}, {8, 8},
    {8, 4}, {16, 8}, {32, 16}, {4, 4}, {8, 8}, {8, 8}, {8, 8}, {1, 1},
    // pair types: {value, int}
    {8, 4}, {12, 8}, {12, 8}, {8, 4}, {6, 4}, {20, 16}};
constexpr int kNumBasic = sizeof kBasic / sizeof kBasic[0];
// value size and int offset of the pair types (index - 32)
const int64_t kPairValue[] = {4, 8, 8, 4, 2, 16};
const int64_t kPairExtent[] = {8, 16, 16, 8, 8, 32};

struct Acc {  // bounds accumulated over copies
  int64_t lb_all = INT64_MAX, ub_all = INT64_MIN, lb_m = INT64_MAX, ub_m = INT64_MIN;
  bool any = false, lbm = false, ubm = false;
  void add(const RefType& c, int64_t d) {
    if (!c.has_entries) return;
    any = true;
    lb_all = std::min(lb_all, d + c.lb);
    ub_all = std::max(ub_all, d + c.ub);
    if (c.lb_marker) lbm = true, lb_m = std::min(lb_m, d + c.lb);
    if (c.ub_marker) ubm = true, ub_m = std::max(ub_m, d + c.ub);
  }
};

void finish(RefType& r, const Acc& a, bool is_struct) {
  r.has_entries = a.any;
  r.lb_marker = a.lbm;
  r.ub_marker = a.ubm;
  if (!a.any) {
    r.lb = r.ub = 0;
  } else {
    r.lb = a.lbm ? a.lb_m : a.lb_all;
    r.ub = a.ubm ? a.ub_m : a.ub_all;
    if (is_struct && !a.ubm) {
      int64_t ext = r.ub - r.lb, rem = ext % r.align;
      if (rem) r.ub += r.align - rem;
    }
  }
  r.size = 0;
  r.true_lb = INT64_MAX;
  r.true_ub = INT64_MIN;
  for (auto& e : r.map) {
    r.size += e.second;
    r.true_lb = std::min(r.true_lb, e.first);
    r.true_ub = std::max(r.true_ub, e.first + e.second);
  }
  if (r.map.empty()) r.true_lb = r.true_ub = 0;
}

bool append(RefType& r, const RefType& c, int64_t d, int64_t max) {
  if (static_cast<int64_t>(r.map.size() + c.map.size()) > max) return false;
  for (auto& e : c.map) r.map.push_back({e.first + d, e.second});
  r.kinds.insert(r.kinds.end(), c.kinds.begin(), c.kinds.end());
  return true;
}

}  // namespace

int64_t basic_size(int i) { return kBasic[i].size; }
int64_t basic_align(int i) { return kBasic[i].align; }

void basic_map(int i, std::vector<std::pair<int64_t, int64_t>>& map, std::vector<int>& kinds, int64_t& extent) {
  map.clear();
  kinds.clear();
  if (i >= 32) {
    static const int value_kind[] = {12, 13, 8, 6, 4, 14};  // float, double, long, int, short, long double
    int64_t v = kPairValue[i - 32];
    map.push_back({0, v});
    kinds.push_back(value_kind[i - 32]);
    int64_t ioff = (v + 3) / 4 * 4;
    map.push_back({ioff, 4});
    kinds.push_back(6);
    extent = kPairExtent[i - 32];
  } else {
    map.push_back({0, kBasic[i].size});
    kinds.push_back(i);
    extent = kBasic[i].size;
  }
}

std::vector<bool> x87_padding(const RefType& r, int64_t count) {
  std::vector<bool> m;
  for (int64_t k = 0; k < count; ++k)
    for (size_t e = 0; e < r.map.size(); ++e) {
      int kind = r.kinds[e];
      bool x87 = kind == 14 || kind == 26;  // long double, long double complex
      for (int64_t b = 0; b < r.map[e].second; ++b) m.push_back(x87 && b % 16 >= 10);
    }
  return m;
}

static bool ref_eval_node(const TNode& t, RefType& r, int64_t max);

bool ref_eval(const TNode& t, RefType& r, int64_t max) {
  if (!ref_eval_node(t, r, max)) return false;
  if (t.override_bounds) r.lb = t.ov_lb, r.ub = t.ov_lb + t.ov_extent;
  return true;
}

static bool ref_eval_node(const TNode& t, RefType& r, int64_t max) {
  r = RefType{};
  if (t.kind == TNode::Basic) {
    if (t.basic < 0 || t.basic >= kNumBasic) return false;
    int64_t ext;
    basic_map(t.basic, r.map, r.kinds, ext);
    r.align = kBasic[t.basic].align;
    Acc a;
    finish(r, a, false);
    r.has_entries = true;
    r.lb = 0;
    r.ub = ext;
    return true;
  }
  std::vector<RefType> kids(t.kids.size());
  for (size_t i = 0; i < t.kids.size(); ++i)
    if (!ref_eval(*t.kids[i], kids[i], max)) return false;
  Acc a;
  auto copies = [&](const RefType& c, int64_t disp, int64_t n) {  // n consecutive copies
    for (int64_t j = 0; j < n; ++j) {
      a.add(c, disp + j * c.extent());
      if (!append(r, c, disp + j * c.extent(), max)) return false;
    }
    return true;
  };
  if (!kids.empty()) r.align = kids[0].align;
  switch (t.kind) {
    case TNode::Contig:
      if (!copies(kids[0], 0, t.count)) return false;
      break;
    case TNode::Vector:
    case TNode::HVector: {
      int64_t s = t.kind == TNode::Vector ? t.stride * kids[0].extent() : t.stride;
      for (int64_t i = 0; i < t.count; ++i)
        if (t.bl > 0 && !copies(kids[0], i * s, t.bl)) return false;
      break;
    }
    case TNode::Indexed:
    case TNode::HIndexed:
    case TNode::IndexedBlock:
    case TNode::HIndexedBlock: {
      bool elems = t.kind == TNode::Indexed || t.kind == TNode::IndexedBlock;
      bool one_bl = t.kind == TNode::IndexedBlock || t.kind == TNode::HIndexedBlock;
      for (int64_t i = 0; i < t.count; ++i) {
        int64_t bl = one_bl ? t.bl : t.bls[i];
        int64_t d = elems ? t.displs[i] * kids[0].extent() : t.displs[i];
        if (bl > 0 && !copies(kids[0], d, bl)) return false;
      }
      break;
    }
    case TNode::Struct:
      for (int64_t i = 0; i < t.count; ++i) {
        r.align = std::max(r.align, kids[i].align);
        if (t.bls[i] > 0 && !copies(kids[i], t.displs[i], t.bls[i])) return false;
      }
      break;
    case TNode::Subarray:
    case TNode::Darray: {
      // Walk every index of the global array in memory order; keep the selected ones.
      const RefType& c = kids[0];
      int n = t.ndims;
      std::vector<int64_t> dims = t.sizes, coord(n), idx(n, 0);
      if (t.kind == TNode::Darray) {
        int64_t rr = t.prank, procs = t.psize;
        for (int i = 0; i < n; ++i) procs /= t.psizes[i], coord[i] = rr / procs, rr %= procs;
      }
      auto selected = [&](int d, int64_t i) {
        if (t.kind == TNode::Subarray) return i >= t.starts[d] && i < t.starts[d] + t.subsizes[d];
        int64_t g = dims[d], p = t.psizes[d];
        if (t.distribs[d] == 2) return true;  // none
        if (t.distribs[d] == 0) {             // block
          int64_t b = t.dargs[d] == -49767 ? (g + p - 1) / p : t.dargs[d];
          return i / b == coord[d];
        }
        int64_t k = t.dargs[d] == -49767 ? 1 : t.dargs[d];  // cyclic
        return (i / k) % p == coord[d];
      };
      int64_t total = 1;
      for (int64_t s : dims) total *= s;
      for (int64_t lin = 0; lin < total; ++lin) {
        // idx in memory order: the fastest dimension varies first.
        int64_t rem = lin, addr = 0, mult = 1;
        bool keep = true;
        for (int k = 0; k < n; ++k) {
          int d = t.order == 0 ? n - 1 - k : k;
          int64_t i = rem % dims[d];
          rem /= dims[d];
          addr += i * mult;
          mult *= dims[d];
          keep = keep && selected(d, i);
        }
        if (keep && !append(r, c, addr * c.extent(), max)) return false;
      }
      a.any = true;
      a.lbm = a.ubm = true;
      a.lb_m = 0;
      a.ub_m = total * c.extent();
      break;
    }
    case TNode::Resized:
      r.map = kids[0].map;
      r.kinds = kids[0].kinds;
      a.any = true;
      a.lbm = a.ubm = true;
      a.lb_m = t.lb;
      a.ub_m = t.lb + t.extent;
      break;
    case TNode::Dup:
      r.map = kids[0].map;
      r.kinds = kids[0].kinds;
      finish(r, a, false);
      r.lb = kids[0].lb, r.ub = kids[0].ub, r.lb_marker = kids[0].lb_marker;
      r.ub_marker = kids[0].ub_marker, r.has_entries = kids[0].has_entries;
      return true;
    default:
      return false;
  }
  finish(r, a, t.kind == TNode::Struct);
  return true;
}

void ref_pack(const RefType& r, const char* buf, int64_t count, char* out) {
  for (int64_t k = 0; k < count; ++k)
    for (auto& e : r.map) {
      std::memcpy(out, buf + k * r.extent() + e.first, e.second);
      out += e.second;
    }
}

void ref_unpack(const RefType& r, const char* in, int64_t count, char* buf) {
  for (int64_t k = 0; k < count; ++k)
    for (auto& e : r.map) {
      std::memcpy(buf + k * r.extent() + e.first, in, e.second);
      in += e.second;
    }
}

void ref_span(const RefType& r, int64_t count, int64_t& lo, int64_t& hi) {
  lo = 0;
  hi = 0;
  bool first = true;
  for (int64_t k = 0; k < count && !r.map.empty(); ++k) {
    int64_t a = k * r.extent() + r.true_lb, b = k * r.extent() + r.true_ub;
    if (first || a < lo) lo = a;
    if (first || b > hi) hi = b;
    first = false;
  }
}

bool ref_overlaps(const RefType& r, int64_t count) {
  std::vector<std::pair<int64_t, int64_t>> v;
  for (int64_t k = 0; k < count; ++k)
    for (auto& e : r.map) v.push_back({k * r.extent() + e.first, e.second});
  std::sort(v.begin(), v.end());
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i - 1].first + v[i - 1].second > v[i].first) return true;
  return false;
}
