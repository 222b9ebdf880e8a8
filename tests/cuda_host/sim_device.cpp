// cuda-sim (sim_device.h): guarded host memory, a BfcAllocator over it, the SIGSEGV
// handler that names a host access to it, and the registry of wrapped kernels.
//
// Note [Simulated device]: the model's device path (weights, slots and arena in the
// backend's memory, data moved only through Backend::copy) cannot run here for lack of a
// GPU, and on the CPU backend any mistake in it goes unseen, since host code can read
// device-placed buffers there. The simulated device makes such a mistake a crash that
// names it: its memory is mmap'd PROT_NONE and opened (PROT_READ | PROT_WRITE on every
// live region) only while a kernel of its registry runs or copy() moves bytes. Kernels
// are wrapped rather than trusted: the wrapper also checks that every pointer a kernel is
// given lies in simulated memory, so a host buffer handed to a "device" kernel is caught
// too. The memory is opened as a whole (not per region, not per thread), so a host access
// on one thread while another thread runs a kernel goes unseen; the model's step runs on
// one thread, where this does not arise.
#include "cuda_host/sim_device.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "cuda_host/cuda_host_harness.h"
#include "nnfit/core/error.h"
#include "nnfit/backend/device_queues.h"
#include "nnfit/memory/bfc_allocator.h"

namespace nnfit::testing {
namespace {

// ---- Guarded regions: one process-wide table, since the signal handler and the kernels
// (registered once, for every sim backend) must find them without a backend at hand.

constexpr std::size_t kMaxRegions = 512;  // BFC regions double in size: a few dozen at most

struct RegionSlot {
  // begin != 0 marks a live slot; the handler reads them without the lock (atomics).
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::uintptr_t> end{0};
};

struct GuardTable {
  std::mutex mu;
  int open_count = 0;        // kernel runs and copies in progress
  std::size_t used = 0;      // slots [0, used) may be live
  std::array<RegionSlot, kMaxRegions> slots;
  int backends = 0;          // live sim backends: the handler is installed while > 0
  struct sigaction previous {};
};

// Constant-initialized (no constructor runs), never destroyed: the handler may read it
// during exit.
constinit GuardTable g_guards;

void protect_all_locked(int prot) {
  for (std::size_t i = 0; i < g_guards.used; ++i) {
    const std::uintptr_t b = g_guards.slots[i].begin.load();
    if (b == 0) continue;
    const std::uintptr_t e = g_guards.slots[i].end.load();
    NNFIT_CHECK(mprotect(reinterpret_cast<void*>(b), e - b, prot) == 0, BackendError,
                "cuda-sim: mprotect of region [", b, ", ", e, ") failed: ", std::strerror(errno));
  }
}

// ---- The SIGSEGV handler (async-signal-safe: atomics, write(2), abort()).

char* append(char* out, const char* text) {
  while (*text) *out++ = *text++;
  return out;
}

char* append_hex(char* out, std::uintptr_t v) {
  out = append(out, "0x");
  char digits[2 * sizeof v];
  int n = 0;
  do {
    digits[n++] = "0123456789abcdef"[v & 0xf];
    v >>= 4;
  } while (v != 0);
  while (n > 0) *out++ = digits[--n];
  return out;
}

void on_segv(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (std::size_t i = 0; i < kMaxRegions; ++i) {
    const std::uintptr_t b = g_guards.slots[i].begin.load();
    const std::uintptr_t e = g_guards.slots[i].end.load();
    if (b == 0 || addr < b || addr >= e) continue;
    char line[256];
    char* p = append(line, "nnfit cuda-sim: host access to simulated device memory at ");
    p = append_hex(p, addr);
    p = append(p, ", region [");
    p = append_hex(p, b);
    p = append(p, ", ");
    p = append_hex(p, e);
    p = append(p, "): the model touched device memory without Backend::copy\n");
    [[maybe_unused]] const ssize_t written = write(STDERR_FILENO, line, static_cast<std::size_t>(p - line));
    std::abort();
  }
  // Not simulated memory: what would have happened without us.
  const struct sigaction& prev = g_guards.previous;
  if ((prev.sa_flags & SA_SIGINFO) != 0 && prev.sa_sigaction != nullptr) {
    prev.sa_sigaction(sig, info, context);
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
  } else {
    // Returning re-executes the faulting access, which now takes the default action.
    signal(sig, SIG_DFL);
  }
}

// ---- The memory source: page-aligned mmap'd regions, PROT_NONE unless open.

class GuardedSubAllocator final : public SubAllocator {
 public:
  void* alloc(std::size_t bytes) override {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t mapped = (bytes + page - 1) / page * page;
    std::lock_guard<std::mutex> lock(g_guards.mu);
    std::size_t slot = 0;
    while (slot < g_guards.used && g_guards.slots[slot].begin.load() != 0) ++slot;
    if (slot == kMaxRegions) return nullptr;  // reported by the BfcAllocator as out of memory
    const int prot = g_guards.open_count > 0 ? PROT_READ | PROT_WRITE : PROT_NONE;
    void* p = mmap(nullptr, mapped, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    const auto b = reinterpret_cast<std::uintptr_t>(p);
    g_guards.slots[slot].end.store(b + mapped);
    g_guards.slots[slot].begin.store(b);
    if (slot == g_guards.used) ++g_guards.used;
    return p;
  }
  void free(void* ptr, std::size_t) override {
    std::lock_guard<std::mutex> lock(g_guards.mu);
    const auto b = reinterpret_cast<std::uintptr_t>(ptr);
    for (std::size_t i = 0; i < g_guards.used; ++i) {
      if (g_guards.slots[i].begin.load() != b) continue;
      const std::uintptr_t e = g_guards.slots[i].end.load();
      g_guards.slots[i].begin.store(0);
      g_guards.slots[i].end.store(0);
      munmap(ptr, e - b);
      return;
    }
  }
  Device device() const override { return Device{DeviceType::cuda, 0}; }
  std::int64_t total_bytes() const override { return host_total_; }

 private:
  std::int64_t host_total_ = make_host_sub_allocator()->total_bytes();
};

class SimBackend final : public Backend {
 public:
  SimBackend(const MemoryPolicy& policy, bool queues) : allocator_(std::make_unique<GuardedSubAllocator>(), policy) {
    if (queues) queues_ = make_cuda_sim_queues();
    std::lock_guard<std::mutex> lock(g_guards.mu);
    if (g_guards.backends++ > 0) return;
    struct sigaction ours {};
    ours.sa_sigaction = &on_segv;
    ours.sa_flags = SA_SIGINFO;
    sigemptyset(&ours.sa_mask);
    sigaction(SIGSEGV, &ours, &g_guards.previous);
  }
  ~SimBackend() override {
    queues_.reset();  // its pending work runs while the memory and the handler are there
    std::lock_guard<std::mutex> lock(g_guards.mu);
    if (--g_guards.backends == 0) sigaction(SIGSEGV, &g_guards.previous, nullptr);
  }
  SimBackend(const SimBackend&) = delete;
  SimBackend& operator=(const SimBackend&) = delete;

