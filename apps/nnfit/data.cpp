// `nnfit data inspect PATH [--take N] [--json]`: what a data file holds, as nnfit reads
// it: the format (sniffed from magic bytes, then the name), the record count, the element
// spec and the first records; tf.train.Example features are decoded by name and kind.
// Whole-array formats (NPY, NPZ, IDX, CSV) are read whole; TFRecord files are streamed.
#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "nnfit/core/error.h"
#include "nnfit/data/dataset.h"
#include "nnfit/io/csv.h"
#include "nnfit/io/example.h"
#include "nnfit/io/idx.h"
#include "nnfit/io/image.h"
#include "nnfit/io/npy.h"
#include "nnfit/io/regular_file.h"
#include "nnfit/io/tfrecord.h"

namespace nnfit::cli {
namespace {

using json = nlohmann::json;
constexpr std::int64_t kMaxValues = 16;  // values printed per tensor / feature

struct InspectArgs {
  std::string path;
  std::int64_t take = 3;
  bool json = false;
};

// The format from the magic bytes, then the name. A file that is neither is refused by
// name, never read as a TFRecord and reported as a CRC error or as "0 records": a TFRecord
// is recognized by its first record's length CRC, or by gzip's magic or its extension.
std::string sniff(const std::string& path) {
  if (io::file_kind(path) == io::FileKind::directory) {
    throw DataError(path, -1, "is a directory, not a data file", "give one file; `nnfit data inspect` reads a single file");
  }
  if (io::file_kind(path) != io::FileKind::missing) io::require_regular_file(path, "a data file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path, -1, "cannot open file", "check the path exists and is readable");
  unsigned char m[12] = {};
  in.read(reinterpret_cast<char*>(m), sizeof m);
  const auto got = static_cast<std::size_t>(in.gcount());
  if (got == 0) throw DataError(path, 0, "the file is empty", "an interrupted write or copy? nothing to inspect");
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (std::memcmp(m, "\x93NUMPY", 6) == 0 || ext == ".npy") return "npy";
  if (std::memcmp(m, "PK\x03\x04", 4) == 0 || ext == ".npz") return "npz";
  if (io::sniff_image_format(m, got) != io::ImageFormat::unknown || ext == ".png" || ext == ".jpg" || ext == ".jpeg") {
    return "image";
  }
  if (path.find("idx") != std::string::npos && (m[0] == 0x1f || (m[0] == 0 && m[1] == 0))) return "idx";
  if (ext == ".csv") return "csv";
  const bool record_header = got == sizeof m && io::mask_crc(io::crc32c(m, 8)) ==
                                                   (std::uint32_t{m[8]} | std::uint32_t{m[9]} << 8 |
                                                    std::uint32_t{m[10]} << 16 | std::uint32_t{m[11]} << 24);
  const bool gzip = m[0] == 0x1f && got > 1 && m[1] == 0x8b;
  if (record_header || gzip || ext == ".tfrecord" || ext == ".tfrecords" || ext == ".tfrec") return "tfrecord";
  throw DataError(path, 0, "unknown kind of file: not NPY, NPZ, IDX, CSV, JPEG, PNG or TFRecord by its first bytes or its name",
                  "name CSV files *.csv and IDX files with idx in the name; a ZLIB TFRecord file cannot be inspected");
}

json values(const Tensor& t) {
  json out = json::array();
  const std::int64_t n = std::min(t.numel(), kMaxValues);
  for (std::int64_t i = 0; i < n; ++i) {
    switch (t.dtype()) {
      case DType::f32: out.push_back(t.data<float>()[i]); break;
      case DType::i32: out.push_back(t.data<std::int32_t>()[i]); break;
      case DType::i64: out.push_back(t.data<std::int64_t>()[i]); break;
      case DType::u8: case DType::boolean: out.push_back(t.data<std::uint8_t>()[i]); break;
      case DType::f16: out.push_back(f16_to_float(t.data<std::uint16_t>()[i])); break;
      case DType::bf16: out.push_back(bf16_to_float(t.data<std::uint16_t>()[i])); break;
    }
  }
  return out;
}

json spec_json(const std::string& name, DType dtype, const Shape& shape) {
  return {{"name", name}, {"dtype", std::string(dtype_name(dtype))}, {"shape", shape.dims()}};
}

// Arrays sliced along their first dimension (NPY, NPZ, IDX, CSV).
void describe_arrays(json& out, const std::vector<std::pair<std::string, Tensor>>& arrays, std::int64_t take) {
  out["records"] = arrays.empty() || arrays[0].second.shape().rank() == 0 ? 0 : arrays[0].second.shape()[0];
  std::vector<Tensor> tensors;
  for (const auto& [name, t] : arrays) {
    if (t.shape().rank() == 0) {  // a scalar array: one record
      out["records"] = 1;
      tensors.push_back(t.reshape(Shape{1}));
    } else {
      tensors.push_back(t);
    }
  }
  data::Dataset ds = data::Dataset::from_tensor_slices(tensors);
  for (std::size_t c = 0; c < arrays.size(); ++c) {
    out["element_spec"].push_back(spec_json(arrays[c].first, ds.element_spec()[c].dtype, ds.element_spec()[c].shape));
  }
  for (const data::Element& e : ds.take(take).collect()) {
    json rec = json::object();
    for (std::size_t c = 0; c < e.size(); ++c) rec[arrays[c].first] = values(e[c]);
    out["first"].push_back(rec);
  }
}

json feature_json(const io::Feature& f) {
  json v = json::array();
  if (f.kind == io::Feature::Kind::bytes_list) {
    for (std::size_t i = 0; i < f.bytes_list.size() && i < kMaxValues; ++i) {
      const std::string& b = f.bytes_list[i];
      bool printable = b.size() <= 64;
      for (char ch : b) printable = printable && ch >= 0x20 && ch < 0x7f;
      v.push_back(printable ? b : "<" + std::to_string(b.size()) + " bytes>");
    }
  } else if (f.kind == io::Feature::Kind::float_list) {
    for (std::size_t i = 0; i < f.float_list.size() && i < kMaxValues; ++i) v.push_back(f.float_list[i]);
  } else {
    for (std::size_t i = 0; i < f.int64_list.size() && i < kMaxValues; ++i) v.push_back(f.int64_list[i]);
  }
  return v;
}

void describe_tfrecord(json& out, const std::string& path, std::int64_t take) {
  io::TfRecordReader reader(path);
  std::int64_t records = 0;
  bool examples = true;
  while (auto r = reader.next()) {
    if (records < take) {
      json rec = json::object();
      try {
        const io::Example ex = io::parse_example(*r, path, reader.offset());
        for (const auto& [name, f] : ex) rec[name] = feature_json(f);
        if (records == 0) {
          for (const auto& [name, f] : ex) {
            const std::size_t n = f.kind == io::Feature::Kind::bytes_list   ? f.bytes_list.size()
                                  : f.kind == io::Feature::Kind::float_list ? f.float_list.size()
                                                                            : f.int64_list.size();
            out["element_spec"].push_back({{"name", name}, {"kind", std::string(io::kind_name(f.kind))}, {"length", n}});
          }
        }
      } catch (const DataError&) {
        examples = false;
        rec = {{"bytes", r->size()}};
      }
      out["first"].push_back(rec);
    }
    ++records;
  }
  out["format"] = examples && records > 0 ? "tfrecord (tf.train.Example)" : "tfrecord";
  out["records"] = records;
}

// Names and values come from the file and need not be UTF-8 (a Latin-1 CSV header, bytes
// in a feature's name): JSON output shows such bytes as U+FFFD instead of failing.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void print_text(const json& out) {
  std::printf("path:         %s\n", out["path"].get<std::string>().c_str());
  std::printf("format:       %s\n", out["format"].get<std::string>().c_str());
  std::printf("records:      %lld\n", static_cast<long long>(out["records"].get<std::int64_t>()));
  std::printf("element_spec:\n");
  for (const json& c : out["element_spec"]) std::printf("  %s\n", dump(c).c_str());
  std::printf("first:\n");
  for (const json& r : out["first"]) std::printf("  %s\n", dump(r).c_str());
  if (out.contains("text_columns")) {
    std::printf("text columns (not loadable: nnfit has no string dtype):\n");
    for (const json& c : out["text_columns"]) std::printf("  %s\n", dump(c).c_str());
  }
}

int run_inspect(const InspectArgs& args) {
  NNFIT_CHECK(args.take >= 0, InvalidArgument, "--take must be >= 0, got ", args.take);
  json out = {{"path", args.path}, {"element_spec", json::array()}, {"first", json::array()}};
  const std::string format = sniff(args.path);
  out["format"] = format;
  if (format == "npy") {
    describe_arrays(out, {{"array", io::read_npy(args.path)}}, args.take);
  } else if (format == "npz") {
    describe_arrays(out, io::read_npz(args.path), args.take);
  } else if (format == "idx") {
    describe_arrays(out, {{"array", io::read_idx(args.path)}}, args.take);
  } else if (format == "csv") {
    // Column types inferred from the values (the first 1000 rows); text columns cannot be
    // loaded (no string dtype) and are listed apart.
    io::CsvOptions o;
    json text = json::array();
    const io::CsvSchema schema = io::infer_csv_schema(args.path);
    for (const io::CsvColumnGuess& g : schema.columns) {
      if (g.dtype) {
        o.select_columns.push_back(g.name);
        o.column_dtypes[g.name] = *g.dtype;
      } else {
        text.push_back({{"name", g.name}, {"example", g.example}});
      }
    }
    std::vector<std::pair<std::string, Tensor>> cols;
    if (!o.select_columns.empty()) {
      io::CsvTable t = io::read_csv(args.path, o);
      for (std::size_t c = 0; c < t.names.size(); ++c) cols.emplace_back(t.names[c], t.columns[c]);
    }
    if (!cols.empty()) describe_arrays(out, cols, args.take);
    out["records"] = schema.rows;
    if (!text.empty()) out["text_columns"] = text;
  } else if (format == "image") {
    const Tensor img = io::read_image(args.path);
    out["records"] = 1;
    out["element_spec"].push_back(spec_json("image", img.dtype(), img.shape()));
  } else {
    describe_tfrecord(out, args.path, args.take);
  }
  if (args.json) {
    std::printf("%s\n", out.dump(2, ' ', false, json::error_handler_t::replace).c_str());
  } else {
    print_text(out);
  }
  return 0;
}

}  // namespace

Subcommand add_data_command(CLI::App& parent) {
  CLI::App* data = parent.add_subcommand("data", "Inspect data files and input pipelines");
  data->require_subcommand(1);
  CLI::App* inspect = data->add_subcommand(
      "inspect", "Print a data file's format, record count, element spec and first records "
                 "(NPY, NPZ, IDX, CSV, TFRecord with tf.train.Example, JPEG/PNG)");
  auto args = std::make_shared<InspectArgs>();
  inspect->add_option("path", args->path, "the file")->required();
  inspect->add_option("--take", args->take, "how many records to print (default 3)");
  inspect->add_flag("--json", args->json, "print {path, format, records, element_spec, first} as JSON");
  Subcommand bench = add_data_bench_command(*data);
  return {data, [args, inspect, bench] {
            if (inspect->parsed()) return run_inspect(*args);
            return bench.app->parsed() ? bench.run() : 2;
          }};
}

}  // namespace nnfit::cli
