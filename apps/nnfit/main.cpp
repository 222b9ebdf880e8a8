// nnfit's command line: parses the subcommand and turns every error into one line on
// stderr, `nnfit: error: <what>`, an optional `  hint: <hint>` line, and an exit code:
// 0 success, 1 a runtime failure (bad data, out of memory, a vendor library), 2 a usage
// or config error (bad flags, bad JSON, an unknown key, a model that does not fit).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "commands.h"
#include "nnfit/core/error.h"

namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

// One line: messages that carry newlines (nested errors, lists) are joined with "; ".
std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "; ";
    } else {
      out += c;
    }
  }
  return out;
}

int report(const std::string& what, const std::string& hint, int code) {
  std::fflush(stdout);
  std::fprintf(stderr, "nnfit: error: %s\n", nnfit::cli::clip_error_line(one_line(what)).c_str());
  if (!hint.empty()) std::fprintf(stderr, "  hint: %s\n", nnfit::cli::clip_error_line(one_line(hint)).c_str());
  return code;
}

int run(int argc, char** argv) {
  CLI::App app{"nnfit: train Keras models with a C++ engine (oneDNN + OpenMP on CPU)", "nnfit"};
  app.set_version_flag("--version", "nnfit " NNFIT_VERSION);
  app.require_subcommand(1);
  std::vector<nnfit::cli::Subcommand> commands = {nnfit::cli::add_train_command(app),
                                                  nnfit::cli::add_plan_command(app)};
  commands.push_back(nnfit::cli::add_predict_command(app));
  commands.push_back(nnfit::cli::add_evaluate_command(app));
  commands.push_back(nnfit::cli::add_export_command(app));
  commands.push_back(nnfit::cli::add_doctor_command(app));
  commands.push_back(nnfit::cli::add_data_command(app));
  commands.push_back(nnfit::cli::add_profile_command(app));
  commands.push_back(nnfit::cli::add_monitor_command(app));
  commands.push_back(nnfit::cli::add_ops_command(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    return report(e.what(), "run 'nnfit --help' (or 'nnfit <command> --help') for usage", kExitUsage);
  }
  for (const auto& command : commands) {
    if (command.app->parsed()) return command.run();
  }
  return report("no command given", "run 'nnfit --help'", kExitUsage);
}

}  // namespace

namespace nnfit::cli {

// At most about 360 bytes: a message that quotes a value from a file (a 10 MB string
// in a config) keeps its start, which names the file and key, and its end, which says what
// was expected, and says how many bytes were cut between them.
std::string clip_error_line(const std::string& text) {
  constexpr std::size_t kMax = 360, kHead = 240, kTail = 100;
  if (text.size() <= kMax) return text;
  const auto continuation = [&](std::size_t i) { return (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80; };
  std::size_t head = kHead, tail = text.size() - kTail;  // never inside a UTF-8 sequence
  while (head > 0 && continuation(head)) --head;
  while (tail < text.size() && continuation(tail)) ++tail;
  return text.substr(0, head) + " [... " + std::to_string(tail - head) + " bytes cut ...] " + text.substr(tail);
}

}  // namespace nnfit::cli

int main(int argc, char** argv) {
  nnfit::cli::apply_openmp_spin_default(argv);
  // Every error class maps to an exit code here, and nothing escapes: a user never sees
  // std::terminate.
  try {
    return run(argc, argv);
  } catch (const nnfit::InvalidArgument& e) {
    return report(e.what(), e.hint(), kExitUsage);
  } catch (const nnfit::Unsupported& e) {
    return report(e.what(), e.hint(), kExitUsage);
  } catch (const nnfit::OutOfMemory& e) {
    return report(e.what(), e.hint().empty() ? "try a smaller --batch-size" : e.hint(), kExitRuntime);
  } catch (const nnfit::Error& e) {
    return report(e.what(), e.hint(), kExitRuntime);  // DataError, BackendError, runtime Unsupported
  } catch (const std::bad_alloc&) {
    return report("out of host memory", "try a smaller --batch-size", kExitRuntime);
  } catch (const std::exception& e) {
    return report(std::string("internal error: ") + e.what(), "please report this as a bug", kExitRuntime);
  } catch (...) {
    return report("internal error: unknown exception", "please report this as a bug", kExitRuntime);
  }
}
