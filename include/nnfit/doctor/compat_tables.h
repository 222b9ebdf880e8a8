// The compatibility data the doctor's rules read: CSV tables in data/compat/ with a
// source for every row (copied from the project's collected facts, see
// docs/design/doctor.md). Cells are kept as the sources print them; the accessors
// below extract versions with Version::parse and skip rows whose value is unknown.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "nnfit/doctor/version.h"

namespace nnfit::doctor {

// One CSV file: header and rows of cells (RFC 4180 quoting).
struct CsvTable {
  std::string file;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // Index of a header column; throws DataError when the table lacks it.
  std::size_t column(const std::string& name) const;
  const std::string& cell(std::size_t row, const std::string& name) const;
};

// Parses CSV text; throws DataError(file, line) on an unterminated quote or a row whose
// cell count differs from the header's.
CsvTable parse_csv(const std::string& text, const std::string& file);

struct CompatTables {
  CsvTable cuda_driver, cudnn_cuda, gpu_arch, gpu_models, tensorflow_gpu, pytorch_cuda, pytorch_archs, jax_cuda;

  std::vector<const CsvTable*> all() const;
  // Minimum Linux driver for a CUDA major.minor (its GA release); nullopt if unknown.
  std::optional<Version> min_driver(const Version& cuda) const;
  // Minor-version-compatibility minimum for a CUDA major (11, 12, 13).
  std::optional<Version> minor_compat_min(int cuda_major) const;
  // Newest CUDA major.minor a driver supports natively, per the toolkit table.
  std::optional<Version> newest_cuda_for_driver(const Version& driver) const;
  // The newest CUDA release the toolkit table knows.
  Version newest_known_cuda() const;
  // Compute capability for a GPU model name ("NVIDIA GeForce RTX 3090" -> "8.6").
  std::optional<std::string> compute_capability_of(const std::string& gpu_name) const;
  // CUDA range that can build for a compute capability; last empty = still supported.
  struct CudaRange {
    std::optional<Version> first, last;
    std::string architecture;
  };
  std::optional<CudaRange> cuda_range_for(const std::string& compute_capability) const;
  // Row index in tensorflow_gpu / pytorch_cuda for a release, matching major.minor.
  std::optional<std::size_t> tensorflow_row(const Version& tf) const;
  std::optional<std::size_t> pytorch_row(const Version& torch) const;
  // The GPU code the wheel variant `cuda` (12.8 -> cu128) of torch release `torch` ships,
  // per pytorch_archs.csv: "sm_75", ..., and "compute_120" when it carries PTX; empty
  // when the table has no row for the pair.
  std::vector<std::string> torch_archs(const Version& torch, const Version& cuda) const;
  // The CUDA versions of the variants pytorch_archs.csv lists for a torch release.
  std::vector<Version> torch_arch_variants(const Version& torch) const;
  // The jax_cuda.csv row whose [jax_min, jax_below) holds `jax` (open-ended when
  // jax_below is empty); nullopt when none.
  std::optional<std::size_t> jax_row(const Version& jax) const;
  // From that row: the CUDA version the CUDA-`major` wheels were built with (or the
  // minimum they need where the source gives only that), and the lowest compute
  // capability they are built for. nullopt when the row does not say.
  std::optional<Version> jax_cuda_build(std::size_t row, int major) const;
  std::optional<Version> jax_min_compute_capability(std::size_t row, int major) const;
  // The newest cuDNN version the cudnn table knows.
  Version newest_known_cudnn() const;
  // The CUDA majors cuDNN major.minor of `cudnn` was released for (cudnn_cuda.csv rows
  // whose cudnn_version names it or a range holding it, with a retrieved CUDA list);
  // empty when no such row.
  std::vector<int> cudnn_cuda_majors(const Version& cudnn) const;
  // The newest cuDNN release the table lists for CUDA major `cuda_major`, as its cell says
  // ("9.17.0 (for CUDA 13.x)"); empty when none.
  std::string newest_cudnn_for_cuda(int cuda_major) const;
};

// Loads every table from `dir`; throws DataError naming the file when one is missing
// or malformed.
CompatTables load_compat_tables(const std::string& dir);
// Where the tables are when --data-dir is not given (docs/design/doctor.md, "Where the
// binary finds them"): find_compat_dir() for the running executable (/proc/self/exe).
std::string default_compat_dir();
// The first directory holding cuda_driver.csv of: <dir of executable>/../share/nnfit/compat
// (an installed binary, `cmake --install`), then the source tree's data/compat compiled
// in. When neither holds it, the compiled-in one, so the error names a real path.
std::string find_compat_dir(const std::string& executable);
// The compiled-in source-tree directory.
std::string source_compat_dir();

}  // namespace nnfit::doctor
