// The all-reduce's cost on this machine, through nnfit's Communicator: the median time of
// a float sum of each size over the ranks, for the step-time model of
// docs/design/distributed.md (latency alpha and bandwidth beta fitted from it).
//   cmake --build build/release --target nnfit_allreduce_bench
//   mpirun -np 2 build/release/nnfit_allreduce_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "nnfit/dist/communicator.h"

int main() {
  auto comm = nnfit::dist::make_communicator({});
  const int reps = 50;
  if (comm->rank() == 0) std::printf("ranks %d (%s)\n%12s %14s %12s\n", comm->size(), comm->name().c_str(), "bytes", "median_us", "GB/s(algbw)");
  for (std::int64_t bytes = 4; bytes <= (64 << 20); bytes *= 4) {
    std::vector<float> buf(static_cast<std::size_t>(bytes / 4), 1.0f);
    std::vector<double> us;
    for (int i = 0; i < reps + 3; ++i) {
      comm->barrier("bench barrier");
      const auto t0 = std::chrono::steady_clock::now();
      comm->all_reduce_sum(buf.data(), bytes / 4, "bench allreduce");
      const auto t1 = std::chrono::steady_clock::now();
      if (i >= 3) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    std::sort(us.begin(), us.end());
    const double med = us[us.size() / 2];
    if (comm->rank() == 0) std::printf("%12lld %14.1f %12.2f\n", static_cast<long long>(bytes), med, bytes / med / 1e3);
  }
  return 0;
}
