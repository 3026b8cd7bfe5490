// `ddtkit inspect`: shows a type. The type comes as notation text (docs/notation.md: an
// argument, -f FILE, or - for stdin), a DDTBench kernel by name (kernels/ddtbench.hpp), or a
// serialized layout file (ddt_type_serialize's bytes); the command prints its size, bounds,
// canonical layout, hash, block count, notation and first pieces, and with --png draws the
// typemap, because a person sees a layout faster than they read it.
//
// The picture: the bytes that count elements span, in rows of cells, one cell being one byte or,
// for large spans, many. A touched cell is coloured by the earliest packed-stream position among
// its bytes (a ramp from dark blue, the first byte packed, through green to yellow, the last),
// lighter in proportion to the bytes of the cell that no piece touches; untouched cells are grey.
// Element starts (lb + i * extent) are marked by a dark tick above their cell.
//
// Every input error is a message and exit status 2, never a crash: the library validates every
// type and every serialized byte, and the options are checked here before use.
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "cuda/units.hpp"
#include "ddtbench.hpp"
#include "ddtkit.h"
#include "png.hpp"

namespace {

// The executors' plans for count elements of t: the CPU's shape (src/plan/plan.hpp) and what the
// GPU layer would run (src/cuda/units.hpp: the locator, the widest unit buffers aligned to 16
// bytes allow, and whether the DMA engine could move it as rows), whether or not a GPU is here.
void print_plans(ddt_type t, int64_t count) {
  const ddt::Plan& p = ddt::plan_of(t);
  std::string cpu;
  switch (p.shape) {
    case ddt::Shape::Empty: cpu = "empty"; break;
    case ddt::Shape::Nest:
      cpu = p.dims == 0 ? "one block of " + std::to_string(p.width) + " B"
                        : "nest of " + std::to_string(p.dims) + (p.dims == 1 ? " dimension" : " dimensions") + " (blocks of " +
                              std::to_string(p.width) + " B)";
      break;
    case ddt::Shape::Rows: cpu = "rows of a short table of " + std::to_string(p.rows) + " blocks"; break;
    case ddt::Shape::Parts: cpu = "a short table of " + std::to_string(p.parts.size()) + " nests"; break;
    case ddt::Shape::List:
      cpu = p.uniform_list() ? "index list of " + std::to_string(p.segments[0].count) + " blocks of " + std::to_string(p.width) + " B"
                             : "table of " + std::to_string(p.segments.size()) + " segments";
      break;
    case ddt::Shape::Walk: cpu = "the general walk"; break;
  }
  std::printf("plan (CPU):      %s\n", cpu.c_str());
  if (p.shape == ddt::Shape::Empty || count <= 0) return;
  ddt::gpu::Side side;
  ddt::gpu::Bits bits = ddt::gpu::side_of(t, count, &side);
  if (side.kind != ddt::gpu::Loc::Nest) bits |= ddt::gpu::layout_bits(*t->layout);
  std::vector<int32_t> narrow;
  std::vector<int64_t> wide;
  const bool flat = side.kind == ddt::gpu::Loc::Tree && ddt::gpu::flatten(t, p, narrow, wide) > 0;
  const char* loc = side.kind == ddt::gpu::Loc::Nest ? "nest locator (divisions)"
                    : side.kind == ddt::gpu::Loc::List ? "list locator (a division and a load)"
                    : flat ? "flat list of its blocks (a division and a load)"
                           : "tree locator (divisions and binary searches)";
  const int64_t g = ddt::gpu::grain_of(bits.stream), tg = std::min(g, ddt::gpu::grain_of(bits.typed));
  std::printf("plan (GPU):      %s, units of %" PRId64 " B in %" PRId64 "-byte words with 16-byte aligned buffers", loc, g, tg);
  ddt::gpu::Box b;
  if (ddt::gpu::box_of(p, count, 0, count * p.size, &b))
    std::printf("; DMA rows: %" PRId64 " x %" PRId64 " B at pitch %" PRId64 " B", b.height, b.width, b.pitch);
  std::printf("\n");
}

constexpr int64_t kMaxFile = int64_t(1) << 28;     // bytes read from a notation or layout file
constexpr int64_t kMaxCells = int64_t(1) << 16;    // cells of a picture (the rest is downsampled)
constexpr int64_t kMaxPicturePieces = 1 << 24;     // pieces drawn; a note says when there are more
constexpr int64_t kMaxCellVisits = int64_t(1) << 28; // (piece, cell) pairs drawn: bounds the time
                                                     // that many overlapping large pieces take

struct Options {
  std::string text, file, kernel, params, layout, write_layout, png;
  bool have_text = false;
  int64_t count = 0;  // 0: 1, or the kernel's own count
  int64_t pieces = 8, width = 0, cell = 0, px = 0;
};

// Exit statuses.
constexpr int kOk = 0, kFailed = 1, kBadInput = 2;

int bad(const std::string& msg) {
  std::fprintf(stderr, "ddtkit inspect: %s\n", msg.c_str());
  return kBadInput;
}

// A non-negative integer option value; false if it is not one.
bool number(const char* s, int64_t lo, int64_t& out) {
  if (!s || !*s) return false;
  char* end;
  errno = 0;
  const long long v = std::strtoll(s, &end, 10);
  if (*end || errno || v < lo) return false;
  out = v;
  return true;
}

bool read_all(const std::string& path, std::string& out, std::string& error) {
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    out.append(buf, n);
    if (static_cast<int64_t>(out.size()) > kMaxFile) {
      error = path + ": larger than 256 MiB";
      break;
    }
  }
  const bool failed = std::ferror(f) != 0;
  if (f != stdin) std::fclose(f);
  if (failed) error = path + ": read error";
  return error.empty();
}

