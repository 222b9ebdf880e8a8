// Fuzz targets for the data file readers in io: each runs the reader the way `nnfit data
// inspect` and the pipeline sources do (from a file where the reader takes a path).
#include <string_view>

#include "fuzz_input.h"
#include "fuzz_targets.h"
#include "nnfit/core/error.h"
#include "nnfit/io/csv.h"
#include "nnfit/io/example.h"
#include "nnfit/io/idx.h"
#include "nnfit/io/image.h"
#include "nnfit/io/npy.h"
#include "nnfit/io/tfrecord.h"

namespace nnfit::fuzz {
namespace {

std::string_view bytes(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Every record of the file, each also decoded as a tf.train.Example as `data inspect` does.
void read_records(const std::string& path, io::Compression compression) {
  io::TfRecordReader reader(path, compression);
  while (auto record = reader.next()) {
    try {
      (void)io::parse_example(*record, path, reader.offset());
    } catch (const DataError&) {  // raw records need not be Examples
    }
  }
}

}  // namespace

std::string fuzz_idx(const std::uint8_t* data, std::size_t size) {
  try {
    (void)io::read_idx(write_file("input.idx", bytes(data, size)));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string fuzz_npy(const std::uint8_t* data, std::size_t size) {
  try {
    (void)io::read_npy(write_file("input.npy", bytes(data, size)));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string fuzz_npz(const std::uint8_t* data, std::size_t size) {
  try {
    (void)io::read_npz(write_file("input.npz", bytes(data, size)));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Schema inference, then the typed read of the columns it found numeric (`data inspect`).
std::string fuzz_csv(const std::uint8_t* data, std::size_t size) {
  try {
    const std::string path = write_file("input.csv", bytes(data, size));
    const io::CsvSchema schema = io::infer_csv_schema(path);
    io::CsvOptions options;
    for (const io::CsvColumnGuess& g : schema.columns) {
      if (!g.dtype) continue;
      options.select_columns.push_back(g.name);
      options.column_dtypes[g.name] = *g.dtype;
    }
    if (!options.select_columns.empty()) (void)io::read_csv(path, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The framing as sniffed (raw or GZIP), then as ZLIB (which has to be asked for).
std::string fuzz_tfrecord(const std::uint8_t* data, std::size_t size) {
  std::string errors;
  const std::string path = write_file("input.tfrecord", bytes(data, size));
  for (io::Compression c : {io::Compression::automatic, io::Compression::zlib}) {
    try {
      read_records(path, c);
    } catch (const Error& e) {
      errors += std::string(errors.empty() ? "" : "\n") + e.what();
    }
  }
  return errors;
}

std::string fuzz_example(const std::uint8_t* data, std::size_t size) {
  try {
    const io::Example example = io::parse_example(bytes(data, size), "<fuzz>", 0);
    (void)io::parse_example(io::serialize_example(example));  // what nnfit writes it reads back
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// As stored, and converted to RGB (the channels a pipeline usually asks for).
std::string fuzz_image(const std::uint8_t* data, std::size_t size) {
  try {
    (void)io::decode_image(data, size, "<fuzz>", 0);
    (void)io::decode_image(data, size, "<fuzz>", 3);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace nnfit::fuzz
