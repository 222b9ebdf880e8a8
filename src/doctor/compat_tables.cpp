// CSV parsing and the lookups the rules need over the compatibility tables.
#include "nnfit/doctor/compat_tables.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nnfit/core/error.h"
#include "pattern.h"

#ifndef NNFIT_COMPAT_DIR
#define NNFIT_COMPAT_DIR "data/compat"
#endif

namespace nnfit::doctor {
namespace {

std::vector<std::string> split_cell(const std::string& cell, char sep) {
  std::vector<std::string> out;
  std::string item;
  for (char c : cell + sep) {
    if (c != sep) {
      if (c != ' ') item += c;
    } else if (!item.empty()) {
      out.push_back(item);
      item.clear();
    }
  }
  return out;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::size_t CsvTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return i;
  }
  throw DataError(file, 0, "table has no column '" + name + "'", "restore the file from the repository");
}

const std::string& CsvTable::cell(std::size_t row, const std::string& name) const {
  return rows.at(row).at(column(name));
}

CsvTable parse_csv(const std::string& text, const std::string& file) {
  CsvTable table;
  table.file = file;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false, any = false;
  std::int64_t line = 1;
  auto end_row = [&] {
    row.push_back(cell);
    cell.clear();
    if (table.header.empty()) {
      table.header = row;
    } else if (!(row.size() == 1 && row[0].empty())) {
      if (row.size() != table.header.size()) {
        throw DataError(file, line, "row has " + std::to_string(row.size()) + " cells, header has " +
                                        std::to_string(table.header.size()));
      }
      table.rows.push_back(row);
    }
    row.clear();
    any = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        cell += c;
      }
      continue;
    }
    any = true;
    if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(cell);
      cell.clear();
    } else if (c == '\n') {
      end_row();
      ++line;
    } else if (c != '\r') {
      cell += c;
    }
  }
  if (quoted) throw DataError(file, line, "unterminated quoted cell");
  if (any || !cell.empty() || !row.empty()) end_row();
  if (table.header.empty()) throw DataError(file, 0, "empty table");
  return table;
}

std::vector<const CsvTable*> CompatTables::all() const {
  return {&cuda_driver, &cudnn_cuda, &gpu_arch, &gpu_models, &tensorflow_gpu, &pytorch_cuda, &pytorch_archs, &jax_cuda};
}

std::optional<Version> CompatTables::min_driver(const Version& cuda) const {
  std::optional<Version> best;
  for (std::size_t r = 0; r < cuda_driver.rows.size(); ++r) {
    if (cuda_driver.cell(r, "kind") != "toolkit_driver") continue;
    auto v = Version::parse(cuda_driver.cell(r, "cuda_version"));
    auto d = Version::parse(cuda_driver.cell(r, "min_driver_linux"));
    if (!v || !d || v->major() != cuda.major() || v->minor() != cuda.minor()) continue;
    if (!best || *d < *best) best = d;
  }
  return best;
}

std::optional<Version> CompatTables::minor_compat_min(int cuda_major) const {
  for (std::size_t r = 0; r < cuda_driver.rows.size(); ++r) {
    if (cuda_driver.cell(r, "kind") == "toolkit_driver") continue;
    if (cuda_driver.cell(r, "cuda_version") == std::to_string(cuda_major) + ".x") {
      return Version::parse(cuda_driver.cell(r, "min_driver_linux"));
    }
  }
  return std::nullopt;
}

std::optional<Version> CompatTables::newest_cuda_for_driver(const Version& driver) const {
  std::optional<Version> best;
  for (std::size_t r = 0; r < cuda_driver.rows.size(); ++r) {
    if (cuda_driver.cell(r, "kind") != "toolkit_driver") continue;
    auto v = Version::parse(cuda_driver.cell(r, "cuda_version"));
    auto d = Version::parse(cuda_driver.cell(r, "min_driver_linux"));
    if (!v || !d || driver < *d) continue;
    Version mm({v->major(), v->minor()});
    if (!best || *best < mm) best = mm;
  }
  return best;
}

