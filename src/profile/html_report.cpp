// The HTML report page (html_report.h): reads the event files, lays out the verdict, the
// charts (report_charts.cpp) and a table of every epoch scalar, and writes the page
// atomically. The page carries its CSS inline and no script, so it renders the same from a
// file, an e-mail attachment or a CI artifact viewer with scripting off.
#include "nnfit/profile/html_report.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "nnfit/core/error.h"
#include "report_charts.h"
#include "svg_chart.h"

namespace nnfit::profile {
namespace {

namespace fs = std::filesystem;
using svg::escape;

constexpr const char* kCss = R"(
body{font-family:system-ui,"DejaVu Sans","Liberation Sans",Arial,sans-serif;color:#222;background:#fff;margin:0 auto;
max-width:1000px;padding:16px 20px 40px;line-height:1.45}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin:1.6em 0 .4em;border-bottom:1px solid #ddd;padding-bottom:.2em}
code{font-family:"DejaVu Sans Mono",monospace;font-size:.92em;background:#f3f3f3;padding:0 .25em;border-radius:3px}
figure{margin:.6em 0}svg.chart{display:block;max-width:100%;height:auto;font-family:inherit}
.verdict{font-size:1.3em;margin:.3em 0}.verdict strong{padding:.05em .4em;border:2px solid #222;border-radius:4px}
.evidence li{margin:.15em 0}.missing{background:#fff7e0;border-left:4px solid #e0a800;padding:.4em .7em;margin:.6em 0}
.caption{color:#555;font-size:.9em;margin:.2em 0 .8em}.meta{color:#555;margin:.2em 0}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}th,td{padding:.2em .7em;text-align:right;border-bottom:1px solid #e6e6e6}
th{background:#f5f5f5}td.name,th.name{text-align:left}.bar{display:inline-block;height:.7em;background:#0072B2;vertical-align:middle}
.scroll{overflow-x:auto}footer{margin-top:2.5em;color:#666;font-size:.85em}
)";

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string pct(double fraction) { return fmt("%.1f%%", 100.0 * fraction); }

// Event files of one run in name order (the zero-padded time in the name makes it time order).
std::vector<fs::path> event_files(const fs::path& run_dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) return files;
  for (const auto& entry : fs::directory_iterator(run_dir, ec)) {
    if (entry.is_regular_file(ec) && entry.path().filename().string().find(".tfevents.") != std::string::npos) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Every scalar of a run, one per (tag, step): the last written, in (tag, step) order.
std::vector<ScalarEvent> read_run(const std::vector<fs::path>& files) {
  std::map<std::pair<std::string, std::int64_t>, ScalarEvent> latest;
  for (const fs::path& f : files) {
    for (ScalarEvent& e : read_event_file(f.string()).scalars) {
      auto key = std::make_pair(e.tag, e.step);
      latest[key] = std::move(e);
    }
  }
  std::vector<ScalarEvent> out;
  out.reserve(latest.size());
  for (auto& [key, e] : latest) out.push_back(std::move(e));
  return out;
}

std::string verdict_section(const ReportInputs& in) {
  if (!in.verdict) {
    return report::missing("No verdict: it is judged from the step log, and " + in.log_dir + "/steps.jsonl " +
                           (in.steps_found ? "has no steps yet." : "does not exist.") + " Run `nnfit train CONFIG --logdir " +
                           in.log_dir + "`, then `nnfit profile " + in.log_dir + "`.");
  }
  const ReportVerdict& v = *in.verdict;
  std::string o = "<p class=\"verdict\">Verdict: <strong>" + escape(v.verdict) + "</strong></p>";
  o += "<ul class=\"evidence\">";
  for (const std::string& e : v.evidence) o += "<li>" + escape(e) + "</li>";
  o += "</ul>";
  o += "<p class=\"meta\">Mean step " + escape(fmt("%.3f", v.mean_step_us / 1e3)) + " ms over " + std::to_string(v.steps_used) +
       " of " + std::to_string(v.steps) + " steps (the first is warm-up when there are 3 or more); memory in use up to " +
       escape(fmt("%.1f", static_cast<double>(v.memory_in_use_bytes_max) / (1 << 20))) + " MiB.</p>";
  o += "<table class=\"breakdown\"><tr><th class=\"name\">part</th><th>mean ms</th><th>share</th><th class=\"name\"></th></tr>";
  for (const ReportVerdict::Part& p : v.breakdown) {
    o += "<tr><td class=\"name\">" + escape(p.name) + "</td><td>" + escape(fmt("%.3f", p.mean_us / 1e3)) + "</td><td>" +
         escape(pct(p.fraction)) + "</td><td class=\"name\"><span class=\"bar\" style=\"width:" +
         escape(fmt("%.0f", std::clamp(p.fraction, 0.0, 1.0) * 200)) + "px\"></span></td></tr>";
  }
  o += "</table>";
  if (!v.heaviest_ops.empty()) {
    o += "<h3>Heaviest ops</h3>";
    if (v.peak_gflops_per_s) {
      o += "<p class=\"meta\">Peak " + escape(fmt("%.1f", *v.peak_gflops_per_s)) + " GFLOP/s (" + escape(v.peak_source) + ").";
      if (v.peak_gbps) {
        o += " Memory bandwidth " + escape(fmt("%.1f", *v.peak_gbps)) + " GB/s (" + escape(v.peak_gbps_source) + ").";
      }
      o += "</p>";
    }
    auto cell = [](const std::optional<double>& x, const std::string& text) { return "<td>" + (x ? escape(text) : "–") + "</td>"; };
    o += "<div class=\"scroll\"><table class=\"ops\"><tr><th class=\"name\">op</th><th class=\"name\">kind</th>"
         "<th class=\"name\">phase</th><th>µs/step</th><th>share of kernels</th><th>GFLOP/s</th><th>of peak</th>"
         "<th>MB/step</th><th>GB/s</th><th>of bandwidth</th></tr>";
    for (const ReportVerdict::Op& op : v.heaviest_ops) {
      o += "<tr><td class=\"name\">" + escape(op.name) + "</td><td class=\"name\">" + escape(op.op) + "</td><td class=\"name\">" +
           escape(op.phase) + "</td><td>" + escape(fmt("%.1f", op.us_per_step)) + "</td><td>" + escape(pct(op.share_of_kernels)) +
           "</td>" + cell(op.gflops_per_s, fmt("%.1f", op.gflops_per_s.value_or(0))) +
           cell(op.fraction_of_peak, pct(op.fraction_of_peak.value_or(0))) +
           cell(op.bytes_per_step, fmt("%.3f", op.bytes_per_step.value_or(0) / 1e6)) + cell(op.gbps, fmt("%.1f", op.gbps.value_or(0))) +
           cell(op.fraction_of_bandwidth, pct(op.fraction_of_bandwidth.value_or(0))) + "</tr>";
    }
    o += "</table></div>";
  }
  if (!v.pipeline_stages.empty()) {
    o += "<h3>Input pipeline stages</h3><table class=\"stages\"><tr><th class=\"name\">stage</th><th>own s</th>"
         "<th>elements</th><th>own µs per element</th><th class=\"name\"></th></tr>";
    for (const ReportVerdict::Stage& s : v.pipeline_stages) {
      o += "<tr><td class=\"name\">" + escape(s.name) + "</td><td>" + escape(fmt("%.3f", s.own_seconds)) + "</td><td>" +
           std::to_string(s.elements) + "</td><td>" + escape(fmt("%.1f", s.own_us_per_element)) + "</td><td class=\"name\">" +
           (s.name == v.slowest_stage ? "<strong>slowest</strong>" : "") + "</td></tr>";
    }
    o += "</table>";
  }
  return o;
}

// Every epoch_ scalar of both runs, a row per epoch (from 1), validation columns prefixed val_.
std::string epoch_table(const ReportInputs& in) {
  const report::TagSeries train = report::by_tag(in.train_scalars), validation = report::by_tag(in.validation_scalars);
  std::vector<std::pair<std::string, const std::map<std::int64_t, double>*>> columns;
  std::set<std::int64_t> epochs;
  for (const auto& [run, prefix] : {std::pair{&train, ""}, std::pair{&validation, "val_"}}) {
    for (const auto& [tag, values] : *run) {
      if (tag.rfind("epoch_", 0) != 0) continue;  // per-batch tags (Keras's batch_loss) are not per epoch
      const std::string name = tag.substr(6);
      columns.emplace_back(prefix + name, &values);
      for (const auto& [step, v] : values) epochs.insert(step);
    }
  }
  // Loss and metrics first, the run figures after them.
  std::stable_partition(columns.begin(), columns.end(), [](const auto& c) {
    const std::string& n = c.first;
    return !report::is_run_figure("epoch_" + (n.rfind("val_", 0) == 0 ? n.substr(4) : n));
  });
  if (columns.empty()) return "";
  std::string o = "<h2 id=\"epochs\">Every epoch scalar</h2><div class=\"scroll\"><table class=\"epochs\"><tr><th>epoch</th>";
  for (const auto& [name, values] : columns) {
    std::string header = escape(name);  // may break after an underscore: host_<wbr>ram_<wbr>used_<wbr>bytes
    for (std::size_t at = header.find('_'); at != std::string::npos; at = header.find('_', at + 6)) header.insert(at + 1, "<wbr>");
    o += "<th>" + header + "</th>";
  }
  o += "</tr>";
  for (std::int64_t e : epochs) {
    o += "<tr><td>" + std::to_string(e + 1) + "</td>";
    for (const auto& [name, values] : columns) {
      const auto it = values->find(e);
      o += "<td>" + (it == values->end() ? std::string("–") : escape(fmt("%.6g", it->second))) + "</td>";
    }
    o += "</tr>";
  }
  return o + "</table></div><p class=\"caption\">Tags as in the event files without their epoch_ prefix; epochs from 1 " +
         "(TensorBoard shows the 0-based step).</p>";
}

}  // namespace

ReportInputs load_report_events(const std::string& log_dir) {
  ReportInputs in;
  in.log_dir = log_dir;
  const std::vector<fs::path> train = event_files(fs::path(log_dir) / "train");
  const std::vector<fs::path> validation = event_files(fs::path(log_dir) / "validation");
  in.train_events_found = !train.empty();
  in.validation_events_found = !validation.empty();
  in.train_scalars = read_run(train);
  in.validation_scalars = read_run(validation);
  return in;
}

std::string render_html_report(const ReportInputs& in, const HtmlReportOptions& options) {
  const std::size_t buckets = std::max<std::size_t>(1, options.max_buckets);
  std::string o = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  o += "<title>nnfit profile: " + escape(in.log_dir) + "</title><style>" + kCss + "</style></head><body>\n";
  o += "<header><h1>nnfit profile report</h1><p class=\"meta\">Log directory <code>" + escape(in.log_dir) + "</code>";
  if (in.steps_found) o += " · " + std::to_string(in.steps.size()) + " steps";
  std::set<std::int64_t> epochs;
  for (const ScalarEvent& e : in.train_scalars) {
    if (e.tag.rfind("epoch_", 0) == 0) epochs.insert(e.step);
  }
  if (!epochs.empty()) o += " · " + std::to_string(epochs.size()) + " epoch" + (epochs.size() == 1 ? "" : "s");
  o += "</p></header>\n";
  o += "<section id=\"verdict\"><h2>Where the time goes</h2>" + verdict_section(in) + "</section>\n";
  o += "<section id=\"curves\"><h2>Loss and metrics per epoch</h2>" + report::curves_section(in) + "</section>\n";
  o += "<section id=\"step-time\"><h2>Step time</h2>" + report::step_time_section(in, buckets) + "</section>\n";
  o += "<section id=\"memory\"><h2>Memory</h2>" + report::memory_section(in, buckets) + "</section>\n";
  o += "<section id=\"epoch-table\">" + epoch_table(in) + "</section>\n";
  o += "<footer>Read from <code>" + escape(in.log_dir) + "</code>: train/ and validation/ event files, steps.jsonl, and " +
       "(for the verdict) ops.json and pipeline.json. Formats: docs/outputs.md and docs/cli.md of nnfit.";
  if (!options.generator.empty()) o += " Written by " + escape(options.generator);
  if (!options.generated_at.empty()) o += " at " + escape(options.generated_at);
  if (!options.generator.empty() || !options.generated_at.empty()) o += ".";
  o += "</footer>\n</body></html>\n";
  return o;
}

void write_html_report(const std::string& path, const std::string& html) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    throw DataError(path, -1, std::string("cannot write the report: ") + std::strerror(errno),
                    "give --html a path in an existing, writable directory");
  }
  const bool written = std::fwrite(html.data(), 1, html.size(), f) == html.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    std::remove(tmp.c_str());
    throw DataError(path, -1, "cannot write the report (disk full?)");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw DataError(path, -1, std::string("cannot write the report: ") + std::strerror(err),
                    "give --html a file path, not a directory");
  }
}

}  // namespace nnfit::profile
