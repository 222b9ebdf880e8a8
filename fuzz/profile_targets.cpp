// Fuzz targets for what `nnfit profile` reads: a tfevents file alone, and a whole log
// directory (steps.jsonl, ops.json, pipeline.json and a train/ event file, Note
// [Multi-file inputs]) through the CLI's own command with --html, so the analysis, the
// text summary and the report page all see the input.
#include <CLI/CLI.hpp>
#include <string_view>

#include "fuzz_input.h"
#include "fuzz_targets.h"
#include "nnfit/commands.h"
#include "nnfit/core/error.h"
#include "nnfit/profile/event_file_reader.h"

namespace nnfit::fuzz {

std::string fuzz_tfevents(const std::uint8_t* data, std::size_t size) {
  try {
    (void)profile::read_event_file(write_file("events.out.tfevents.1.fuzz", {reinterpret_cast<const char*>(data), size}));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string fuzz_profile(const std::uint8_t* data, std::size_t size) {
  static const char* const kFiles[] = {"steps.jsonl", "ops.json", "pipeline.json", "train/events.out.tfevents.1.fuzz"};
  const std::string dir = fresh_dir("logdir");
  const std::vector<std::string_view> parts = split_files({reinterpret_cast<const char*>(data), size}, std::size(kFiles));
  for (std::size_t i = 0; i < parts.size(); ++i) write_file(std::string("logdir/") + kFiles[i], parts[i]);
  const std::string html = scratch_dir() + "/report.html";
  // Given peaks: measuring them (a second of sgemm) is the one thing not read from files.
  const char* argv[] = {"nnfit", "profile", dir.c_str(), "--peak-gflops", "100", "--peak-gbps", "10", "--html", html.c_str()};
  try {
    CLI::App app;
    cli::Subcommand profile = cli::add_profile_command(app);
    app.parse(static_cast<int>(std::size(argv)), argv);
    MutedStdout muted;
    (void)profile.run();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace nnfit::fuzz