struct TypeHolder {
  ddt_type t = DDT_TYPE_NULL;
  ~TypeHolder() {
    if (t) ddt_type_free(&t);
  }
};

// The notation's error, with a caret under the place when the text is one short line.
int parse_error(const std::string& text, const char* err, int code) {
  (void)code;  // the message names the constructor's error where there is one
  std::fprintf(stderr, "ddtkit inspect: not a type: %s\n", err);
  size_t at = 0;
  if (std::sscanf(err, "character %zu", &at) == 1 && at >= 1 && text.find('\n') == std::string::npos &&
      text.size() <= 160) {
    std::fprintf(stderr, "  %s\n  %*s^\n", text.c_str(), static_cast<int>(at - 1), "");
  }
  return kBadInput;
}

std::string hex(const uint8_t* p, int n) {
  std::string s;
  char b[3];
  for (int i = 0; i < n; ++i) std::snprintf(b, sizeof b, "%02x", p[i]), s += b;
  return s;
}

// ---- the picture ---------------------------------------------------------------------------

struct Rgb {
  uint8_t r, g, b;
};

// Stream position as a colour: a ramp through dark blue, teal, green and yellow (in the manner of
// the perceptual maps plotting libraries use), t in [0, 1].
Rgb ramp(double t) {
  static const Rgb stops[] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  const int last = sizeof stops / sizeof stops[0] - 1;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  const double x = t * last;
  const int i = x >= last ? last - 1 : static_cast<int>(x);
  const double f = x - i;
  auto mix = [f](uint8_t a, uint8_t b) { return static_cast<uint8_t>(a + (b - a) * f + 0.5); };
  return {mix(stops[i].r, stops[i + 1].r), mix(stops[i].g, stops[i + 1].g), mix(stops[i].b, stops[i + 1].b)};
}

struct Cell {
  int64_t first = -1;  // earliest stream position among its bytes; -1: untouched
  int64_t touched = 0; // bytes of the cell covered by pieces (overlapping pieces counted once each)
};

