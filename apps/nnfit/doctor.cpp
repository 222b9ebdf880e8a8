// `nnfit doctor`: probe this machine (or --root DIR), check it against the compatibility
// tables and print a ✓ / ! / ✗ checklist or --json. Exit code 0 when nothing fails, 1 when
// a check fails, 2 for a usage or internal error (the doctor's own errors never escape as
// a crash: a broken table or an exception inside a probe is reported and exits 2).
#include <oneapi/dnnl/dnnl.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "commands.h"
#include "nnfit/backend/backend.h"
#include "nnfit/core/error.h"
#include "nnfit/dist/communicator.h"
#include "nnfit/doctor/compat_tables.h"
#include "nnfit/doctor/probe.h"
#include "nnfit/doctor/report.h"
#include "nnfit/doctor/rules.h"
#include "nnfit/doctor/target.h"

namespace nnfit::cli {
namespace {

struct DoctorArgs {
  bool json = false;
  std::string root = "/";
  std::vector<std::string> envs;
  std::string data_dir;
  std::string target;
  std::string write_env;
  bool no_load = false;
};

int run_doctor(const DoctorArgs& args) {
  try {
    doctor::CompatTables tables =
        doctor::load_compat_tables(args.data_dir.empty() ? doctor::default_compat_dir() : args.data_dir);
    std::error_code ec;
    if (!std::filesystem::is_directory(args.root, ec)) {
      std::fprintf(stderr, "nnfit: error: --root %s is not a directory\n", args.root.c_str());
      return 2;
    }
    doctor::ProbeOptions options;
    options.root = args.root;
    options.env = doctor::process_environment();
    options.venvs = args.envs;
    options.load_libraries = !args.no_load;
    doctor::Facts facts = doctor::probe(options);
    facts.nnfit.version = NNFIT_VERSION;
    // Note [oneDNN versions from the CLI]: the doctor module depends on core only, so the
    // CLI, which links oneDNN through the backend, says what it was built with and loaded.
    facts.onednn.compiled = std::to_string(DNNL_VERSION_MAJOR) + "." + std::to_string(DNNL_VERSION_MINOR) + "." +
                            std::to_string(DNNL_VERSION_PATCH);
    if (const dnnl_version_t* v = dnnl_version()) {
      facts.onednn.loaded = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
    }
    facts.onednn.loaded_path = doctor::library_path_of(reinterpret_cast<const void*>(&dnnl_version));
#ifdef _OPENMP
    facts.nnfit.openmp_version = std::to_string(_OPENMP);  // the spec's date, e.g. 201511 = OpenMP 4.5
#endif
    for (const auto& b : backend_infos()) {
      facts.nnfit.backends.push_back(b.name + (b.compiled ? " compiled" : " not compiled") +
                                     (b.available ? ", available" : ", unavailable") +
                                     (b.detail.empty() ? "" : " (" + b.detail + ")"));
    }
    if (!args.no_load) {  // loading a plugin loads its vendor library (libmpi, libnccl)
      for (const auto& c : dist::communicator_infos()) {
        facts.nnfit.communicators.push_back(c.name + (c.compiled ? " compiled" : " not compiled") +
                                            (c.available ? ", available" : ", unavailable") +
                                            (c.detail.empty() ? "" : " (" + c.detail + ")"));
      }
    }
    facts.nnfit.cuda_architectures = doctor::cuda_architectures_from_cmake(cuda_build_architectures());
    doctor::complete_facts(facts, tables);
    std::vector<doctor::Check> checks = doctor::run_rules(facts, tables);
    if (!args.target.empty()) {
      doctor::TargetProposal proposal = doctor::propose_target(facts, tables, args.target);
      checks.push_back(proposal.check);
      if (!args.write_env.empty()) {
        if (proposal.environment_yml.empty()) {
          std::fprintf(stderr, "nnfit: error: no environment to write for --target %s\n", args.target.c_str());
          return 2;
        }
        std::ofstream out(args.write_env, std::ios::binary);
        out << proposal.environment_yml;
        if (!out) {
          std::fprintf(stderr, "nnfit: error: cannot write %s\n", args.write_env.c_str());
          return 2;
        }
      }
    }
    std::string text = args.json ? doctor::format_json(checks, facts) : doctor::format_text(checks, facts);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return doctor::exit_code(checks);
  } catch (const Error& e) {
    std::fprintf(stderr, "nnfit: error: %s\n", e.what());
    if (!e.hint().empty()) std::fprintf(stderr, "  hint: %s\n", e.hint().c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nnfit: error: internal error in doctor: %s\n  hint: please report this as a bug\n", e.what());
    return 2;
  }
}

}  // namespace

Subcommand add_doctor_command(CLI::App& parent) {
  auto args = std::make_shared<DoctorArgs>();
  CLI::App* app = parent.add_subcommand("doctor", "Find driver / CUDA / cuDNN / framework mismatches and how to fix them");
  app->add_flag("--json", args->json, "print {\"checks\": [...], \"facts\": {...}} instead of the checklist");
  app->add_option("--root", args->root, "probe this directory tree instead of / (containers, images); skips library loading");
  app->add_option("--env", args->envs, "a virtual or conda environment to inspect (repeatable)");
  app->add_option("--data-dir", args->data_dir, "compatibility tables folder (default: ../share/nnfit/compat beside an installed nnfit, else the source tree's data/compat)");
  app->add_option("--target", args->target, "propose the newest version that works here: tensorflow, torch or jax")
      ->check(CLI::IsMember({"tensorflow", "torch", "jax"}));
  app->add_option("--write-env", args->write_env, "with --target: write the proposal as a pinned conda environment.yml");
  app->add_flag("--no-load", args->no_load, "do not dlopen NVML or cuDNN, nor run mpirun --version");
  return {app, [args] { return run_doctor(*args); }};
}

}  // namespace nnfit::cli
