// dist::plan_buckets (nnfit/dist/buckets.h): the gradient bucket layout of the MPI and the
// NCCL paths.
#include "nnfit/dist/buckets.h"

#include "nnfit/core/error.h"

namespace nnfit::dist {

BucketLayout plan_buckets(const std::vector<std::int64_t>& counts, std::int64_t bucket_bytes, std::int64_t align_floats) {
  NNFIT_CHECK(bucket_bytes >= 0, InvalidArgument, "bucket_bytes must be >= 0, got ", bucket_bytes);
  NNFIT_CHECK(align_floats >= 1, InvalidArgument, "align_floats must be >= 1, got ", align_floats);
  BucketLayout l;
  const std::size_t n = counts.size();
  l.offset.assign(n, 0);
  l.bucket_of.assign(n, 0);
  std::int64_t at = 0, bucket_start = 0;
  auto close = [&] {
    if (at == bucket_start) return;
    l.buckets.push_back({bucket_start, at, ""});
    at = (at + align_floats - 1) / align_floats * align_floats;  // the next bucket's start
    bucket_start = at;
  };
  // Reverse layer order: the backward pass finishes the last layer's gradients first.
  for (std::size_t i = n; i-- > 0;) {
    NNFIT_CHECK(counts[i] >= 0, InvalidArgument, "gradient ", i, " has a negative size ", counts[i]);
    l.offset[i] = at;
    l.bucket_of[i] = static_cast<int>(l.buckets.size());
    at += counts[i];
    if ((at - bucket_start) * static_cast<std::int64_t>(sizeof(float)) >= bucket_bytes) close();
  }
  if (at != bucket_start) {
    l.buckets.push_back({bucket_start, at, ""});
  }
  l.total_floats = l.buckets.empty() ? 0 : l.buckets.back().end;
  for (std::size_t b = 0; b < l.buckets.size(); ++b) {
    l.buckets[b].what = "allreduce of gradient bucket " + std::to_string(b + 1) + " of " + std::to_string(l.buckets.size());
  }
  return l;
}

}  // namespace nnfit::dist
