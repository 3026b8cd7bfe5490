// The type notation (ddt_type_parse, ddt_type_notation; docs/notation.md): every constructor and
// predefined name against the same type built through the C API, the exact text written back,
// errors with their positions, the limits, hostile text, and the round trip over random types.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ddtbench.hpp"
#include "ddtkit.h"
#include "gen.hpp"

namespace {

// Frees a handle unless it is predefined.
void drop(ddt_type& t) {
  int64_t ni, na, nt;
  int comb;
  if (t && ddt_type_envelope(t, &ni, &na, &nt, &comb) == DDT_SUCCESS && comb != DDT_COMBINER_NAMED) ddt_type_free(&t);
  t = DDT_TYPE_NULL;
}

struct Shape {
  int64_t size = 0, lb = 0, extent = 0, tlb = 0, text = 0;
  std::string hash;
  bool operator==(const Shape& o) const {
    return size == o.size && lb == o.lb && extent == o.extent && tlb == o.tlb && text == o.text && hash == o.hash;
  }
};
Shape shape(ddt_type t) {
  Shape s;
  EXPECT_EQ(ddt_type_size(t, &s.size), DDT_SUCCESS);
  EXPECT_EQ(ddt_type_extent(t, &s.lb, &s.extent), DDT_SUCCESS);
  EXPECT_EQ(ddt_type_true_extent(t, &s.tlb, &s.text), DDT_SUCCESS);
  uint8_t h[16];
  EXPECT_EQ(ddt_type_hash(t, h), DDT_SUCCESS);
  s.hash.assign(reinterpret_cast<char*>(h), 16);
  return s;
}
std::ostream& operator<<(std::ostream& o, const Shape& s) {
  return o << "size " << s.size << " lb " << s.lb << " extent " << s.extent << " tlb " << s.tlb << " text " << s.text;
}

std::string notation(ddt_type t) {
  int64_t need = -1;
  int e = ddt_type_notation(t, nullptr, 0, &need);
  EXPECT_TRUE(e == DDT_ERR_TRUNCATE || e == DDT_SUCCESS) << ddt_error_string(e);
  std::string s(need, '\0');
  EXPECT_EQ(ddt_type_notation(t, &s[0], need, &need), DDT_SUCCESS);
  s.resize(need - 1);
  return s;
}

std::string describe_type(ddt_type t) {
  std::string s(1 << 16, '\0');
  ddt_type_describe(t, &s[0], s.size());
  return s.c_str();
}

// Parses text; fails the test with the message if it does not parse.
ddt_type parse(const std::string& text) {
  ddt_type t = DDT_TYPE_NULL;
  char err[256] = "";
  const int e = ddt_type_parse(text.c_str(), &t, err, sizeof err);
  EXPECT_EQ(e, DDT_SUCCESS) << text << ": " << err;
  return t;
}

// Parses text, expects the same type as built, and expects `written` back from the writer.
void expect_same(const std::string& text, ddt_type built, const std::string& written) {
  ddt_type p = parse(text);
  ASSERT_NE(p, DDT_TYPE_NULL);
  EXPECT_EQ(shape(p), shape(built)) << text;
  EXPECT_EQ(notation(p), written);
  EXPECT_EQ(notation(built), written);
  drop(p);
}

// Expects text to fail with code, and the message to start with "character <at>".
void expect_error(const std::string& text, int code, size_t at, const char* says = nullptr) {
  ddt_type t = DDT_INT;  // must be reset to DDT_TYPE_NULL
  char err[512] = "";
  EXPECT_EQ(ddt_type_parse(text.c_str(), &t, err, sizeof err), code) << text << ": " << err;
  EXPECT_EQ(t, DDT_TYPE_NULL) << text;
  const std::string want = "character " + std::to_string(at) + " ";
  EXPECT_EQ(std::string(err).rfind(want, 0), 0u) << text << ": " << err;
  if (says) {
    EXPECT_NE(std::string(err).find(says), std::string::npos) << text << ": " << err;
  }
}

TEST(Notation, EveryPredefinedName) {
#define NAME_AND_HANDLE(N) {#N, DDT_##N},
  const struct {
    const char* upper;
    ddt_type t;
  } all[] = {DDT_PREDEFINED_LIST(NAME_AND_HANDLE)};
#undef NAME_AND_HANDLE
  for (const auto& p : all) {
    std::string name = p.upper;
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(notation(p.t), name);
    ddt_type t = parse(name);
    ASSERT_NE(t, DDT_TYPE_NULL) << name;
    EXPECT_NE(t, p.t) << "a bare name gives a new handle the caller frees";
    EXPECT_EQ(shape(t), shape(p.t)) << name;
    EXPECT_EQ(notation(t), name) << "a top-level dup of a predefined type is written as its name";
    EXPECT_EQ(ddt_type_free(&t), DDT_SUCCESS);
    // The C spellings are accepted too.
    t = parse("MPI_" + std::string(p.upper));
    EXPECT_EQ(notation(t), name);
    drop(t);
  }
}

TEST(Notation, EveryConstructor) {
  ddt_type a, b, c, kids[2];
  ddt_type_contiguous(3, DDT_DOUBLE, &a);
  expect_same("contiguous(3, double)", a, "contiguous(3, double)");
  drop(a);

  ddt_type_vector(4, 1, 5, DDT_DOUBLE, &a);
  expect_same("vector(4,1,5,double)", a, "vector(4, 1, 5, double)");
  drop(a);

  ddt_type_hvector(3, 2, -24, DDT_INT, &a);
  expect_same("hvector(3, 2, -24, int)", a, "hvector(3, 2, -24, int)");
  drop(a);

  const int64_t bls[] = {2, 0, 3}, ds[] = {5, -1, 9}, bds[] = {-40, 8, 100};
  ddt_type_indexed(3, bls, ds, DDT_FLOAT, &a);
  expect_same("indexed([2, 0, 3], [5, -1, 9], float)", a, "indexed([2, 0, 3], [5, -1, 9], float)");
  drop(a);
  ddt_type_hindexed(3, bls, bds, DDT_SHORT, &a);
  expect_same("hindexed([2,0,3],[-40,8,100],short)", a, "hindexed([2, 0, 3], [-40, 8, 100], short)");
  drop(a);
  ddt_type_indexed(0, nullptr, nullptr, DDT_INT, &a);
  expect_same("indexed([], [], int)", a, "indexed([], [], int)");
  drop(a);

  ddt_type_indexed_block(3, 2, ds, DDT_INT64_T, &a);
  expect_same("indexed_block(2, [5, -1, 9], int64_t)", a, "indexed_block(2, [5, -1, 9], int64_t)");
  drop(a);
  ddt_type_hindexed_block(3, 2, bds, DDT_UINT16_T, &a);
  expect_same("hindexed_block(2, [-40, 8, 100], uint16_t)", a, "hindexed_block(2, [-40, 8, 100], uint16_t)");
  drop(a);

  ddt_type_vector(2, 1, 4, DDT_FLOAT, &b);
  kids[0] = DDT_INT, kids[1] = b;
  const int64_t sbl[] = {1, 3}, sd[] = {0, 8};
  ddt_type_struct(2, sbl, sd, kids, &a);
  expect_same("struct([1, 3], [0, 8], [int, vector(2, 1, 4, float)])", a,
              "struct([1, 3], [0, 8], [int, vector(2, 1, 4, float)])");
  drop(a);

  const int64_t sz[] = {10, 10}, sub[] = {2, 3}, st[] = {1, 1};
  ddt_type_subarray(2, sz, sub, st, DDT_ORDER_C, DDT_DOUBLE, &a);
  expect_same("subarray([10, 10], [2, 3], [1, 1], c, double)", a, "subarray([10, 10], [2, 3], [1, 1], c, double)");
  drop(a);
  ddt_type_subarray(2, sz, sub, st, DDT_ORDER_FORTRAN, DDT_DOUBLE, &a);
  expect_same("subarray([10,10],[2,3],[1,1],fortran,double)", a,
              "subarray([10, 10], [2, 3], [1, 1], fortran, double)");
  drop(a);

  const int64_t gs[] = {8, 9, 10};
  const int dist[] = {DDT_DISTRIBUTE_BLOCK, DDT_DISTRIBUTE_CYCLIC, DDT_DISTRIBUTE_NONE};
  const int dargs[] = {DDT_DISTRIBUTE_DFLT_DARG, 2, DDT_DISTRIBUTE_DFLT_DARG}, ps[] = {2, 3, 1};
  ddt_type_darray(6, 4, 3, gs, dist, dargs, ps, DDT_ORDER_C, DDT_INT, &a);
  expect_same("darray(6, 4, [8, 9, 10], [block, cyclic, none], [dflt, 2, dflt], [2, 3, 1], c, int)", a,
              "darray(6, 4, [8, 9, 10], [block, cyclic, none], [dflt, 2, dflt], [2, 3, 1], c, int)");
  drop(a);
  ddt_type_darray(6, 1, 3, gs, dist, dargs, ps, DDT_ORDER_FORTRAN, DDT_INT, &a);
  expect_same("darray(6, 1, [8, 9, 10], [block, cyclic, none], [-49767, 2, dflt], [2, 3, 1], fortran, int)", a,
              "darray(6, 1, [8, 9, 10], [block, cyclic, none], [dflt, 2, dflt], [2, 3, 1], fortran, int)");
  drop(a);

  ddt_type_vector(2, 1, 3, DDT_INT, &c);
  ddt_type_resized(c, 0, 24, &a);
  expect_same("resized(vector(2,1,3,int), 0, 24)", a, "resized(vector(2, 1, 3, int), 0, 24)");
  drop(a);
  ddt_type_resized(c, -8, -4, &a);
  expect_same("resized(vector(2,1,3,int), -8, -4)", a, "resized(vector(2, 1, 3, int), -8, -4)");
  drop(a);

  ddt_type_dup(c, &a);
  expect_same("dup(vector(2, 1, 3, int))", a, "dup(vector(2, 1, 3, int))");
  drop(a);
  drop(c);
  drop(b);
}

TEST(Notation, NestingWhitespaceAndComments) {
  const std::string text =
      "# a 3-D face of doubles, resized to a row\n"
      "resized(\n"
      "  subarray( [ 4 , 5 , 6 ] , [4,1,6], [0, 2, 0], C,\n"
      "            struct([1, 1], [0, 8], [double, dup(hvector(2, 1, -4, float))]) ),  # trailing comment\n"
      "  -16, 64)\n";
  ddt_type t = parse(text);
  ASSERT_NE(t, DDT_TYPE_NULL);
  const std::string w = notation(t);
  EXPECT_EQ(w,
            "resized(subarray([4, 5, 6], [4, 1, 6], [0, 2, 0], c, struct([1, 1], [0, 8], [double, dup(hvector(2, 1, -4, "
            "float))])), -16, 64)");
  ddt_type again = parse(w);
  EXPECT_EQ(shape(again), shape(t));
  drop(again);
  drop(t);
}

TEST(Notation, ErrorsWithPositions) {
  expect_error("", DDT_ERR_ARG, 1, "expected a type");
  expect_error("   ", DDT_ERR_ARG, 4, "end of the text");
  expect_error("doubel", DDT_ERR_ARG, 1, "unknown type or constructor 'doubel'");
  expect_error("vector(4, 1, 5 double)", DDT_ERR_ARG, 16, "expected ','");
  expect_error("vector(4, 1, 5, double", DDT_ERR_ARG, 23, "to close vector");
  expect_error("vector(4, 1, 5, double))", DDT_ERR_ARG, 24, "unexpected text after the type");
  expect_error("vector(4, x, 5, double)", DDT_ERR_ARG, 11, "the block length");
  expect_error("vector(4, 1, 5, vector(2, 1, 2, flot))", DDT_ERR_ARG, 33, "'flot'");
  expect_error("vector(-4, 1, 5, double)", DDT_ERR_COUNT, 1, "vector: negative count");
  expect_error("contiguous(2, vector(1, -1, 5, double))", DDT_ERR_COUNT, 15);
  expect_error("indexed([1, 2], [0], int)", DDT_ERR_ARG, 1, "differ in length");
  expect_error("struct([1, 2], [0, 8], [int])", DDT_ERR_ARG, 1, "block lengths and types differ");
  expect_error("indexed([1, 2, ], [0, 1], int)", DDT_ERR_ARG, 16);
  expect_error("subarray([10], [2], [9], c, int)", DDT_ERR_DIMS, 1);
  expect_error("subarray([10], [2], [0], z, int)", DDT_ERR_ARG, 26, "unknown order 'z'");
  expect_error("darray(2, 0, [8], [blok], [dflt], [2], c, int)", DDT_ERR_ARG, 20, "unknown distribution");
  expect_error("darray(2, 0, [8], [block], [dflx], [2], c, int)", DDT_ERR_ARG, 29);
  expect_error("darray(4294967297, 0, [8], [block], [dflt], [2], c, int)", DDT_ERR_ARG, 1);
  expect_error("contiguous(12abc, int)", DDT_ERR_ARG, 14, "unexpected character");
  expect_error("contiguous(3, int)\n  @", DDT_ERR_ARG, 22, "line 2, column 3");
  expect_error(std::string("contiguous(3, \x01int)"), DDT_ERR_ARG, 15, "byte 0x01");
  // Errors are cut to the buffer, NUL-terminated; a zero-size buffer is not written.
  ddt_type t;
  char small[12];
  std::memset(small, 'x', sizeof small);
  EXPECT_EQ(ddt_type_parse("nonsense(", &t, small, sizeof small), DDT_ERR_ARG);
  EXPECT_EQ(std::strlen(small), sizeof small - 1);
  char untouched = 'x';
  EXPECT_EQ(ddt_type_parse("nonsense(", &t, &untouched, 0), DDT_ERR_ARG);
  EXPECT_EQ(untouched, 'x');
  EXPECT_EQ(ddt_type_parse("int", &t, nullptr, 0), DDT_SUCCESS);
  drop(t);
  // Bad arguments.
  EXPECT_EQ(ddt_type_parse(nullptr, &t, nullptr, 0), DDT_ERR_ARG);
  EXPECT_EQ(ddt_type_parse("int", nullptr, nullptr, 0), DDT_ERR_ARG);
  EXPECT_EQ(ddt_type_parse("int", &t, nullptr, 5), DDT_ERR_ARG);
  EXPECT_EQ(ddt_type_parse("int", &t, small, -1), DDT_ERR_ARG);
}

TEST(Notation, IntegerLimits) {
  ddt_type t = parse("resized(byte, -9223372036854775808, 1)");
  EXPECT_EQ(notation(t), "resized(byte, -9223372036854775808, 1)");
  drop(t);
  t = parse("resized(byte, 9223372036854775806, 1)");
  EXPECT_EQ(notation(t), "resized(byte, 9223372036854775806, 1)");
  drop(t);
  expect_error("contiguous(9223372036854775808, byte)", DDT_ERR_ARG, 12, "does not fit in 64 bits");
  expect_error("contiguous(-9223372036854775809, byte)", DDT_ERR_ARG, 12, "does not fit in 64 bits");
  expect_error("contiguous(99999999999999999999999999, byte)", DDT_ERR_ARG, 12);
  // Huge counts: the constructors' overflow checks answer, nothing is expanded.
  expect_error("contiguous(9223372036854775807, double)", DDT_ERR_OVERFLOW, 1);
  expect_error("vector(2, 1, 4611686018427387904, double)", DDT_ERR_OVERFLOW, 1);
  expect_error("resized(byte, 9223372036854775807, 1)", DDT_ERR_OVERFLOW, 1);
  t = parse("contiguous(1000000000000000, contiguous(1000, byte))");  // 10^18 bytes, described in O(1)
  int64_t size;
  ddt_type_size(t, &size);
  EXPECT_EQ(size, int64_t(1000000000000000000));
  drop(t);
}

TEST(Notation, DepthLimit) {
  auto nest = [](int levels) {
    std::string s;
    for (int i = 0; i < levels; ++i) s += "dup(";
    s += "int";
    for (int i = 0; i < levels; ++i) s += ')';
    return s;
  };
  ddt_type t = parse(nest(299));
  ASSERT_NE(t, DDT_TYPE_NULL);
  EXPECT_EQ(notation(t), nest(299));
  drop(t);
  expect_error(nest(300), DDT_ERR_ARG, 1201, "nested deeper than 300");
  // Far deeper text is refused at the limit, without recursing through it.
  expect_error(nest(100000), DDT_ERR_ARG, 1201, "nested deeper");
  std::string brackets = "struct([1], [0], " + std::string(100000, '[');
  expect_error(brackets, DDT_ERR_ARG, 19);
}

TEST(Notation, HostileText) {
  const char* good[] = {
      "struct([1, 3], [0, 8], [int, vector(2, 1, 4, float)])",
      "darray(6, 4, [8, 9, 10], [block, cyclic, none], [dflt, 2, dflt], [2, 3, 1], c, int)",
      "resized(subarray([10, 10], [2, 3], [1, 1], fortran, indexed_block(2, [0, -3], 2int)), -8, 816)",
  };
  // Every prefix of valid text fails cleanly (ASan checks that nothing leaks or is read past).
  for (const char* g : good) {
    const std::string s = g;
    for (size_t k = 0; k < s.size(); ++k) {
      ddt_type t = DDT_INT;
      char err[256];
      EXPECT_NE(ddt_type_parse(s.substr(0, k).c_str(), &t, err, sizeof err), DDT_SUCCESS) << s.substr(0, k);
      EXPECT_EQ(t, DDT_TYPE_NULL);
    }
  }
  // Garbage: random text over the notation's own alphabet, and mutations of valid text. Anything
  // accepted must be a usable type whose notation reads back to the same type.
  std::mt19937_64 rng(13);
  const std::string alphabet = "()[],- 0123456789abcdefghijklmnopqrstuvwxyz_#\n";
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    if (i % 2) {  // one character changed: a digit into a digit (often still valid), else anything
      s = good[i % 3];
      char& c = s[rng() % s.size()];
      c = std::isdigit(static_cast<unsigned char>(c)) ? static_cast<char>('0' + rng() % 10) : alphabet[rng() % alphabet.size()];
    } else {
      const size_t n = rng() % 40;
      for (size_t k = 0; k < n; ++k) s += alphabet[rng() % alphabet.size()];
    }
    ddt_type t = DDT_TYPE_NULL;
    char err[128];
    if (ddt_type_parse(s.c_str(), &t, err, sizeof err) != DDT_SUCCESS) {
      EXPECT_EQ(t, DDT_TYPE_NULL);
      EXPECT_EQ(std::string(err).rfind("character ", 0), 0u) << s << ": " << err;
      continue;
    }
    ++accepted;
    ddt_type again = parse(notation(t));
    EXPECT_EQ(shape(again), shape(t)) << s;
    drop(again);
    drop(t);
  }
  EXPECT_GT(accepted, 100);  // the mutations keep some text valid: the accept path is exercised
}