// Draws (count, type) into path. Returns the exit status.
int draw(ddt_type t, int64_t count, const Options& o) {
  int64_t size, lb, extent, tlb, text;
  ddt_type_size(t, &size);
  ddt_type_extent(t, &lb, &extent);
  ddt_type_true_extent(t, &tlb, &text);
  // The span: bounds and data of the first and the last element (extent may be negative).
  __int128 lo = lb, hi = static_cast<__int128>(lb) + extent;
  const __int128 last = static_cast<__int128>(count - 1) * extent;
  for (__int128 shift : {static_cast<__int128>(0), last}) {
    const __int128 bl = lb + shift, bh = bl + extent, dl = tlb + shift, dh = dl + text;
    for (__int128 v : {bl, bh}) lo = v < lo ? v : lo, hi = v > hi ? v : hi;
    if (size > 0) lo = dl < lo ? dl : lo, hi = dh > hi ? dh : hi;
  }
  if (hi <= lo) return bad("--png: the type spans no bytes (size 0 and extent 0)");
  if (hi - lo > INT64_MAX) return bad("--png: the elements span more than 2^63 bytes");
  const int64_t span = static_cast<int64_t>(hi - lo), base = static_cast<int64_t>(lo);

  // Cell size and row width, in bytes: given, or chosen so the picture has at most kMaxCells
  // cells and rows of a readable length.
  int64_t cell = o.cell;
  if (cell == 0) cell = span / kMaxCells + (span % kMaxCells != 0);
  if (cell < 1) cell = 1;
  const int64_t ncells = span / cell + (span % cell != 0);
  if (ncells > kMaxCells) return bad("--png: --cell " + std::to_string(cell) + " makes more than 65536 cells");
  int64_t cols = o.width > 0 ? o.width / cell + (o.width % cell != 0) : (ncells <= 4096 ? 64 : 256);
  if (cols > ncells) cols = ncells;
  if (cols < 1) cols = 1;
  const int64_t rows = ncells / cols + (ncells % cols != 0);

  std::vector<Cell> cells(ncells);
  // Every piece of the stream, in order, in batches: each covers a run of cells.
  std::vector<struct iovec> iov(4096);
  int64_t offset = 0, drawn = 0;
  const int64_t total = size * count;  // no overflow: ddt_iov below rejects what does not fit
  int64_t visits = 0;
  bool cut = false;
  while (offset < total && !cut) {
    int64_t n = 0, bytes = 0;
    const int e = ddt_iov(nullptr, count, t, offset, iov.data(), static_cast<int64_t>(iov.size()), &n, &bytes);
    if (e != DDT_SUCCESS) return bad(std::string("--png: ddt_iov: ") + ddt_error_string(e));
    if (n == 0 || bytes == 0) break;
    int64_t s = offset;
    for (int64_t k = 0; k < n && !cut; ++k) {
      const int64_t addr = static_cast<int64_t>(reinterpret_cast<uintptr_t>(iov[k].iov_base)) - base;
      const int64_t len = static_cast<int64_t>(iov[k].iov_len);
      for (int64_t c = addr / cell; c * cell < addr + len && c < ncells; ++c) {
        const int64_t from = c * cell > addr ? c * cell : addr;
        const int64_t to = (c + 1) * cell < addr + len ? (c + 1) * cell : addr + len;
        Cell& x = cells[c];
        const int64_t pos = s + (from - addr);
        if (x.first < 0 || pos < x.first) x.first = pos;
        x.touched += to - from;
        cut = ++visits >= kMaxCellVisits;
      }
      s += len;
    }
    offset += bytes;
    drawn += n;
    if (drawn >= kMaxPicturePieces) cut = true;
  }
  cut = cut && offset < total;

  // Pixels per cell: given, or about 1024 pixels across, at most 16 per cell; a 1-pixel grey line
  // separates cells when they are large enough to show it, and a tick row above each row of
  // cells marks element starts.
  int64_t px = o.px > 0 ? o.px : 1024 / cols;
  if (o.px == 0) px = px < 1 ? 1 : px > 16 ? 16 : px;  // o.px is checked to be 1 to 64
  const bool lines = px >= 6;
  const int64_t tick = px >= 6 ? 2 : 0;
  const int64_t rowh = px + tick;
  const int64_t W = cols * px, H = rows * rowh;
  if (W * H > (int64_t(1) << 26)) return bad("--png: the picture would exceed 64 Mpixels; use a larger --cell");
  std::vector<uint8_t> rgb(3 * W * H, 255);
  auto put = [&](int64_t x, int64_t y, Rgb c) {
    uint8_t* p = &rgb[3 * (y * W + x)];
    p[0] = c.r, p[1] = c.g, p[2] = c.b;
  };
  const double denom = total > 1 ? static_cast<double>(total - 1) : 1.0;
  for (int64_t c = 0; c < ncells; ++c) {
    const Cell& x = cells[c];
    const int64_t in_cell = (c + 1) * cell <= span ? cell : span - c * cell;
    Rgb col{200, 200, 200};
    if (x.first >= 0) {
      col = ramp(static_cast<double>(x.first) / denom);
      const double frac = x.touched >= in_cell ? 1.0 : static_cast<double>(x.touched) / in_cell;
      // Partly touched: blended towards white by the untouched share, but never lighter than
      // halfway, so a sparse cell still reads as data.
      const double keep = 0.5 + 0.5 * frac;
      col = {static_cast<uint8_t>(255 - (255 - col.r) * keep), static_cast<uint8_t>(255 - (255 - col.g) * keep),
             static_cast<uint8_t>(255 - (255 - col.b) * keep)};
    }
    const int64_t x0 = (c % cols) * px, y0 = (c / cols) * rowh + tick;
    for (int64_t dy = 0; dy < px; ++dy)
      for (int64_t dx = 0; dx < px; ++dx) {
        const bool edge = lines && (dx == px - 1 || dy == px - 1);
        put(x0 + dx, y0 + dy, edge ? Rgb{235, 235, 235} : col);
      }
  }
  // Element starts: a dark tick above the cell holding lb + i * extent, for the first 65536.
  if (tick > 0)
    for (int64_t i = 0; i < count && i < kMaxCells; ++i) {
      const __int128 at = static_cast<__int128>(lb) + static_cast<__int128>(i) * extent - base;
      if (at < 0 || at >= span) continue;
      const int64_t c = static_cast<int64_t>(at) / cell;
      const int64_t x0 = (c % cols) * px, y0 = (c / cols) * rowh;
      for (int64_t dy = 0; dy < tick; ++dy)
        for (int64_t dx = 0; dx < px - (lines ? 1 : 0); ++dx) put(x0 + dx, y0 + dy, Rgb{30, 30, 30});
    }
  std::string error;
  if (!png::write(o.png, W, H, rgb, &error)) {
    std::fprintf(stderr, "ddtkit inspect: --png: %s\n", error.c_str());
    return kFailed;
  }
  std::printf("picture:         %s, %" PRId64 " x %" PRId64 " px: %" PRId64 " cells of %" PRId64 " B, %" PRId64
              " per row, from byte %" PRId64 "%s\n",
              o.png.c_str(), W, H, ncells, cell, cols, base,
              cut ? " (drawing stopped early: too many pieces; the rest is not shown)" : "");
  return kOk;
}

