// `nnfit profile LOGDIR --html FILE`: one self-contained HTML page (inline CSS and static
// SVG, no script, nothing fetched from the network) with the loss and metric curves per
// epoch (train and validation, from the tfevents files), the step-time breakdown over
// steps and memory in use (from steps.jsonl, downsampled to a fixed number of buckets so
// the page size does not grow with the run), and `nnfit profile`'s verdict with its
// evidence, which the caller computes (the analysis lives in one place, the CLI).
// A part whose input is missing is a sentence saying what is missing and how to get it.
// Page content: docs/outputs.md "HTML report".
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nnfit/profile/event_file_reader.h"
#include "nnfit/profile/step_log.h"

namespace nnfit::profile {

// What `nnfit profile` concluded: the fields of its --json object (docs/cli.md) that the
// page shows, under the same names.
struct ReportVerdict {
  struct Part {
    std::string name;  // "input_wait", "h2d", ... as in `fractions`
    double mean_us = 0, fraction = 0;
  };
  struct Op {
    std::string name, op, phase;
    double us_per_step = 0, share_of_kernels = 0;
    std::optional<double> gflops_per_s, fraction_of_peak;  // ops without FLOPs: none
    std::optional<double> bytes_per_step;                  // none: ops.json without bytes
    std::optional<double> gbps, fraction_of_bandwidth;     // ops without bytes: none; the fraction also without a bandwidth
  };
  struct Stage {
    std::string name;
    double own_seconds = 0, own_us_per_element = 0;
    std::int64_t elements = 0;
  };
  std::string verdict;                // "input-bound", "compute-bound", ...
  std::vector<std::string> evidence;  // the lines printed under the verdict
  std::int64_t steps = 0, steps_used = 0;
  double mean_step_us = 0;
  std::int64_t memory_in_use_bytes_max = 0;
  std::vector<Part> breakdown;
  std::vector<Op> heaviest_ops;
  std::optional<double> peak_gflops_per_s;
  std::string peak_source;
  std::optional<double> peak_gbps;  // the memory bandwidth, GB/s
  std::string peak_gbps_source;
  std::vector<Stage> pipeline_stages;  // input-bound with pipeline.json
  std::string slowest_stage;           // its name, or empty
};

// A log directory as the page draws it. Each part may be missing; the *_found flags say
// whether its file existed (an existing file with no scalars or steps is not missing).
struct ReportInputs {
  std::string log_dir;
  bool train_events_found = false, validation_events_found = false;
  std::vector<ScalarEvent> train_scalars, validation_scalars;  // one per (tag, step): the last written
  bool steps_found = false;
  std::vector<StepRecord> steps;
  std::optional<ReportVerdict> verdict;  // none: no steps to judge
};

// Reads LOG_DIR/train/ and LOG_DIR/validation/ event files (every file whose name holds
// ".tfevents.", in name order, i.e. in time order; a later value of the same tag and step
// replaces an earlier one). Steps and verdict are left to the caller, who has read
// steps.jsonl already. throws: DataError from read_event_file for a corrupt event file.
ReportInputs load_report_events(const std::string& log_dir);

struct HtmlReportOptions {
  std::size_t max_buckets = 600;  // step-chart points at most (step_buckets.h)
  std::string generator;          // shown in the footer, e.g. "nnfit 0.1.0"
  std::string generated_at;       // shown in the footer; empty: not shown
};

// The page. Every text taken from the inputs (log dir, tags, op and stage names,
// evidence) is HTML-escaped.
std::string render_html_report(const ReportInputs& inputs, const HtmlReportOptions& options = {});

// Writes `html` to `path` through `path`.tmp and a rename, so a reader never sees half a
// page. throws: DataError(path, -1, ...) naming the OS error when it cannot be written.
void write_html_report(const std::string& path, const std::string& html);

}  // namespace nnfit::profile