TEST(Notation, WriterArguments) {
  ddt_type t;
  ddt_type_vector(4, 1, 5, DDT_DOUBLE, &t);
  int64_t need = -1;
  EXPECT_EQ(ddt_type_notation(t, nullptr, 0, nullptr), DDT_ERR_ARG);
  EXPECT_EQ(ddt_type_notation(nullptr, nullptr, 0, &need), DDT_ERR_TYPE);
  EXPECT_EQ(need, 0);
  EXPECT_EQ(ddt_type_notation(t, nullptr, 10, &need), DDT_ERR_ARG);
  EXPECT_EQ(ddt_type_notation(t, nullptr, 0, &need), DDT_ERR_TRUNCATE);
  EXPECT_EQ(need, int64_t(std::strlen("vector(4, 1, 5, double)") + 1));
  // Truncation writes nothing at all.
  char buf[64];
  std::memset(buf, 'x', sizeof buf);
  EXPECT_EQ(ddt_type_notation(t, buf, need - 1, &need), DDT_ERR_TRUNCATE);
  EXPECT_EQ(buf[0], 'x');
  EXPECT_EQ(ddt_type_notation(t, buf, need, &need), DDT_SUCCESS);
  EXPECT_STREQ(buf, "vector(4, 1, 5, double)");
  drop(t);
}