// ---- the type --------------------------------------------------------------------------------

// A kernel built on absolute addresses (DDTBench's MPI_BOTTOM kernels: WRF, LAMMPS,
// SPECFEM3D_cm) has displacements that are the addresses of its arrays, which differ from run to
// run (ASLR) and lie far apart (the heap and mmap'ed arrays): shown as they are, its bounds are
// addresses, its hash and notation change every run, and its picture is one grey strip of
// terabytes. So inspect shows the same type over one virtual buffer instead: the kernel's arrays
// laid end to end in the order it allocates them, each at a 64-byte boundary, and every top-level
// displacement (a struct's or hindexed's, the only place DDTBench puts an address) moved from
// its array's address to that array's offset in the buffer. The layout inside each array, the
// typemap order and the size are unchanged; bounds, true bounds, hash, notation and pieces
// become the same in every run, and small. (Shifting the type by its true lb alone would not do:
// the gaps between separately allocated arrays are themselves random.)
bool rebase(const Kernel& k, TypeHolder& h, std::string& note, std::string& error) {
  constexpr int64_t kAlign = 64;
  const size_t n = k.arrays.size();
  std::vector<int64_t> start(n), offset(n);
  int64_t end = 0;
  for (size_t i = 0; i < n; ++i) {
    start[i] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(k.arrays[i].get()));
    offset[i] = (end + kAlign - 1) / kAlign * kAlign;
    end = offset[i] + k.array_bytes[i];
  }
  int64_t ni = 0, na = 0, nd = 0;
  int combiner = 0;
  if (int e = ddt_type_envelope(k.type, &ni, &na, &nd, &combiner)) {
    error = std::string("ddt_type_envelope: ") + ddt_error_string(e);
    return false;
  }
  if (combiner != DDT_COMBINER_STRUCT && combiner != DDT_COMBINER_HINDEXED &&
      combiner != DDT_COMBINER_HINDEXED_BLOCK) {
    error = "its displacements are absolute addresses, and its outermost constructor is not a struct or hindexed "
            "that inspect knows how to move to offsets";
    return false;
  }
  std::vector<int64_t> ints(ni), addrs(na);
  std::vector<ddt_type> types(nd, DDT_TYPE_NULL);
  if (int e = ddt_type_contents(k.type, ni, na, nd, ints.data(), addrs.data(), types.data())) {
    error = std::string("ddt_type_contents: ") + ddt_error_string(e);
    return false;
  }
  bool inside = true;
  for (int64_t& a : addrs) {
    size_t i = 0;
    while (i < n && !(a >= start[i] && a <= start[i] + k.array_bytes[i])) ++i;
    if (i == n) {
      inside = false;
      break;
    }
    a = offset[i] + (a - start[i]);
  }
  int e = DDT_SUCCESS;
  if (inside) {
    const int64_t count = ints[0];
    if (combiner == DDT_COMBINER_STRUCT) e = ddt_type_struct(count, &ints[1], addrs.data(), types.data(), &h.t);
    else if (combiner == DDT_COMBINER_HINDEXED) e = ddt_type_hindexed(count, &ints[1], addrs.data(), types[0], &h.t);
    else e = ddt_type_hindexed_block(count, ints[1], addrs.data(), types[0], &h.t);
  }
  for (ddt_type& c : types)
    if (c) ddt_type_free(&c);  // contents hands back a reference to each (a predefined one refuses, harmlessly)
  if (!inside) {
    error = "a displacement lies in none of its arrays, so it cannot be shown relative to them";
    return false;
  }
  if (e != DDT_SUCCESS) {
    error = std::string("rebuilding it over offsets: ") + ddt_error_string(e);
    return false;
  }
  note = "displacements are absolute addresses (MPI_BOTTOM), shown as offsets in one buffer holding its " +
         std::to_string(n) + " arrays end to end (" + std::to_string(end) +
         " B, each at a 64-byte boundary), so that bounds, hash and notation are the same in every run";
  return true;
}