  std::string name() const override { return "cuda-sim:0 (the CUDA kernels' host-run bodies on guarded host memory)"; }
  Device device() const override { return Device{DeviceType::cuda, 0}; }
  Allocator& allocator() override { return allocator_; }
  // As cudaMemcpy with an explicit kind: each side must be the memory the kind says.
  void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) override {
    if (bytes == 0) return;
    const bool dst_device = kind != CopyKind::device_to_host, src_device = kind != CopyKind::host_to_device;
    const char* kinds[] = {"host_to_device", "device_to_host", "device_to_device"};
    NNFIT_CHECK(in_cuda_sim_memory(dst, bytes) == dst_device && in_cuda_sim_memory(src, bytes) == src_device,
                BackendError, "cuda-sim: copy ", kinds[static_cast<int>(kind)], " of ", bytes, " bytes from ", src, " to ",
                dst, ": the ", dst_device ? "destination" : "source", " must be simulated device memory and the ",
                dst_device ? (src_device ? "source too" : "source host memory") : "destination host memory");
    const CudaSimOpen open;
    std::memcpy(dst, src, bytes);
    if (kind == CopyKind::device_to_host) bytes_to_host_ += static_cast<std::int64_t>(bytes);
  }
  std::int64_t bytes_to_host() const { return bytes_to_host_; }
  void synchronize() override {}
  const KernelRegistry* kernels() const override { return &cuda_sim_registry(); }
  DeviceQueues* queues() override { return queues_.get(); }
  // "Pinned" staging: host memory from an allocator of its own, as CUDA's page-locked BFC.
  Allocator* pinned_allocator() override { return &pinned_; }

 private:
  BfcAllocator allocator_;
  BfcAllocator pinned_{make_host_sub_allocator(), MemoryPolicy{}};
  std::unique_ptr<DeviceQueues> queues_;  // after the allocators: destroyed (drained) first
  std::atomic<std::int64_t> bytes_to_host_{0};
};

}  // namespace

CudaSimOpen::CudaSimOpen() {
  std::lock_guard<std::mutex> lock(g_guards.mu);
  if (g_guards.open_count++ == 0) protect_all_locked(PROT_READ | PROT_WRITE);
}

CudaSimOpen::~CudaSimOpen() {
  std::lock_guard<std::mutex> lock(g_guards.mu);
  // A destructor must not throw, and memory left open would hide what the sim exists to
  // catch: a failed mprotect (which worked moments ago on the same regions) ends the test.
  if (--g_guards.open_count == 0) {
    try {
      protect_all_locked(PROT_NONE);
    } catch (const BackendError& e) {
      std::fprintf(stderr, "nnfit %s\n", e.what());
      std::abort();
    }
  }
}

bool in_cuda_sim_memory(const void* ptr, std::size_t bytes) {
  const auto b = reinterpret_cast<std::uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(g_guards.mu);
  for (std::size_t i = 0; i < g_guards.used; ++i) {
    const std::uintptr_t rb = g_guards.slots[i].begin.load(), re = g_guards.slots[i].end.load();
    if (rb != 0 && b >= rb && b <= re && bytes <= re - b) return true;
  }
  return false;
}

std::int64_t cuda_sim_bytes_to_host(Backend& backend) {
  auto* sim = dynamic_cast<SimBackend*>(&backend);
  if (!sim) return 0;
  return sim->bytes_to_host() + (sim->queues() ? cuda_sim_queue_bytes_to_host(*sim->queues()) : 0);
}

std::unique_ptr<Backend> make_cuda_sim_backend(const MemoryPolicy& policy, bool queues) {
  return std::make_unique<SimBackend>(policy, queues);
}

}  // namespace nnfit::testing