// Bounds imposed after construction (the MPI interposer's ddt_type_set_bounds) come out as a
// resized wrapper, at every level where they differ, so the text carries the MPI's spacing.
TEST(Notation, BoundsSetAfterConstruction) {
  ddt_type v, s;
  ddt_type_vector(2, 1, 3, DDT_INT, &v);
  ASSERT_EQ(ddt_type_set_bounds(v, -4, 40), DDT_SUCCESS);
  const int64_t bl[] = {1, 1}, d[] = {0, 100};
  ddt_type kids[] = {v, DDT_CHAR};
  ddt_type_struct(2, bl, d, kids, &s);
  ASSERT_EQ(ddt_type_set_bounds(s, 0, 128), DDT_SUCCESS);
  const std::string w = notation(s);
  EXPECT_EQ(w, "resized(struct([1, 1], [0, 100], [resized(vector(2, 1, 3, int), -4, 40), char]), 0, 128)");
  ddt_type p = parse(w);
  EXPECT_EQ(shape(p), shape(s));
  drop(p);
  drop(s);
  drop(v);
}

// parse(notation(t)) has t's hash, size and bounds for the engine's random types, and the text is
// a fixed point (written again, it is the same text). Also through serialize: a deserialized
// type has no constructor history and is written as its layout.
TEST(Notation, RoundTripRandomTypes) {
  std::mt19937_64 rng(20261123);
  GenOptions opt;
  int written_layouts = 0;
  for (int i = 0; i < 3000; ++i) {
    RefType ref;
    TPtr tn = random_type(rng, opt, ref);
    int err;
    ddt_type t = build_ddt(*tn, &err);
    ASSERT_NE(t, DDT_TYPE_NULL) << describe(*tn);
    const std::string w = notation(t);
    ddt_type p = parse(w);
    ASSERT_NE(p, DDT_TYPE_NULL) << w;
    EXPECT_EQ(shape(p), shape(t)) << w;
    EXPECT_EQ(notation(p), w);

    int64_t need = 0;
    ddt_type_serialize(t, nullptr, 0, &need);
    std::vector<char> bytes(need);
    ASSERT_EQ(ddt_type_serialize(t, bytes.data(), need, &need), DDT_SUCCESS);
    ddt_type d;
    ASSERT_EQ(ddt_type_deserialize(bytes.data(), need, &d), DDT_SUCCESS);
    const std::string lw = notation(d);
    ddt_type lp = parse(lw);
    ASSERT_NE(lp, DDT_TYPE_NULL) << lw;
    const Shape a = shape(lp), b = shape(t);
    EXPECT_EQ(a.hash, b.hash) << lw << "\n" << describe_type(lp) << describe_type(t);
    EXPECT_EQ(a.size, b.size);
    EXPECT_EQ(a.lb, b.lb);
    EXPECT_EQ(a.extent, b.extent);
    EXPECT_EQ(a.tlb, b.tlb);
    EXPECT_EQ(a.text, b.text);
    written_layouts += lw.rfind("resized(", 0) == 0;
    drop(lp);
    drop(d);
    drop(p);
    drop(t);
  }
  EXPECT_EQ(written_layouts, 3000);
}

// The DDTBench kernels' types (kernels/ddtbench.hpp), as applications build them: written and
// parsed back, each has its hash, size and bounds (absolute displacements included).
TEST(Notation, RoundTripDDTBenchKernels) {
  const auto kernels = ddtbench_kernels(false);
  ASSERT_FALSE(kernels.empty());
  for (const auto& k : kernels) {
    const std::string w = notation(k->type);
    ddt_type p = parse(w);
    ASSERT_NE(p, DDT_TYPE_NULL) << k->name << " " << k->params;
    EXPECT_EQ(shape(p), shape(k->type)) << k->name << " " << k->params << ": " << w.substr(0, 200);
    EXPECT_EQ(notation(p), w) << k->name << " " << k->params;
    drop(p);
  }
}

}  // namespace
