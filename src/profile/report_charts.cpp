// The HTML report's charts (report_charts.h). Decisions: epochs are shown from 1, as the
// progress bar counts them (the tfevents step is the 0-based epoch); step parts are
// stacked bottom-up in steps.jsonl's order, each with its own hatch so the bands differ
// without colour; the step-time axis ends at the larger of 4x the median bucket mean and
// 1.1x the 90th percentile, so neither one slow warm-up step (often hundreds of ms while a
// shuffle buffer fills) nor the spikes of a busy machine flatten the typical step into
// the bottom pixels, while a real change of pace (a slower 30% of the run) stays in
// view; what is above the scale is said in words.
#include "report_charts.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "step_buckets.h"
#include "svg_chart.h"

namespace nnfit::profile::report {
namespace {

// Okabe-Ito colours (distinguishable with the common colour-vision deficiencies).
constexpr const char* kTrainColor = "#0072B2";
constexpr const char* kValidationColor = "#D55E00";
struct PartStyle {
  const char* color;
  svg::Hatch hatch;
};
constexpr std::array<PartStyle, kStepParts> kPartStyles = {{{"#D55E00", svg::Hatch::diagonal},
                                                            {"#CC79A7", svg::Hatch::dots},
                                                            {"#0072B2", svg::Hatch::none},
                                                            {"#56B4E9", svg::Hatch::back_diagonal},
                                                            {"#F0E442", svg::Hatch::cross},
                                                            {"#009E73", svg::Hatch::horizontal},
                                                            {"#999999", svg::Hatch::vertical}}};

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string caption(const std::string& text) { return "<p class=\"caption\">" + svg::escape(text) + "</p>"; }

std::string step_span(const StepBucket& b) {
  return b.first_step == b.last_step ? "step " + std::to_string(b.first_step)
                                     : "steps " + std::to_string(b.first_step) + "–" + std::to_string(b.last_step);
}

// A unit for bytes up to `max_bytes`: its name and size.
std::pair<const char*, double> byte_unit(double max_bytes) {
  if (max_bytes >= double(1 << 30)) return {"GiB", double(1 << 30)};
  if (max_bytes >= double(1 << 20)) return {"MiB", double(1 << 20)};
  if (max_bytes >= 1024) return {"KiB", 1024};
  return {"bytes", 1};
}

std::string bucket_caption(const std::vector<StepBucket>& buckets, std::size_t steps) {
  if (buckets.size() == steps) return "Each point is one step (" + std::to_string(steps) + " steps).";
  return "Each point is a bucket of about " + std::to_string((steps + buckets.size() - 1) / buckets.size()) +
         " consecutive steps (" + std::to_string(steps) + " steps in " + std::to_string(buckets.size()) + " buckets).";
}

}  // namespace

TagSeries by_tag(const std::vector<ScalarEvent>& scalars) {
  TagSeries out;
  for (const ScalarEvent& e : scalars) out[e.tag][e.step] = e.value;
  return out;
}

bool is_run_figure(const std::string& tag) {
  static const std::array<const char*, 8> kFigures = {
      "epoch_learning_rate",       "epoch_samples_per_s",     "epoch_train_seconds",       "epoch_input_wait_fraction",
      "epoch_memory_peak_bytes",   "epoch_host_cpu_percent",  "epoch_host_ram_used_bytes", "epoch_gpu"};
  for (const char* f : kFigures) {
    if (tag.rfind(f, 0) == 0) return true;
  }
  return false;
}

std::string missing(const std::string& sentence) {
  std::string out = "<p class=\"missing\">";
  bool code = false;
  for (char ch : svg::escape(sentence)) {
    if (ch == '`') {
      out += code ? "</code>" : "<code>";
      code = !code;
    } else {
      out += ch;
    }
  }
  return out + (code ? "</code></p>" : "</p>");
}

std::string curves_section(const ReportInputs& in) {
  std::string o;
  const std::string dir = in.log_dir;
  if (!in.train_events_found) {
    return missing("No TensorBoard event files in " + dir + "/train, so there are no loss or metric curves. " +
                   "Run `nnfit train CONFIG --logdir " + dir + "` (or fit with a TensorBoard(log_dir) callback): it " +
                   "writes the epoch scalars there.");
  }
  const TagSeries train = by_tag(in.train_scalars), validation = by_tag(in.validation_scalars);
  if (!in.validation_events_found) {
    o += missing("No validation run (no event files in " + dir + "/validation): the curves show training only. " +
                 "Give the config a data.validation section (Keras: validation_data) to see validation curves.");
  }
  // Loss first, then the metrics in name order, from either run.
  std::vector<std::string> tags;
  for (const TagSeries* run : {&train, &validation}) {
    for (const auto& [tag, values] : *run) {
      if (tag.rfind("epoch_", 0) != 0 || is_run_figure(tag)) continue;
      if (std::find(tags.begin(), tags.end(), tag) == tags.end()) tags.push_back(tag);
    }
  }
  std::stable_partition(tags.begin(), tags.end(), [](const std::string& t) { return t == "epoch_loss"; });
  if (tags.empty()) {
    return o + missing("The event files in " + dir + "/train hold no epoch_loss or epoch_<metric> scalars yet: " +
                       "they are written at the end of each epoch.");
  }
  for (const std::string& tag : tags) {
    const std::string name = tag.substr(6);
    svg::Chart c;
    c.id = "curve-" + name;
    c.title = name + " per epoch, train and validation";
    c.x_label = "epoch";
    c.y_label = name;
    c.x_integer = true;
    c.y_from_zero = false;
    c.height = 280;
    struct Run {
      const TagSeries& values;
      const char* label;
      const char* color;
      svg::Dash dash;
      svg::Marker marker;
    };
    for (const Run& run : {Run{train, "train", kTrainColor, svg::Dash::solid, svg::Marker::circle},
                           Run{validation, "validation", kValidationColor, svg::Dash::dashed, svg::Marker::square}}) {
      const auto it = run.values.find(tag);
      if (it == run.values.end()) continue;
      svg::Series s;
      s.name = std::string(run.label) + " " + name;
      s.color = run.color;
      s.dash = run.dash;
      s.marker = run.marker;
      for (const auto& [step, v] : it->second) {
        if (!std::isfinite(v)) continue;  // a diverged epoch (inf) would take the axis with it; the table shows it
        s.x.push_back(static_cast<double>(step + 1));
        s.y.push_back(v);
        s.point_titles.push_back(s.name + ", epoch " + std::to_string(step + 1) + ": " + fmt("%.6g", v));
      }
      c.series.push_back(std::move(s));
    }
    o += "<figure>" + svg::render_chart(c) + "</figure>";
  }
  return o;
}

std::string step_time_section(const ReportInputs& in, std::size_t max_buckets) {
  if (!in.steps_found || in.steps.empty()) {
    return missing(std::string(in.steps_found ? "steps.jsonl in " + in.log_dir + " has no steps yet" : "No steps.jsonl in " + in.log_dir) +
                   ", so there is no step-time breakdown. Run `nnfit train CONFIG --logdir " + in.log_dir +
                   "`: it logs every step's time there (lines are written at each epoch's end).");
  }
  const std::vector<StepBucket> buckets = bucket_steps(in.steps, max_buckets);
  const bool bucketed = buckets.size() < in.steps.size();
  svg::Chart c;
  c.id = "step-time";
  c.title = "Step time over training, split into its parts";
  c.x_label = "step";
  c.x_span_ticks = true;
  c.y_label = "time per step (ms)";
  c.x_integer = true;
  c.height = 360;
  std::vector<double> below(buckets.size(), 0.0);
  for (std::size_t p = 0; p < kStepParts; ++p) {
    svg::Series s;
    s.name = kStepPartNames[p];
    s.color = kPartStyles[p].color;
    s.hatch = kPartStyles[p].hatch;
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      s.x.push_back(static_cast<double>(buckets[b].first_step + buckets[b].last_step) / 2);
      s.y_low.push_back(below[b]);
      below[b] += buckets[b].mean_part_us[p] / 1e3;
      s.y.push_back(below[b]);
    }
    c.series.push_back(std::move(s));
  }
  if (bucketed) {
    // Behind the stacked means, so what shows above them is the spikes.
    svg::Series range;
    range.name = "fastest to slowest step in bucket";
    range.color = "#c8c8c8";
    range.behind = true;
    for (const StepBucket& b : buckets) {
      range.x.push_back(static_cast<double>(b.first_step + b.last_step) / 2);
      range.y_low.push_back(b.total_us.min / 1e3);
      range.y.push_back(b.total_us.max / 1e3);
    }
    c.series.push_back(std::move(range));
  }
  // The scale: see the file comment.
  std::vector<double> means;
  for (const StepBucket& b : buckets) means.push_back(b.total_us.mean / 1e3);
  std::vector<double> sorted = means;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[(sorted.size() - 1) / 2], p90 = sorted[(sorted.size() - 1) * 9 / 10];
  const double top = std::max(4 * median, 1.1 * p90);
  std::string above;
  if (sorted.back() > top && top > 0) {
    c.y_max = top;
    std::size_t count = 0, highest = 0;
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      count += means[b] > top;
      if (means[b] > means[highest]) highest = b;
    }
    above = "Above the scale: " + std::to_string(count) + (bucketed ? " bucket" : " step") + (count == 1 ? "" : "s") +
            ", the highest " + fmt("%.3f", means[highest]) + " ms (" + step_span(buckets[highest]) +
            (bucketed ? ", its mean" : "") + ").";
  }
  std::string o = "<figure>" + svg::render_chart(c) + "</figure>";
  o += caption(bucket_caption(buckets, in.steps.size()) + " The parts' means are stacked bottom-up in the legend's order" +
               (bucketed ? "; the grey band behind them spans each bucket's fastest to slowest step." : ".") +
               (above.empty() ? "" : " " + above));
  return o;
}