Version CompatTables::newest_known_cuda() const {
  Version best;
  for (std::size_t r = 0; r < cuda_driver.rows.size(); ++r) {
    auto v = Version::parse(cuda_driver.cell(r, "cuda_version"));
    if (v && cuda_driver.cell(r, "kind") == "toolkit_driver" && best < *v) best = *v;
  }
  return best;
}

std::optional<std::string> CompatTables::compute_capability_of(const std::string& gpu_name) const {
  std::string name = upper(gpu_name);
  for (std::size_t r = 0; r < gpu_models.rows.size(); ++r) {
    std::string pattern = upper(gpu_models.cell(r, "name_contains"));
    std::size_t at = name.find(pattern);
    // A pattern must end on a word or model-number boundary: "A10" must not match "A100".
    while (at != std::string::npos) {
      std::size_t after = at + pattern.size();
      bool digit_pattern_end = std::isdigit(static_cast<unsigned char>(pattern.back()));
      bool boundary = after >= name.size() || !std::isalnum(static_cast<unsigned char>(name[after])) ||
                      (digit_pattern_end && pattern.size() >= 5 && std::isdigit(static_cast<unsigned char>(name[after])));
      if (boundary) return gpu_models.cell(r, "compute_capability");
      at = name.find(pattern, at + 1);
    }
  }
  return std::nullopt;
}

std::optional<CompatTables::CudaRange> CompatTables::cuda_range_for(const std::string& cc) const {
  auto want = Version::parse(cc);
  if (!want) return std::nullopt;
  for (std::size_t r = 0; r < gpu_arch.rows.size(); ++r) {
    auto v = Version::parse(gpu_arch.cell(r, "compute_capability"));
    if (!v || !(*v == *want)) continue;
    CudaRange range;
    range.architecture = gpu_arch.cell(r, "architecture");
    range.first = Version::parse(gpu_arch.cell(r, "first_cuda"));
    const std::string& last = gpu_arch.cell(r, "last_cuda");
    if (last.find("current") == std::string::npos) range.last = Version::parse(last);
    return range;
  }
  return std::nullopt;
}

std::optional<std::size_t> CompatTables::tensorflow_row(const Version& tf) const {
  for (std::size_t r = 0; r < tensorflow_gpu.rows.size(); ++r) {
    auto v = Version::parse(tensorflow_gpu.cell(r, "tf_version"));
    if (v && v->major() == tf.major() && v->minor() == tf.minor()) return r;
  }
  return std::nullopt;
}

std::optional<std::size_t> CompatTables::pytorch_row(const Version& torch) const {
  for (std::size_t r = 0; r < pytorch_cuda.rows.size(); ++r) {
    auto v = Version::parse(pytorch_cuda.cell(r, "torch_version"));
    if (v && v->major() == torch.major() && v->minor() == torch.minor()) return r;
  }
  return std::nullopt;
}

Version CompatTables::newest_known_cudnn() const {
  Version best;
  for (std::size_t r = 0; r < cudnn_cuda.rows.size(); ++r) {
    auto v = Version::parse(cudnn_cuda.cell(r, "cudnn_version"));
    if (v && best < *v) best = *v;
  }
  return best;
}