// Builds the type the options name into h (and the kernel's default count). Returns an exit
// status; kOk with h.t set on success.
int obtain(const Options& o, TypeHolder& h, int64_t& default_count, std::string& label, std::string& note) {
  default_count = 1;
  if (!o.kernel.empty()) {
    std::vector<std::unique_ptr<Kernel>> ks = ddtbench_kernels(false);
    std::string names;
    for (const auto& k : ks) {
      if (k->name != o.kernel) continue;
      names += (names.empty() ? "" : ", ") + k->params;
      if (!o.params.empty() && k->params != o.params) continue;
      label = "DDTBench kernel " + k->name + " " + k->params;
      default_count = k->count;
      if (k->buf == nullptr) {
        std::string error;
        if (!rebase(*k, h, note, error)) return bad("kernel " + k->name + " " + k->params + ": " + error);
        return kOk;
      }
      h.t = k->type;  // taken over from the kernel, which frees only a handle it still holds
      k->type = DDT_TYPE_NULL;
      return kOk;
    }
    if (o.kernel == "list" || names.empty()) {
      // One line per kernel, its parameter sets in the spec's order.
      std::vector<std::pair<std::string, std::string>> lines;
      for (const auto& k : ks) {
        size_t i = 0;
        while (i < lines.size() && lines[i].first != k->name) ++i;
        if (i == lines.size()) lines.push_back({k->name, ""});
        lines[i].second += " " + k->params;
      }
      std::string all;
      for (const auto& l : lines) all += (all.empty() ? "  " : "\n  ") + l.first + ":" + l.second;
      if (o.kernel == "list") {
        std::printf("DDTBench kernels and their parameter sets (--kernel NAME --params P):\n%s\n", all.c_str());
        return -1;  // not an error, and nothing more to show
      }
      return bad("unknown kernel '" + o.kernel + "'; the kernels are:\n" + all);
    }
    return bad("kernel " + o.kernel + " has no parameter set '" + o.params + "'; it has: " + names);
  }
  if (!o.layout.empty()) {
    std::string bytes, error;
    if (!read_all(o.layout, bytes, error)) return bad(error);
    if (int e = ddt_type_deserialize(bytes.data(), static_cast<int64_t>(bytes.size()), &h.t))
      return bad(o.layout + ": not a serialized layout: " + ddt_error_string(e));
    label = "layout read from " + o.layout;
    return kOk;
  }
  std::string text = o.text, error;
  if (!o.file.empty()) {
    if (!read_all(o.file, text, error)) return bad(error);
    if (text.find('\0') != std::string::npos) return bad(o.file + ": a NUL byte in the text");
    label = "notation read from " + (o.file == "-" ? std::string("stdin") : o.file);
  } else {
    label = "notation";
  }
  char err[512];
  if (int e = ddt_type_parse(text.c_str(), &h.t, err, sizeof err)) return parse_error(text, err, e);
  return kOk;
}

