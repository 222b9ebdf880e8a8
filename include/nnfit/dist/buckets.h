// The gradient buckets of data-parallel training (Note [Gradient buckets],
// replicas.cpp): every trainable weight's gradient in one flat buffer, in the reverse
// of the layer order (the order the backward pass finishes them), cut into buckets that
// close once they hold bucket_bytes, each summed with one collective. The CPU path (MPI)
// packs them tight; a device (NCCL, Note [Device gradient buckets]) starts each bucket at
// a multiple of align_floats, the gap before it summed as zeros.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace nnfit::dist {

struct BucketLayout {
  struct Bucket {
    std::int64_t begin = 0, end = 0;  // floats of the flat buffer, [begin, end)
    std::string what;                 // "allreduce of gradient bucket 1 of 3", for the watchdog
  };
  std::vector<std::int64_t> offset;  // per gradient (in layer order): where it sits in the flat buffer
  std::vector<int> bucket_of;        // per gradient: its bucket
  std::vector<Bucket> buckets;       // in the order they start (reverse layer order)
  std::int64_t total_floats = 0;     // the flat buffer's size, gaps included
};
// counts: floats per gradient, in layer order. throws: InvalidArgument for a negative
// count, bucket_bytes < 0 or align_floats < 1.
BucketLayout plan_buckets(const std::vector<std::int64_t>& counts, std::int64_t bucket_bytes, std::int64_t align_floats = 64);

}  // namespace nnfit::dist
