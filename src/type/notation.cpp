// The type notation (docs/notation.md): a type written as the constructor calls that build it,
// `vector(4, 1, 5, double)`, read by ddt_type_parse and written by ddt_type_notation.
//
// Both directions go through one table of argument shapes, the contents form: a call is held as
// (combiner, integers, addresses, datatypes) in exactly the order ddt_type_envelope/contents
// report, and construct() replays it through the public constructors. So the writer needs no
// knowledge beyond reading a type's contents, and the parser none beyond filling them.
//
// The writer is exact about bounds, not only about the typemap: it rebuilds, beside the text, the
// type that parsing the text will give (the "mirror"), and where a node's lb or extent differ
// from its mirror's (ddt_type_set_bounds, which the MPI interposer uses, changes them without a
// constructor) it wraps the node in resized(..., lb, extent). A type made by ddt_type_deserialize
// has no constructor history: its canonical layout is written instead, as hvectors, hindexeds
// and structs of bytes inside a resized that restores its bounds (layout_text below).
//
// Hostile text: recursion is bounded by kMaxNesting, every integer is range-checked while it is
// read, a list can hold no more items than the text has characters, every constructor validates
// its own arguments, and each parsed child is released on every path (Owned).
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "type/type.hpp"
#include "util/guarded.hpp"

namespace {

// Deeper text is rejected by the parser, deeper types by the writer. Above the layout's own
// depth limit (ddt::kMaxDepth) plus the writer's wrappers, so every layout can be written.
constexpr int kMaxNesting = 300;
// The largest text the writer produces: a type whose children are shared many times over is
// written out in full for each use, which can grow without bound (DDT_ERR_OVERFLOW beyond).
constexpr size_t kMaxText = size_t(1) << 28;

// The lowercase names of the predefined types, in DDT_PREDEFINED_LIST order.
#define DDT_NOTATION_NAME_(N) #N,
const char* const kUpperNames[] = {DDT_PREDEFINED_LIST(DDT_NOTATION_NAME_)};
#undef DDT_NOTATION_NAME_
#define DDT_NOTATION_HANDLE_(N) DDT_##N,
const ddt_type kHandles[] = {DDT_PREDEFINED_LIST(DDT_NOTATION_HANDLE_)};
#undef DDT_NOTATION_HANDLE_
constexpr int kNumPredefined = sizeof kHandles / sizeof kHandles[0];

std::string lower(const char* s) {
  std::string r(s);
  for (char& c : r)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return r;
}

const std::string& predefined_name(int index) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const char* n : kUpperNames) v.push_back(lower(n));
    return v;
  }();
  return names[index];
}

// The constructors by name; the combiner doubles as the index.
struct Ctor {
  const char* name;
  int combiner;
};
const Ctor kCtors[] = {
    {"contiguous", DDT_COMBINER_CONTIGUOUS}, {"vector", DDT_COMBINER_VECTOR},
    {"hvector", DDT_COMBINER_HVECTOR},       {"indexed", DDT_COMBINER_INDEXED},
    {"hindexed", DDT_COMBINER_HINDEXED},     {"indexed_block", DDT_COMBINER_INDEXED_BLOCK},
    {"hindexed_block", DDT_COMBINER_HINDEXED_BLOCK}, {"struct", DDT_COMBINER_STRUCT},
    {"subarray", DDT_COMBINER_SUBARRAY},     {"darray", DDT_COMBINER_DARRAY},
    {"resized", DDT_COMBINER_RESIZED},       {"dup", DDT_COMBINER_DUP},
};

const char* ctor_name(int combiner) {
  for (const Ctor& c : kCtors)
    if (c.combiner == combiner) return c.name;
  return nullptr;
}

const char* const kDistribNames[] = {"block", "cyclic", "none"};  // DDT_DISTRIBUTE_* order