int parse_options(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* what) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)what;
      return argv[++i];
    };
    auto need = [&](std::string& into) {
      const char* v = value(a.c_str());
      if (!v) return false;
      into = v;
      return true;
    };
    auto need_num = [&](int64_t lo, int64_t& into) { return number(value(a.c_str()), lo, into); };
    bool ok = true;
    if (a == "-h" || a == "--help") {
      print_usage("inspect", false);  // as `ddtkit help inspect`; nothing else is done
      return -1;
    }
    if (a == "-f" || a == "--file") ok = need(o.file);
    else if (a == "--kernel") ok = need(o.kernel);
    else if (a == "--params") ok = need(o.params);
    else if (a == "--layout") ok = need(o.layout);
    else if (a == "--write-layout") ok = need(o.write_layout);
    else if (a == "--png") ok = need(o.png);
    else if (a == "--count") ok = need_num(1, o.count);
    else if (a == "--pieces") ok = need_num(0, o.pieces);
    else if (a == "--width") ok = need_num(1, o.width);
    else if (a == "--cell") ok = need_num(1, o.cell);
    else if (a == "--px") ok = need_num(1, o.px) && o.px <= 64;
    else if (a == "-") o.file = "-";
    else if (a.size() > 1 && a[0] == '-' && a[1] == '-') return bad("unknown option " + a);
    else {
      // Notation words; joined with spaces, so `inspect vector(4, 1, 5, double)` quoted or not
      // (the shell splits at the spaces) means the same.
      o.text += (o.have_text ? " " : "") + a;
      o.have_text = true;
    }
    if (!ok) return bad(a + " needs " + (a == "--count" || a == "--width" || a == "--cell" ? "a positive integer"
                                       : a == "--px" ? "an integer from 1 to 64"
                                       : a == "--pieces" ? "a non-negative integer" : "a value"));
  }
  const int sources = o.have_text + !o.file.empty() + !o.kernel.empty() + !o.layout.empty();
  if (sources != 1)
    return bad(sources ? "give one type: notation text, -f FILE, -, --kernel NAME or --layout FILE"
                       : "no type given: notation text, -f FILE, -, --kernel NAME or --layout FILE");
  if (!o.params.empty() && o.kernel.empty()) return bad("--params goes with --kernel");
  if (o.pieces > 1000000) return bad("--pieces: at most 1000000");
  return kOk;
}

}  // namespace

const char* inspect_details() {
  return "  TYPE           a type in the notation of docs/notation.md, e.g. 'vector(4, 1, 5, double)'\n"
         "  -f FILE, -     the notation read from FILE, or from stdin\n"
         "  --kernel NAME  a DDTBench kernel (--kernel list names them), with --params P (default: its first set);\n"
         "                 one built on absolute addresses (WRF, LAMMPS, SPECFEM3D_cm) is shown with its arrays\n"
         "                 end to end in one buffer, so its bounds, hash and notation are the same in every run\n"
         "  --layout FILE  a layout serialized by ddt_type_serialize\n"
         "  --write-layout FILE  write the type's serialized layout to FILE\n"
         "  --count N      elements (default 1, or the kernel's count) for the pieces and the picture\n"
         "  --pieces N     how many pieces of the typemap to list (default 8)\n"
         "  --png FILE     draw the typemap: bytes in rows of cells, touched ones coloured by stream\n"
         "                 order (dark blue first, yellow last), untouched grey, element starts ticked\n"
         "  --width B      bytes per row of the picture (default: 64 cells, 256 above 4096 cells)\n"
         "  --cell B       bytes per cell (default: 1, more when the span exceeds 65536 bytes)\n"
         "  --px N         pixels per cell side (default: about 1024 pixels across, at most 16 per cell)\n"
         "  -h, --help     this text\n"
         "  exit status 2 for invalid input (the message says where), 1 when a file cannot be written\n";
}

