// The HTML report's chart sections (html_report.h), each an HTML fragment: a chart, its
// caption, and plain sentences for what is missing. html_report.cpp lays them out.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nnfit/profile/html_report.h"

namespace nnfit::profile::report {

// tag -> step -> value (steps in order).
using TagSeries = std::map<std::string, std::map<std::int64_t, double>>;
TagSeries by_tag(const std::vector<ScalarEvent>& scalars);

// Whether an epoch tag is one of nnfit's own run figures (throughput, input wait, memory,
// learning rate, the monitor's host and GPU figures) rather than the loss or a metric.
bool is_run_figure(const std::string& tag);

// <p class="missing">sentence</p>, escaped; `text` in backquotes becomes <code>text</code>.
std::string missing(const std::string& sentence);

// Loss first, then every metric: one chart each, train and validation.
std::string curves_section(const ReportInputs& in);
// Stacked mean step parts per bucket, with the slowest and fastest step of each bucket.
std::string step_time_section(const ReportInputs& in, std::size_t max_buckets);
// Memory in use per bucket (mean, and min-max when buckets hold several steps), and the
// epochs' peaks when the log splits into whole epochs.
std::string memory_section(const ReportInputs& in, std::size_t max_buckets);

}  // namespace nnfit::profile::report
