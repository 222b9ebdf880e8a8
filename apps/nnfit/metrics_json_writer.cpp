// --metrics-json writer: ordered JSON, rewritten atomically (io/atomic_file.h) after
// every epoch so a crash mid-run leaves the epochs finished so far.
#include "metrics_json_writer.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "nnfit/core/determinism.h"
#include "commands.h"
#include "nnfit/core/error.h"
#include "nnfit/dist/communicator.h"
#include "nnfit/io/atomic_file.h"

namespace nnfit::cli {
namespace {

std::int64_t peak_rss_bytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace

MetricsJsonWriter::MetricsJsonWriter(std::string path, const Model& model, std::int64_t batch_size,
                                     std::string device_reason)
    : path_(std::move(path)), model_(model), batch_size_(batch_size), device_reason_(std::move(device_reason)) {}

void MetricsJsonWriter::on_train_begin(std::int64_t, std::int64_t steps_per_epoch) {
  steps_per_epoch_ = steps_per_epoch;
  epochs_.clear();
  write();
}

void MetricsJsonWriter::on_epoch_end(std::int64_t epoch, const Logs& logs) {
  epochs_.emplace_back(epoch, logs);
  write();
}

void MetricsJsonWriter::write() const {
  nlohmann::ordered_json out;
  out["version"] = "nnfit " NNFIT_VERSION;
  out["threads"] = model_.num_threads();
  out["deterministic"] = op_determinism();
  // Where the model trains, and why there (--device, fit.device, or the default's finding).
  out["device"] = {{"name", model_.device().type == DeviceType::cpu ? std::string("cpu") : model_.device().to_string()},
                   {"reason", device_reason_}};
  out["batch_size"] = batch_size_;
  out["steps_per_epoch"] = steps_per_epoch_;
  // Data-parallel runs: the ranks (batch_size is the global batch, samples_per_s the job's).
  out["ranks"] = model_.communicator() ? model_.communicator()->size() : 1;
  out["planned_peak_bytes"] = model_.planned_peak_bytes();
  out["peak_memory_bytes"] = model_.memory_stats().peak_bytes;
  out["peak_rss_bytes"] = peak_rss_bytes();
  // A resumed run (--backup-dir) says where it picked up; its epochs continue the numbering.
  out["initial_epoch"] = model_.fit_initial_epoch();
  out["initial_step"] = model_.fit_initial_step();
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
  // The step engine's programs by input shape (Note [Shapes known per batch]).
  const ProgramCacheStats programs = model_.program_cache_stats();
  out["programs"] = {{"planned", programs.programs},  {"input_shapes", programs.input_shapes},
                     {"hits", programs.hits},         {"misses", programs.misses},
                     {"arena_bytes", programs.arena_bytes}, {"evicted", programs.evicted}};
  out["epochs"] = nlohmann::ordered_json::array();
  for (const auto& [index, epoch_logs] : epochs_) {
    // Numbered from 1, as the progress bar shows them (fit passes Keras's 0-based index).
    nlohmann::ordered_json e;
    e["epoch"] = index + 1;
    // Keras's order: loss, metrics, val_loss, val_metrics; timing keys first. (A lambda
    // captures a reference, not the structured binding: C++20 before P1091 / clang 14.)
    const auto& logs = epoch_logs;
    auto add = [&](auto&& wanted) {
      for (const auto& [key, value] : logs) {
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
  io::write_bytes_atomically(path_, out.dump(2) + "\n");
}

}  // namespace nnfit::cli
