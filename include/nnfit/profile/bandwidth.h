// The host's memory bandwidth, measured as STREAM measures it: the triad a = b + s·c over
// three arrays of doubles much larger than the last-level cache, split across `threads`
// threads, best of a few rounds. It is the ceiling `nnfit profile` judges the bytes an op
// moves against (Note [Profile verdict] in src/profile/bottleneck.cpp), as oneDNN's sgemm is
// the ceiling for FLOPs. Bytes count as STREAM counts them, each array once per pass (two
// read, one written; the cache line a store reads first is not counted), which is how
// ops.json counts an op's bytes.
#pragma once
#include <cstddef>

namespace nnfit::profile {

struct BandwidthOptions {
  int threads = 1;              // threads that run the triad (the run's compute threads)
  std::size_t array_bytes = 0;  // bytes per array; 0: default_bandwidth_array_bytes()
  int rounds = 3;               // timed passes; the fastest counts (the machine may be shared)
};

struct BandwidthMeasurement {
  double gbps = 0;              // 1e9 bytes per second of the fastest pass: 3 x array_bytes / its seconds
  std::size_t array_bytes = 0;  // bytes per array used (rounded down to whole cache lines per thread)
  int threads = 0;
  int rounds = 0;
};

// Bytes of the largest cache (sysfs's highest cache level, else sysconf); 0 when unknown.
std::size_t last_level_cache_bytes();

// STREAM's rule, each array at least 4x the last-level cache, within [64 MiB, 1 GiB]
// (256 MiB when the cache size is unknown): three arrays take 192 MiB to 3 GiB.
std::size_t default_bandwidth_array_bytes();

// Allocates the three arrays (each thread first-touches its own part), runs one untimed
// pass and then `rounds` timed ones. Takes about 3 x array_bytes x (rounds + 2) / bandwidth
// seconds: 0.2 s for 128 MiB arrays at 10 GB/s.
// requires: threads >= 1, rounds >= 1. throws: InvalidArgument for those; std::bad_alloc
// when the arrays do not fit in memory.
BandwidthMeasurement measure_host_bandwidth(const BandwidthOptions& options);

}  // namespace nnfit::profile