std::string memory_section(const ReportInputs& in, std::size_t max_buckets) {
  if (!in.steps_found || in.steps.empty()) {
    return missing("No steps in " + in.log_dir + "/steps.jsonl, so there is no memory over time. Run `nnfit train CONFIG " +
                   "--logdir " + in.log_dir + "`: each step logs the device memory in use.");
  }
  const std::vector<StepBucket> buckets = bucket_steps(in.steps, max_buckets);
  const bool bucketed = buckets.size() < in.steps.size();
  const TagSeries train = by_tag(in.train_scalars);
  const auto peaks = train.find("epoch_memory_peak_bytes");
  double max_bytes = 0;
  for (const StepBucket& b : buckets) max_bytes = std::max(max_bytes, b.memory_in_use_bytes.max);
  if (peaks != train.end()) {
    for (const auto& [step, v] : peaks->second) max_bytes = std::max(max_bytes, v);
  }
  const auto [unit, size] = byte_unit(max_bytes);
  svg::Chart c;
  c.id = "memory";
  c.title = "Device memory in use over training";
  c.x_label = "step";
  c.x_span_ticks = true;
  c.y_label = std::string("memory (") + unit + ")";
  c.x_integer = true;
  svg::Series range, mean, peak;
  range.name = "min–max in bucket";
  range.color = "#9ecae1";
  range.hatch = svg::Hatch::diagonal;
  mean.name = bucketed ? "in use after the step (bucket mean)" : "in use after the step";
  mean.color = kTrainColor;
  for (const StepBucket& b : buckets) {
    const double x = static_cast<double>(b.first_step + b.last_step) / 2;
    range.x.push_back(x);
    range.y_low.push_back(b.memory_in_use_bytes.min / size);
    range.y.push_back(b.memory_in_use_bytes.max / size);
    mean.x.push_back(x);
    mean.y.push_back(b.memory_in_use_bytes.mean / size);
  }
  if (bucketed) c.series.push_back(std::move(range));
  c.series.push_back(std::move(mean));
  std::string note;
  if (peaks == train.end()) {
    note = missing("No epoch_memory_peak_bytes in the train event files, so the epochs' peaks are not drawn: fit logs "
                   "it when the device allocator measures memory (nnfit train --logdir).");
  } else {
    // Epoch e's peak is drawn at its last step when the log splits into whole epochs.
    const std::size_t epochs = peaks->second.size(), n = in.steps.size();
    if (epochs > 0 && n % epochs == 0) {
      peak.name = "peak during the epoch (epoch_memory_peak_bytes)";
      peak.color = kValidationColor;
      peak.dash = svg::Dash::dotted;
      peak.marker = svg::Marker::diamond;
      std::size_t e = 0;
      for (const auto& [step, v] : peaks->second) {
        const std::int64_t last = in.steps[(e + 1) * (n / epochs) - 1].step;
        peak.x.push_back(static_cast<double>(last));
        peak.y.push_back(v / size);
        peak.point_titles.push_back("epoch " + std::to_string(step + 1) + " peak: " + fmt("%.2f ", v / size) + unit);
        ++e;
      }
      c.series.push_back(std::move(peak));
    } else {
      note = missing("epoch_memory_peak_bytes is not drawn: the step log's " + std::to_string(n) + " steps do not split into " +
                     std::to_string(epochs) + " epochs of equal length (a log appended to by more than one fit); the " +
                     "per-epoch values are in the table below.");
    }
  }
  return "<figure>" + svg::render_chart(c) + "</figure>" + caption(bucket_caption(buckets, in.steps.size())) + note;
}

}  // namespace nnfit::profile::report
