// --metrics-json writer: ordered JSON, rewritten atomically (PATH.tmp + rename) after
// every epoch so a crash mid-run leaves the epochs finished so far.
#include "metrics_json_writer.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "nnfit/core/error.h"

namespace nnfit::cli {
namespace {

std::int64_t peak_rss_bytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace

MetricsJsonWriter::MetricsJsonWriter(std::string path, const Model& model, std::int64_t batch_size)
    : path_(std::move(path)), model_(model), batch_size_(batch_size) {}

void MetricsJsonWriter::on_train_begin(std::int64_t, std::int64_t) {
  epochs_.clear();
  write();
}

void MetricsJsonWriter::on_epoch_end(std::int64_t, const Logs& logs) {
  epochs_.push_back(logs);
  write();
}

void MetricsJsonWriter::write() const {
  nlohmann::ordered_json out;
  out["version"] = "nnfit " NNFIT_VERSION;
  out["threads"] = model_.num_threads();
  out["batch_size"] = batch_size_;
  out["planned_peak_bytes"] = model_.planned_peak_bytes();
  out["peak_memory_bytes"] = model_.memory_stats().peak_bytes;
  out["peak_rss_bytes"] = peak_rss_bytes();
  const MemoryStats mem = model_.memory_stats();
  nlohmann::ordered_json device;
  device["in_use_bytes"] = mem.in_use_bytes;
  device["peak_bytes"] = mem.peak_bytes;
  device["reserved_bytes"] = mem.reserved_bytes;
  device["allocations"] = mem.allocations;
  device["frees"] = mem.frees;
  device["largest_free_block_bytes"] = mem.largest_free_block_bytes;
  device["fragmentation"] = mem.fragmentation;
  device["ooms"] = mem.ooms;
  out["memory"][model_.device().to_string()] = std::move(device);
  out["epochs"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < epochs_.size(); ++i) {
    // Epochs are counted here (from 1) rather than taken from the callback argument, so
    // the file does not depend on whether fit() counts from 0 as Keras does.
    nlohmann::ordered_json e;
    e["epoch"] = i + 1;
    // Keras's order: loss, metrics, val_loss, val_metrics; timing keys first.
    auto add = [&](auto&& wanted) {
      for (const auto& [key, value] : epochs_[i]) {
        if (!e.contains(key) && wanted(key)) e[key] = value;
      }
    };
    for (const char* first : {"train_seconds", "samples_per_s", "loss"}) {
      add([first](const std::string& k) { return k == first; });
    }
    add([](const std::string& k) { return k.rfind("val_", 0) != 0; });
    add([](const std::string& k) { return k == "val_loss"; });
    add([](const std::string&) { return true; });
    out["epochs"].push_back(std::move(e));
  }
  const std::string tmp = path_ + ".tmp";
  const std::string text = out.dump(2) + "\n";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw DataError(tmp, -1, std::string("cannot write --metrics-json: ") + std::strerror(errno));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) throw DataError(tmp, -1, "cannot write --metrics-json (disk full?)");
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    throw DataError(path_, -1, std::string("cannot rename ") + tmp + " onto it: " + std::strerror(errno));
  }
}

}  // namespace nnfit::cli