// A reference to a type this file made (derived) or borrows (predefined), released once.
struct Owned {
  ddt_type t = DDT_TYPE_NULL;
  Owned() = default;
  explicit Owned(ddt_type x) : t(x) {}
  Owned(Owned&& o) noexcept : t(o.t) { o.t = DDT_TYPE_NULL; }
  Owned& operator=(Owned&& o) noexcept {
    if (this != &o) {
      reset();
      t = o.t;
      o.t = DDT_TYPE_NULL;
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }
  void reset() {
    if (t && !t->predefined) ddt::release(t);
    t = DDT_TYPE_NULL;
  }
  ddt_type release_to_caller() {
    ddt_type r = t;
    t = DDT_TYPE_NULL;
    return r;
  }
};

bool fits_int(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

// Replays one constructor call given in contents form. The shapes are checked here too: a
// malformed call is DDT_ERR_ARG, never a read past a vector. The table constructors check for at
// least the entries their count needs, not exactly: a count-0 table built with null arrays keeps
// a block length in its contents (constructors.cpp), which the count then ignores.
int construct(int combiner, const std::vector<int64_t>& I, const std::vector<int64_t>& A,
              const std::vector<ddt_type>& T, ddt_type* out) {
  const size_t ni = I.size(), na = A.size(), nt = T.size();
  auto n_at = [&](size_t i) -> int64_t { return i < ni ? I[i] : -1; };
  switch (combiner) {
    case DDT_COMBINER_CONTIGUOUS:
      if (ni != 1 || na != 0 || nt != 1) return DDT_ERR_ARG;
      return ddt_type_contiguous(I[0], T[0], out);
    case DDT_COMBINER_VECTOR:
      if (ni != 3 || na != 0 || nt != 1) return DDT_ERR_ARG;
      return ddt_type_vector(I[0], I[1], I[2], T[0], out);
    case DDT_COMBINER_HVECTOR:
      if (ni != 2 || na != 1 || nt != 1) return DDT_ERR_ARG;
      return ddt_type_hvector(I[0], I[1], A[0], T[0], out);
    case DDT_COMBINER_INDEXED: {
      const int64_t n = n_at(0);
      if (n < 0 || ni < 1 + 2 * static_cast<size_t>(n) || nt != 1) return DDT_ERR_ARG;
      return ddt_type_indexed(n, I.data() + 1, I.data() + 1 + n, T[0], out);
    }
    case DDT_COMBINER_HINDEXED: {
      const int64_t n = n_at(0);
      if (n < 0 || ni < 1 + static_cast<size_t>(n) || na < static_cast<size_t>(n) || nt != 1) return DDT_ERR_ARG;
      return ddt_type_hindexed(n, I.data() + 1, A.data(), T[0], out);
    }
    case DDT_COMBINER_INDEXED_BLOCK: {
      const int64_t n = n_at(0);
      if (n < 0 || ni < 2 + static_cast<size_t>(n) || nt != 1) return DDT_ERR_ARG;
      return ddt_type_indexed_block(n, I[1], I.data() + 2, T[0], out);
    }
    case DDT_COMBINER_HINDEXED_BLOCK: {
      const int64_t n = n_at(0);
      if (n < 0 || ni < 2 || na < static_cast<size_t>(n) || nt != 1) return DDT_ERR_ARG;
      return ddt_type_hindexed_block(n, I[1], A.data(), T[0], out);
    }
    case DDT_COMBINER_STRUCT: {
      const int64_t n = n_at(0);
      if (n < 0 || ni < 1 + static_cast<size_t>(n) || na < static_cast<size_t>(n) || nt < static_cast<size_t>(n))
        return DDT_ERR_ARG;
      return ddt_type_struct(n, I.data() + 1, A.data(), T.data(), out);
    }
    case DDT_COMBINER_SUBARRAY: {
      const int64_t nd = n_at(0);
      if (nd < 1 || !fits_int(nd) || ni != 2 + 3 * static_cast<size_t>(nd) || na != 0 || nt != 1) return DDT_ERR_ARG;
      if (!fits_int(I[ni - 1])) return DDT_ERR_ARG;
      return ddt_type_subarray(static_cast<int>(nd), I.data() + 1, I.data() + 1 + nd, I.data() + 1 + 2 * nd,
                               static_cast<int>(I[ni - 1]), T[0], out);
    }
    case DDT_COMBINER_DARRAY: {
      const int64_t nd = n_at(2);
      if (nd < 1 || !fits_int(nd) || ni != 4 + 4 * static_cast<size_t>(nd) || na != 0 || nt != 1) return DDT_ERR_ARG;
      // size, rank, distribs, dargs, psizes and order are C ints in ddt_type_darray.
      std::vector<int> small;
      for (size_t i = 3 + nd; i < ni; ++i) {
        if (!fits_int(I[i])) return DDT_ERR_ARG;
        small.push_back(static_cast<int>(I[i]));
      }
      if (!fits_int(I[0]) || !fits_int(I[1])) return DDT_ERR_ARG;
      return ddt_type_darray(static_cast<int>(I[0]), static_cast<int>(I[1]), static_cast<int>(nd), I.data() + 3,
                             small.data(), small.data() + nd, small.data() + 2 * nd, small[3 * nd], T[0], out);
    }
    case DDT_COMBINER_RESIZED:
      if (ni != 0 || na != 2 || nt != 1) return DDT_ERR_ARG;
      return ddt_type_resized(T[0], A[0], A[1], out);
    case DDT_COMBINER_DUP:
      if (ni != 0 || na != 0 || nt != 1) return DDT_ERR_ARG;
      return ddt_type_dup(T[0], out);
    default:
      return DDT_ERR_ARG;
  }
}

// ---- parsing ---------------------------------------------------------------------------------

// A parse failure: the code to return, the message, and the character (0-based) it refers to.
struct Failure {
  int code;
  size_t at;
  std::string message;
};

class Parser {
 public:
  // depth0: the nesting the text will sit at (the writer checks a fragment inside its parents).
  Parser(const char* text, size_t len, int depth0 = 0) : s_(text), n_(len), depth0_(depth0) {}

  // The whole text as one type, or a Failure thrown.
  Owned whole() {
    Owned t = type(depth0_);
    skip();
    if (i_ < n_) fail(i_, "unexpected text after the type: " + found());
    return t;
  }

 private:
  [[noreturn]] void fail(size_t at, std::string msg, int code = DDT_ERR_ARG) {
    throw Failure{code, at, std::move(msg)};
  }

  // What stands at the current position, for messages.
  std::string found() const {
    if (i_ >= n_) return "found the end of the text";
    const unsigned char c = static_cast<unsigned char>(s_[i_]);
    if (c < 0x20 || c > 0x7e) {
      char b[40];
      std::snprintf(b, sizeof b, "found byte 0x%02x", c);
      return b;
    }
    return std::string("found '") + static_cast<char>(c) + "'";
  }

  // Whitespace and comments (# to the end of the line).
  void skip() {
    while (i_ < n_) {
      const char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++i_;
      } else if (c == '#') {
        while (i_ < n_ && s_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
  }

  void expect(char c, const char* what) {
    skip();
    if (i_ >= n_ || s_[i_] != c) fail(i_, std::string("expected '") + c + "' " + what + ", " + found());
    ++i_;
  }
  bool peek(char c) {
    skip();
    return i_ < n_ && s_[i_] == c;
  }

  static bool word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  // A name: letters, digits and '_' (digits first too: `2int`), lowercased.
  std::string word(const char* what) {
    skip();
    const size_t b = i_;
    while (i_ < n_ && word_char(s_[i_])) ++i_;
    if (b == i_) fail(i_, std::string("expected ") + what + ", " + found());
    return lower(std::string(s_ + b, i_ - b).c_str());
  }

  // A decimal integer with an optional '-', range-checked while read.
  int64_t integer(const char* what) {
    skip();
    const size_t b = i_;
    bool neg = false;
    if (i_ < n_ && s_[i_] == '-') neg = true, ++i_;
    if (i_ >= n_ || s_[i_] < '0' || s_[i_] > '9') fail(i_, std::string("expected ") + what + " (an integer), " + found());
    // Accumulated as a negative number: its range includes INT64_MIN.
    int64_t v = 0;
    while (i_ < n_ && s_[i_] >= '0' && s_[i_] <= '9') {
      const int d = s_[i_] - '0';
      if (v < (INT64_MIN + d) / 10) fail(b, std::string(what) + " does not fit in 64 bits");
      v = v * 10 - d;
      ++i_;
    }
    if (i_ < n_ && word_char(s_[i_])) fail(i_, std::string("unexpected character in ") + what + ", " + found());
    if (!neg) {
      if (v == INT64_MIN) fail(b, std::string(what) + " does not fit in 64 bits");
      v = -v;
    }
    return v;
  }

  // '[' item (',' item)* ']' or '[]'; read_item reads one item.
  template <class F>
  void list(const char* what, F read_item) {
    expect('[', (std::string("to open the list of ") + what).c_str());
    if (peek(']')) {
      ++i_;
      return;
    }
    for (;;) {
      read_item();
      skip();
      if (i_ < n_ && s_[i_] == ',') {
        ++i_;
        continue;
      }
      expect(']', (std::string("or ',' in the list of ") + what).c_str());
      return;
    }
  }
  std::vector<int64_t> ints(const char* what) {
    std::vector<int64_t> v;
    list(what, [&] { v.push_back(integer(what)); });
    return v;
  }

  int order() {
    const size_t at = (skip(), i_);
    const std::string w = word("the order (c or fortran)");
    if (w == "c") return DDT_ORDER_C;
    if (w == "fortran") return DDT_ORDER_FORTRAN;
    fail(at, "unknown order '" + w + "' (c or fortran)");
  }

  void comma(const char* after) { expect(',', (std::string("after ") + after).c_str()); }

  static void append(std::vector<int64_t>& to, const std::vector<int64_t>& v) { to.insert(to.end(), v.begin(), v.end()); }

  void same_length(size_t at, const char* ctor, size_t a, size_t b, const char* what) {
    if (a != b) fail(at, std::string(ctor) + ": " + what + " differ in length");
  }

  Owned type(int depth) {
    skip();
    const size_t at = i_;
    if (depth >= kMaxNesting) fail(at, "types nested deeper than " + std::to_string(kMaxNesting));
    const std::string name = word("a type");
    int combiner = -1;
    for (const Ctor& c : kCtors)
      if (name == c.name) combiner = c.combiner;
    if (combiner < 0) {
      // A predefined type, also under its C names' prefixes (MPI_DOUBLE, DDT_DOUBLE).
      std::string base = name;
      if (base.rfind("mpi_", 0) == 0 || base.rfind("ddt_", 0) == 0) base = base.substr(4);
      for (int k = 0; k < kNumPredefined; ++k)
        if (base == predefined_name(k)) return Owned(kHandles[k]);
      fail(at, "unknown type or constructor '" + name + "'");
    }
    expect('(', (std::string("after ") + name).c_str());
    std::vector<int64_t> I, A;
    std::vector<Owned> kids;
    auto child = [&] { kids.push_back(type(depth + 1)); };
    switch (combiner) {
      case DDT_COMBINER_CONTIGUOUS:
        I.push_back(integer("the count")), comma("the count"), child();
        break;
      case DDT_COMBINER_VECTOR:
      case DDT_COMBINER_HVECTOR: {
        I.push_back(integer("the count")), comma("the count");
        I.push_back(integer("the block length")), comma("the block length");
        const int64_t stride = integer("the stride");
        (combiner == DDT_COMBINER_VECTOR ? I : A).push_back(stride);
        comma("the stride"), child();
        break;
      }
      case DDT_COMBINER_INDEXED:
      case DDT_COMBINER_HINDEXED: {
        const auto bls = ints("block lengths");
        comma("the block lengths");
        const auto ds = ints("displacements");
        same_length(at, name.c_str(), bls.size(), ds.size(), "block lengths and displacements");
        comma("the displacements"), child();
        I.push_back(static_cast<int64_t>(bls.size())), append(I, bls);
        append(combiner == DDT_COMBINER_INDEXED ? I : A, ds);
        break;
      }
      case DDT_COMBINER_INDEXED_BLOCK:
      case DDT_COMBINER_HINDEXED_BLOCK: {
        const int64_t bl = integer("the block length");
        comma("the block length");
        const auto ds = ints("displacements");
        comma("the displacements"), child();
        I.push_back(static_cast<int64_t>(ds.size())), I.push_back(bl);
        append(combiner == DDT_COMBINER_INDEXED_BLOCK ? I : A, ds);
        break;
      }
      case DDT_COMBINER_STRUCT: {
        const auto bls = ints("block lengths");
        comma("the block lengths");
        A = ints("displacements");
        comma("the displacements");
        list("types", child);
        same_length(at, "struct", bls.size(), A.size(), "block lengths and displacements");
        same_length(at, "struct", bls.size(), kids.size(), "block lengths and types");
        I.push_back(static_cast<int64_t>(bls.size())), append(I, bls);
        break;
      }
      case DDT_COMBINER_SUBARRAY: {
        const auto sizes = ints("sizes");
        comma("the sizes");
        const auto subs = ints("subsizes");
        comma("the subsizes");
        const auto starts = ints("starts");
        comma("the starts");
        const int ord = order();
        comma("the order"), child();
        same_length(at, "subarray", sizes.size(), subs.size(), "sizes and subsizes");
        same_length(at, "subarray", sizes.size(), starts.size(), "sizes and starts");
        I.push_back(static_cast<int64_t>(sizes.size())), append(I, sizes), append(I, subs), append(I, starts);
        I.push_back(ord);
        break;
      }
      case DDT_COMBINER_DARRAY: {
        const int64_t size = integer("the number of processes");
        comma("the number of processes");
        const int64_t rank = integer("the rank");
        comma("the rank");
        const auto gsizes = ints("global sizes");
        comma("the global sizes");
        std::vector<int64_t> dist, dargs;
        list("distributions", [&] {
          const size_t wat = (skip(), i_);
          const std::string w = word("a distribution (block, cyclic or none)");
          for (int k = 0; k < 3; ++k)
            if (w == kDistribNames[k]) return dist.push_back(k);
          fail(wat, "unknown distribution '" + w + "' (block, cyclic or none)");
        });
        comma("the distributions");
        list("distribution arguments", [&] {
          if (skip(), i_ < n_ && word_char(s_[i_]) && !(s_[i_] >= '0' && s_[i_] <= '9')) {
            const size_t wat = i_;
            if (word("dflt") != "dflt") fail(wat, "a distribution argument is an integer or dflt");
            dargs.push_back(DDT_DISTRIBUTE_DFLT_DARG);
          } else {
            dargs.push_back(integer("a distribution argument"));
          }
        });
        comma("the distribution arguments");
        const auto psizes = ints("process grid sizes");
        comma("the process grid sizes");
        const int ord = order();
        comma("the order"), child();
        same_length(at, "darray", gsizes.size(), dist.size(), "global sizes and distributions");
        same_length(at, "darray", gsizes.size(), dargs.size(), "global sizes and distribution arguments");
        same_length(at, "darray", gsizes.size(), psizes.size(), "global sizes and process grid sizes");
        I = {size, rank, static_cast<int64_t>(gsizes.size())};
        append(I, gsizes), append(I, dist), append(I, dargs), append(I, psizes);
        I.push_back(ord);
        break;
      }
      case DDT_COMBINER_RESIZED:
        child(), comma("the type");
        A.push_back(integer("the lower bound")), comma("the lower bound");
        A.push_back(integer("the extent"));
        break;
      case DDT_COMBINER_DUP:
        child();
        break;
    }
    expect(')', (std::string("to close ") + name).c_str());
    std::vector<ddt_type> T;
    for (const Owned& k : kids) T.push_back(k.t);
    ddt_type out = DDT_TYPE_NULL;
    if (int e = construct(combiner, I, A, T, &out)) {
      // The shape was checked above, so this is the constructor's verdict on the values.
      fail(at, name + ": " + ddt_error_string(e), e);
    }
    return Owned(out);
  }

  const char* s_;
  size_t n_;
  size_t i_ = 0;
  int depth0_;
};

// ---- writing ---------------------------------------------------------------------------------

void put(std::string& out, int64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "%" PRId64, v);
  out += b;
}
void put_list(std::string& out, const int64_t* v, int64_t n) {
  out += '[';
  for (int64_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    put(out, v[i]);
  }
  out += ']';
}

struct TooLong {};  // thrown when the text passes kMaxText

// A canonical layout node as constructor calls over bytes.
void node_text(const ddt::Layout& L, int64_t ni, std::string& out) {
  if (out.size() > kMaxText) throw TooLong{};
  const ddt::Node& n = L.nodes[ni];
  if (n.kind == ddt::Kind::Block) {
    if (n.size == 1) {
      out += "byte";
    } else {
      out += "contiguous(";
      put(out, n.size);
      out += ", byte)";
    }
    return;
  }
  // A run (a VEC, or the pair SEQ the builder makes of two copies of one node) is an hvector: a
  // struct of the two copies would be flattened into one table by the builder, not kept a pair.
  int64_t count, stride, child;
  if (ddt::as_run(n, [&](int64_t k) { return L.entries[n.child + k]; }, count, stride, child)) {
    out += "hvector(";
    put(out, count);
    out += ", 1, ";
    put(out, stride);
    out += ", ";
    node_text(L, child, out);
    out += ')';
    return;
  }
  const ddt::Entry* e = L.entries.data() + n.child;
  bool blocks = true;
  for (int64_t j = 0; j < n.count; ++j) blocks &= L.nodes[e[j].node].kind == ddt::Kind::Block;
  std::vector<int64_t> v(n.count);
  if (blocks) {  // a table of plain blocks: one hindexed of bytes
    out += "hindexed(";
    for (int64_t j = 0; j < n.count; ++j) v[j] = L.nodes[e[j].node].size;
    put_list(out, v.data(), n.count);
    out += ", ";
    for (int64_t j = 0; j < n.count; ++j) v[j] = e[j].disp;
    put_list(out, v.data(), n.count);
    out += ", byte)";
    return;
  }
  out += "struct(";
  std::fill(v.begin(), v.end(), 1);
  put_list(out, v.data(), n.count);
  out += ", ";
  for (int64_t j = 0; j < n.count; ++j) v[j] = e[j].disp;
  put_list(out, v.data(), n.count);
  out += ", [";
  for (int64_t j = 0; j < n.count; ++j) {
    if (j) out += ", ";
    node_text(L, e[j].node, out);
  }
  out += "])";
}

// A type without constructor history (deserialized): its layout, placed, in its bounds.
void layout_text(ddt_type t, std::string& out) {
  const ddt::Layout& L = *t->layout;
  out += "resized(";
  if (L.root < 0) {
    out += "contiguous(0, byte)";
  } else if (L.disp != 0) {
    out += "hindexed_block(1, [";
    put(out, L.disp);
    out += "], ";
    node_text(L, L.root, out);
    out += ')';
  } else {
    node_text(L, L.root, out);
  }
  out += ", ";
  put(out, t->lb);
  out += ", ";
  put(out, t->extent());
  out += ')';
}

struct WriteError {
  int code;
};

// Appends t's notation to out and returns the type that parsing it gives (see the file comment).
Owned write(ddt_type t, int depth, std::string& out) {
  if (depth >= kMaxNesting) throw WriteError{DDT_ERR_OVERFLOW};
  if (out.size() > kMaxText) throw TooLong{};
  if (t->predefined) {
    out += predefined_name(t->predefined_index);
    return Owned(t);
  }
  const size_t start = out.size();
  Owned mirror;
  if (t->combiner == DDT_COMBINER_LAYOUT) {
    layout_text(t, out);
    Parser p(out.data() + start, out.size() - start, depth);
    try {
      mirror = p.whole();
    } catch (const Failure& f) {  // a layout the builder accepted always rebuilds; kept as a guard
      throw WriteError{f.code};
    }
    return mirror;
  }
  const int c = t->combiner;
  const std::vector<int64_t>& I = t->ints;
  const std::vector<int64_t>& A = t->addrs;
  if (!ctor_name(c)) throw WriteError{DDT_ERR_TYPE};
  // Top level: a dup of a predefined type is written as its name, which parses to such a dup.
  if (depth == 0 && c == DDT_COMBINER_DUP && t->types[0]->predefined) return write(t->types[0], depth, out);
  std::vector<Owned> kids;
  auto child = [&](size_t k) { kids.push_back(write(t->types.at(k), depth + 1, out)); };
  out += ctor_name(c);
  out += '(';
  const int64_t n = I.empty() ? 0 : I[0];
  switch (c) {
    case DDT_COMBINER_CONTIGUOUS:
      put(out, I.at(0)), out += ", ", child(0);
      break;
    case DDT_COMBINER_VECTOR:
      put(out, I.at(0)), out += ", ", put(out, I.at(1)), out += ", ", put(out, I.at(2)), out += ", ", child(0);
      break;
    case DDT_COMBINER_HVECTOR:
      put(out, I.at(0)), out += ", ", put(out, I.at(1)), out += ", ", put(out, A.at(0)), out += ", ", child(0);
      break;
    case DDT_COMBINER_INDEXED:
      put_list(out, I.data() + 1, n), out += ", ", put_list(out, I.data() + 1 + n, n), out += ", ", child(0);
      break;
    case DDT_COMBINER_HINDEXED:
      put_list(out, I.data() + 1, n), out += ", ", put_list(out, A.data(), n), out += ", ", child(0);
      break;
    case DDT_COMBINER_INDEXED_BLOCK:
      put(out, I.at(1)), out += ", ", put_list(out, I.data() + 2, n), out += ", ", child(0);
      break;
    case DDT_COMBINER_HINDEXED_BLOCK:
      put(out, I.at(1)), out += ", ", put_list(out, A.data(), n), out += ", ", child(0);
      break;
    case DDT_COMBINER_STRUCT:
      put_list(out, I.data() + 1, n), out += ", ", put_list(out, A.data(), n), out += ", [";
      for (int64_t k = 0; k < n; ++k) {
        if (k) out += ", ";
        child(static_cast<size_t>(k));
      }
      out += ']';
      break;
    case DDT_COMBINER_SUBARRAY:
      for (int part = 0; part < 3; ++part) put_list(out, I.data() + 1 + part * n, n), out += ", ";
      out += I.back() == DDT_ORDER_C ? "c" : "fortran";
      out += ", ", child(0);
      break;
    case DDT_COMBINER_DARRAY: {
      const int64_t nd = I.at(2);
      put(out, I[0]), out += ", ", put(out, I[1]), out += ", ", put_list(out, I.data() + 3, nd), out += ", [";
      for (int64_t k = 0; k < nd; ++k) {
        const int64_t d = I[3 + nd + k];
        out += k ? ", " : "";
        out += d >= 0 && d < 3 ? kDistribNames[d] : "?";
      }
      out += "], [";
      for (int64_t k = 0; k < nd; ++k) {
        const int64_t a = I[3 + 2 * nd + k];
        out += k ? ", " : "";
        if (a == DDT_DISTRIBUTE_DFLT_DARG)
          out += "dflt";
        else
          put(out, a);
      }
      out += "], ", put_list(out, I.data() + 3 + 3 * nd, nd), out += ", ";
      out += I.back() == DDT_ORDER_C ? "c" : "fortran";
      out += ", ", child(0);
      break;
    }
    case DDT_COMBINER_RESIZED:
      child(0), out += ", ", put(out, A.at(0)), out += ", ", put(out, A.at(1));
      break;
    case DDT_COMBINER_DUP:
      child(0);
      break;
  }
  out += ')';
  std::vector<ddt_type> T;
  for (const Owned& k : kids) T.push_back(k.t);
  ddt_type m = DDT_TYPE_NULL;
  if (int e = construct(c, I, A, T, &m)) throw WriteError{e};
  mirror = Owned(m);
  if (mirror.t->lb != t->lb || mirror.t->extent() != t->extent()) {
    // Bounds set after construction (ddt_type_set_bounds): say them explicitly.
    out.insert(start, "resized(");
    out += ", ";
    put(out, t->lb);
    out += ", ";
    put(out, t->extent());
    out += ')';
    if (int e = ddt_type_resized(mirror.t, t->lb, t->extent(), &m)) throw WriteError{e};
    mirror = Owned(m);
  }
  return mirror;
}

}  // namespace

extern "C" {

int ddt_type_parse(const char* text, ddt_type* newtype, char* errbuf, int64_t errsize) {
  if (!text || !newtype || errsize < 0 || (errsize > 0 && !errbuf)) return DDT_ERR_ARG;
  *newtype = DDT_TYPE_NULL;
  auto report = [&](const Failure& f) {
    if (errsize > 0) {
      // 1-based character, line and column: what an editor shows.
      size_t line = 1, col = 1;
      for (size_t k = 0; k < f.at && text[k]; ++k) {
        if (text[k] == '\n')
          ++line, col = 1;
        else
          ++col;
      }
      std::snprintf(errbuf, static_cast<size_t>(errsize), "character %zu (line %zu, column %zu): %s", f.at + 1, line,
                    col, f.message.c_str());
    }
    return f.code;
  };
  const int code = ddt::guarded([&] {
    Parser p(text, std::strlen(text));
    try {
      Owned t = p.whole();
      if (t.t->predefined) {  // a new handle the caller may free, like every other result
        ddt_type d;
        if (int e = ddt_type_dup(t.t, &d)) return e;
        *newtype = d;
        return static_cast<int>(DDT_SUCCESS);
      }
      *newtype = t.release_to_caller();
      return static_cast<int>(DDT_SUCCESS);
    } catch (const Failure& f) {
      return report(f);
    }
  });
  if (code == DDT_ERR_NO_MEM && errsize > 0) std::snprintf(errbuf, static_cast<size_t>(errsize), "out of memory");
  return code;
}

int ddt_type_notation(ddt_type type, char* buf, int64_t bufsize, int64_t* needed) {
  if (!needed) return DDT_ERR_ARG;
  *needed = 0;
  if (int e = ddt::check_type(type)) return e;
  if (bufsize < 0 || (bufsize > 0 && !buf)) return DDT_ERR_ARG;
  return ddt::guarded([&] {
    std::string s;
    try {
      write(type, 0, s);
    } catch (const WriteError& w) {
      return w.code;
    } catch (const TooLong&) {
      return static_cast<int>(DDT_ERR_OVERFLOW);
    }
    if (s.size() > kMaxText) return static_cast<int>(DDT_ERR_OVERFLOW);
    *needed = static_cast<int64_t>(s.size()) + 1;
    if (bufsize < *needed) return static_cast<int>(DDT_ERR_TRUNCATE);
    std::memcpy(buf, s.c_str(), s.size() + 1);
    return static_cast<int>(DDT_SUCCESS);
  });
}

}  // extern "C"