namespace {

// The text of a cell outside parentheses: "9.17.0 (for CUDA 13.x)" -> "9.17.0 ",
// "12.x (12.0-12.4); 11.8 (+11.x ...)" -> "12.x ; 11.8 ".
std::string outside_parens(const std::string& cell) {
  std::string out;
  int depth = 0;
  for (char c : cell) {
    if (c == '(') ++depth;
    else if (c == ')') depth = depth > 0 ? depth - 1 : 0;
    else if (depth == 0) out += c;
  }
  return out;
}

// Does a cudnn_version cell ("9.5.0 / 9.5.1", "9.11.0 - 9.16.x", "8.9.0-8.9.4", "8.8.x")
// name the major.minor of `v`? Releases are matched by major.minor: patch releases of one
// cuDNN minor ship for the same CUDA majors.
bool cudnn_cell_covers(const std::string& cell, const Version& v) {
  Version want({v.major(), v.minor()});
  static const Pattern kRange("([0-9]+)\\.([0-9]+)[.0-9x]*[[:space:]]*-[[:space:]]*([0-9]+)\\.([0-9]+)"),
      kOne("([0-9]+)\\.([0-9]+)");
  std::string rest = outside_parens(cell);
  while (auto m = kRange.search(rest)) {
    Version lo({matched_int((*m)[1]), matched_int((*m)[2])}), hi({matched_int((*m)[3]), matched_int((*m)[4])});
    if (!(want < lo) && !(hi < want)) return true;
    rest = rest.substr(0, m->begin()) + " " + rest.substr(m->end());
  }
  for (const PatternMatch& m : kOne.find_all(rest)) {
    if (Version({matched_int(m[1]), matched_int(m[2])}) == want) return true;
  }
  return false;
}

std::vector<int> cuda_majors_in(const std::string& cell) {
  static const Pattern kCuda("([0-9]+)\\.([0-9]+|x)");
  std::vector<int> out;
  for (const PatternMatch& m : kCuda.find_all(outside_parens(cell))) {
    int major = matched_int(m[1]);
    if (major >= 7 && std::find(out.begin(), out.end(), major) == out.end()) out.push_back(major);
  }
  return out;
}

}  // namespace

std::vector<int> CompatTables::cudnn_cuda_majors(const Version& cudnn) const {
  std::vector<int> out;
  for (std::size_t r = 0; r < cudnn_cuda.rows.size(); ++r) {
    if (!cudnn_cell_covers(cudnn_cuda.cell(r, "cudnn_version"), cudnn)) continue;
    for (int major : cuda_majors_in(cudnn_cuda.cell(r, "cuda_versions_supported"))) {
      if (std::find(out.begin(), out.end(), major) == out.end()) out.push_back(major);
    }
  }
  std::sort(out.rbegin(), out.rend());
  return out;
}

std::string CompatTables::newest_cudnn_for_cuda(int cuda_major) const {
  std::string best_cell;
  std::optional<Version> best;
  for (std::size_t r = 0; r < cudnn_cuda.rows.size(); ++r) {
    auto majors = cuda_majors_in(cudnn_cuda.cell(r, "cuda_versions_supported"));
    if (std::find(majors.begin(), majors.end(), cuda_major) == majors.end()) continue;
    auto v = Version::parse(cudnn_cuda.cell(r, "cudnn_version"));
    if (v && (!best || *best < *v)) {
      best = v;
      best_cell = cudnn_cuda.cell(r, "cudnn_version");
    }
  }
  return best_cell;
}

