// The pointer query through the driver's cuPointerGetAttributes, found in libcuda.so.1 with dlopen
// rather than linked: a program that links ddtkit's GPU layer still starts on a machine without
// the CUDA driver (CI's), where it learns that no device is there instead of failing to load.
// Not through the CUDA runtime (cudaGetDriverEntryPoint), so that finding devices and telling
// device memory from host memory leave the runtime uninitialised until a device buffer is
// actually moved: the MPI interposer asks at MPI_Init in every process that loaded the driver,
// most of whose messages are host memory.
#include "cuda/memory.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ddt::gpu {

namespace {

using GetAttributes = CUresult (*)(unsigned, CUpointer_attribute*, void**, CUdeviceptr);

struct Driver {
  GetAttributes query = nullptr;
  int devices = 0;
};

const Driver& driver() {
  static const Driver d = [] {
    Driver x;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return x;
    using Init = CUresult (*)(unsigned);
    using Count = CUresult (*)(int*);
    const auto init = reinterpret_cast<Init>(dlsym(lib, "cuInit"));
    const auto count = reinterpret_cast<Count>(dlsym(lib, "cuDeviceGetCount"));
    const auto query = reinterpret_cast<GetAttributes>(dlsym(lib, "cuPointerGetAttributes"));
    int n = 0;
    if (!init || !count || !query || init(0) != CUDA_SUCCESS || count(&n) != CUDA_SUCCESS || n <= 0) return x;
    x.query = query, x.devices = n;
    return x;
  }();
  return d;
}

GetAttributes driver_query() { return driver().query; }

// The start of the [heap] mapping, read once (0 where there is none).
uintptr_t heap_start() {
  static const uintptr_t start = [] {
    uintptr_t s = 0;
    if (FILE* f = std::fopen("/proc/self/maps", "r")) {
      char line[512];
      while (std::fgets(line, sizeof line, f))
        if (std::strstr(line, "[heap]")) {
          s = static_cast<uintptr_t>(std::strtoull(line, nullptr, 16));
          break;
        }
      std::fclose(f);
    }
    return s;
  }();
  return start;
}

// The program break. glibc keeps it in __curbrk (exported since GLIBC_2.2.5, updated by every
// brk, Open MPI's memory patcher included), read here as it is: sbrk(0) returns the same value
// but, in a process where a preloaded library defines malloc (libddtkit-mpi.so does), glibc's
// sbrk asks the kernel each time (strace: 1,008 brk system calls for 1,000 sbrk(0)). That system
// call, four of them per round trip, was the device check's whole cost on host buffers under the
// interposer (issue 12: a 480 B round trip 4.6 us against 2.8 with the check off, on this
// project's 2-core machine with no GPU; 5.6-6.9 against 2.9-3.8 on an H100 machine). Other C
// libraries: sbrk(0).
extern "C" void* __curbrk __attribute__((weak));

uintptr_t program_break() {
  if (&__curbrk != nullptr)
    if (void* b = __atomic_load_n(&__curbrk, __ATOMIC_RELAXED)) return reinterpret_cast<uintptr_t>(b);
  return reinterpret_cast<uintptr_t>(sbrk(0));
}

// Driver queries made, printed at exit under DDTKIT_VERBOSE=1 (what the device check costs
// host-buffer traffic is measured in these).
std::atomic<int64_t> queries{0};

void report_queries() { std::fprintf(stderr, "ddtkit: %lld pointer queries to the CUDA driver\n", (long long)queries.load()); }

}  // namespace

int driver_devices() { return driver().devices; }

bool in_heap(uintptr_t lo, uint64_t len) {
  const uintptr_t start = heap_start();
  if (start == 0 || lo < start) return false;
  const uintptr_t brk = program_break();
  return lo < brk && len <= brk - lo;
}

bool where(const void* p, Where* w) {
  static const bool counted = [] {
    const char* v = std::getenv("DDTKIT_VERBOSE");
    if (v && *v && std::strcmp(v, "0") != 0) std::atexit(report_queries);
    return true;
  }();
  (void)counted;
  queries.fetch_add(1, std::memory_order_relaxed);
  *w = Where{};
  const GetAttributes query = driver_query();
  if (!query) return false;
  // For memory the driver does not know, cuPointerGetAttributes succeeds and leaves every
  // attribute zero (memory type 0): pageable host memory.
  unsigned type = 0;
  int device = -1;
  unsigned managed = 0;  // CU_POINTER_ATTRIBUTE_IS_MANAGED is a bool, written as such
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void* data[] = {&type, &managed, &device};
  if (query(3, attrs, data, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS) return true;  // unknown: host
  if (managed & 0xff) {
    w->kind = Mem::Managed;
  } else if (type == CU_MEMORYTYPE_DEVICE) {
    w->kind = Mem::Device;
  } else if (type == CU_MEMORYTYPE_HOST) {
    w->kind = Mem::Pinned;
  } else {
    return true;
  }
  w->device = device;
  // The allocation's range, asked on its own: cuda.h documents it for device pointers, and a
  // driver that refuses it for another kind must not make that memory look pageable. Unknown
  // bounds (size 0) are not checked (memory.hpp's inside()). For stream-ordered pools and
  // virtual memory (cuMemMap) it is the reserved range, which may be larger than what is mapped:
  // there the check is looser than the allocation.
  void* start = nullptr;
  size_t size = 0;
  CUpointer_attribute range[] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void* rdata[] = {&start, &size};
  if (query(2, range, rdata, reinterpret_cast<CUdeviceptr>(p)) == CUDA_SUCCESS && start && size) {
    w->base = reinterpret_cast<uintptr_t>(start);
    w->size = size;
  }
  return true;
}

}  // namespace ddt::gpu