int inspect_command(int argc, char** argv) {
  Options o;
  if (int e = parse_options(argc, argv, o)) return e < 0 ? kOk : e;
  TypeHolder h;
  int64_t default_count = 1;
  std::string label, note;
  if (int e = obtain(o, h, default_count, label, note)) return e < 0 ? kOk : e;
  const int64_t count = o.count > 0 ? o.count : default_count;
  int64_t one_size, all_bytes;
  ddt_type_size(h.t, &one_size);
  if (__builtin_mul_overflow(one_size, count, &all_bytes)) return bad("--count: count x size overflows 64 bits");
  if (int e = ddt_type_commit(h.t)) return bad(std::string("ddt_type_commit: ") + ddt_error_string(e));

  int64_t size, lb, extent, tlb, text, blocks = 0;
  int ascending = 0;
  uint8_t hash[16];
  ddt_type_size(h.t, &size);
  ddt_type_extent(h.t, &lb, &extent);
  ddt_type_true_extent(h.t, &tlb, &text);
  ddt_type_blocks(h.t, &blocks, &ascending);
  ddt_type_hash(h.t, hash);
  std::printf("type:            %s\n", label.c_str());
  if (!note.empty()) std::printf("rebased:         %s\n", note.c_str());
  int64_t need = 0;
  ddt_type_notation(h.t, nullptr, 0, &need);
  std::string notation(need > 0 ? need : 1, '\0');
  const int ne = need > 0 ? ddt_type_notation(h.t, &notation[0], need, &need) : DDT_ERR_OVERFLOW;
  std::printf("notation:        %s\n", ne == DDT_SUCCESS ? notation.c_str() : ddt_error_string(ne));
  std::printf("size:            %" PRId64 " B\n", size);
  std::printf("lb, extent:      %" PRId64 ", %" PRId64 " B\n", lb, extent);
  std::printf("true lb, extent: %" PRId64 ", %" PRId64 " B\n", tlb, text);
  std::printf("blocks:          %" PRId64 " per element%s\n", blocks,
              blocks > 1 ? (ascending ? ", at ascending addresses" : ", not in address order") : "");
  std::printf("hash:            %s\n", hex(hash, 16).c_str());
  std::string desc(1 << 16, '\0');
  int de;
  while ((de = ddt_type_describe(h.t, &desc[0], static_cast<int64_t>(desc.size()))) == DDT_ERR_TRUNCATE &&
         desc.size() < (size_t(1) << 28))
    desc.resize(desc.size() * 4);
  if (de == DDT_SUCCESS) {
    // Its first line repeats size and bounds; the layout follows, indented.
    const char* body = std::strchr(desc.c_str(), '\n');
    std::string lines = body ? body + 1 : "";
    std::printf("layout:\n");
    size_t at = 0;
    while (at < lines.size()) {
      const size_t nl = lines.find('\n', at);
      std::printf("  %s\n", lines.substr(at, nl - at).c_str());
      at = nl == std::string::npos ? lines.size() : nl + 1;
    }
  }

  print_plans(h.t, count);

  if (o.pieces > 0) {
    std::vector<struct iovec> iov(o.pieces);
    int64_t n = 0, bytes = 0;
    const int e = ddt_iov(nullptr, count, h.t, 0, iov.data(), o.pieces, &n, &bytes);
    if (e != DDT_SUCCESS) return bad(std::string("ddt_iov: ") + ddt_error_string(e));
    std::printf("pieces:          count %" PRId64 ", %" PRId64 " B packed; the first %" PRId64 " (offset, length):\n",
                count, size * count, n);
    for (int64_t k = 0; k < n; ++k)
      std::printf("  %" PRId64 ", %zu\n", static_cast<int64_t>(reinterpret_cast<uintptr_t>(iov[k].iov_base)),
                  iov[k].iov_len);
    if (bytes < size * count) std::printf("  ... (%" PRId64 " B more)\n", size * count - bytes);
  }

  if (!o.write_layout.empty()) {
    int64_t n = 0;
    ddt_type_serialize(h.t, nullptr, 0, &n);
    std::vector<char> bytes(n);
    if (int e = ddt_type_serialize(h.t, bytes.data(), n, &n)) return bad(std::string("ddt_type_serialize: ") + ddt_error_string(e));
    FILE* f = std::fopen(o.write_layout.c_str(), "wb");
    const bool ok = f && std::fwrite(bytes.data(), 1, n, f) == static_cast<size_t>(n);
    if (f && std::fclose(f) != 0) {
      std::fprintf(stderr, "ddtkit inspect: --write-layout %s: %s\n", o.write_layout.c_str(), std::strerror(errno));
      return kFailed;
    }
    if (!ok) {
      std::fprintf(stderr, "ddtkit inspect: --write-layout %s: %s\n", o.write_layout.c_str(), std::strerror(errno));
      return kFailed;
    }
    std::printf("layout file:     %s, %" PRId64 " B\n", o.write_layout.c_str(), n);
  }
  if (!o.png.empty()) return draw(h.t, count, o);
  return kOk;
}