namespace {

Version major_minor(const Version& v) { return Version({v.major(), v.minor()}); }

// "13:13.0;12:12.3" -> the version after "<major>:".
std::optional<Version> by_major(const std::string& cell, int major) {
  for (const auto& item : split_cell(cell, ';')) {
    std::size_t colon = item.find(':');
    if (colon != std::string::npos && item.substr(0, colon) == std::to_string(major)) {
      return Version::parse(item.substr(colon + 1));
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> CompatTables::torch_archs(const Version& torch, const Version& cuda) const {
  std::string variant = "cu" + std::to_string(cuda.major()) + std::to_string(cuda.minor());
  Version want = major_minor(torch);
  for (std::size_t r = 0; r < pytorch_archs.rows.size(); ++r) {
    auto lo = Version::parse(pytorch_archs.cell(r, "torch_min")), hi = Version::parse(pytorch_archs.cell(r, "torch_max"));
    if (!lo || !hi || want < *lo || *hi < want || pytorch_archs.cell(r, "cuda_variant") != variant) continue;
    std::vector<std::string> out = split_cell(pytorch_archs.cell(r, "archs"), ';');
    if (!pytorch_archs.cell(r, "ptx").empty()) out.push_back(pytorch_archs.cell(r, "ptx"));
    return out;
  }
  return {};
}

std::vector<Version> CompatTables::torch_arch_variants(const Version& torch) const {
  std::vector<Version> out;
  Version want = major_minor(torch);
  for (std::size_t r = 0; r < pytorch_archs.rows.size(); ++r) {
    auto lo = Version::parse(pytorch_archs.cell(r, "torch_min")), hi = Version::parse(pytorch_archs.cell(r, "torch_max"));
    const std::string& tag = pytorch_archs.cell(r, "cuda_variant");  // "cu128"
    if (!lo || !hi || want < *lo || *hi < want || tag.size() < 5) continue;
    out.push_back(Version({std::stoi(tag.substr(2, 2)), std::stoi(tag.substr(4))}));
  }
  return out;
}

std::optional<std::size_t> CompatTables::jax_row(const Version& jax) const {
  for (std::size_t r = 0; r < jax_cuda.rows.size(); ++r) {
    auto lo = Version::parse(jax_cuda.cell(r, "jax_min"));
    auto below = Version::parse(jax_cuda.cell(r, "jax_below"));
    if (lo && !(jax < *lo) && (!below || jax < *below)) return r;
  }
  return std::nullopt;
}

std::optional<Version> CompatTables::jax_cuda_build(std::size_t row, int major) const {
  return by_major(jax_cuda.cell(row, "cuda_builds"), major);
}

std::optional<Version> CompatTables::jax_min_compute_capability(std::size_t row, int major) const {
  return by_major(jax_cuda.cell(row, "min_cc"), major);
}

CompatTables load_compat_tables(const std::string& dir) {
  auto load = [&](const std::string& name) {
    std::string path = dir + "/" + name;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      throw DataError(path, 0, "compatibility table not found",
                      "pass --data-dir DIR pointing at nnfit's data/compat folder");
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_csv(ss.str(), path);
  };
  CompatTables t;
  t.cuda_driver = load("cuda_driver.csv");
  t.cudnn_cuda = load("cudnn_cuda.csv");
  t.gpu_arch = load("gpu_arch.csv");
  t.gpu_models = load("gpu_models.csv");
  t.tensorflow_gpu = load("tensorflow_gpu.csv");
  t.pytorch_cuda = load("pytorch_cuda.csv");
  t.pytorch_archs = load("pytorch_archs.csv");
  t.jax_cuda = load("jax_cuda.csv");
  // Touch the columns the rules use, so a renamed column fails at load, not mid-report.
  for (const char* c : {"cuda_version", "min_driver_linux", "kind", "source_url"}) t.cuda_driver.column(c);
  for (const char* c : {"compute_capability", "first_cuda", "last_cuda", "architecture"}) t.gpu_arch.column(c);
  for (const char* c : {"name_contains", "compute_capability"}) t.gpu_models.column(c);
  for (const char* c : {"tf_version", "python_min", "python_max", "cuda", "cudnn", "pip_and_cuda_extra"}) {
    t.tensorflow_gpu.column(c);
  }
  for (const char* c : {"torch_version", "python_versions", "cuda_versions"}) t.pytorch_cuda.column(c);
  for (const char* c : {"cudnn_version", "cuda_versions_supported"}) t.cudnn_cuda.column(c);
  for (const char* c : {"torch_min", "torch_max", "cuda_variant", "archs", "ptx"}) t.pytorch_archs.column(c);
  for (const char* c : {"jax_min", "jax_below", "cuda_builds", "min_cc"}) t.jax_cuda.column(c);
  return t;
}

std::string source_compat_dir() { return NNFIT_COMPAT_DIR; }

std::string find_compat_dir(const std::string& executable) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // Relative to the binary, as CMake's GNUInstallDirs lays out an install: bin/ and share/.
  fs::path installed = fs::path(executable).parent_path() / ".." / "share" / "nnfit" / "compat";
  if (!executable.empty() && fs::is_regular_file(installed / "cuda_driver.csv", ec)) {
    return installed.lexically_normal().string();
  }
  return source_compat_dir();
}

std::string default_compat_dir() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return find_compat_dir(ec ? std::string() : exe.string());
}

}  // namespace nnfit::doctor
