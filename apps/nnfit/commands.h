// The CLI's subcommands. Each lives in its own file and registers itself with the
// parser through one add_*_command function that main.cpp calls explicitly.
#pragma once
#include <functional>
#include <string>

// The build may pass the project version; this is the fallback.
#ifndef NNFIT_VERSION
#define NNFIT_VERSION "0.1.0"
#endif

namespace CLI {
class App;
}

namespace nnfit::cli {

// A parsed subcommand and what to run when the user chose it. `run` returns the exit code
// and lets nnfit::Error escape; main.cpp turns errors into the one-line report.
struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// `nnfit train CONFIG.json [--epochs N] [--batch-size N] [--seed N] [--threads N]
//  [--metrics-json PATH] [--logdir DIR [--profile-steps 10-20]] [--memory-limit SIZE]
//  [--memory-preallocate FRACTION] [--quiet]`
Subcommand add_train_command(CLI::App& parent);

// `nnfit plan CONFIG.json [--batch-sizes 32,128] [--memory-limit SIZE] [--json]`
Subcommand add_plan_command(CLI::App& parent);

// `nnfit predict MODEL --input X.npy... --output Y.npy|Y.npz [--batch-size N] [--threads N]`
Subcommand add_predict_command(CLI::App& parent);
// `nnfit evaluate MODEL --input X.npy... --labels Y.npy... [--json] [--batch-size N] [--threads N]`
Subcommand add_evaluate_command(CLI::App& parent);

// `nnfit export MODEL OUT.onnx [--opset N] [--seed N] [--json]`
Subcommand add_export_command(CLI::App& parent);

// `nnfit doctor [--json] [--root DIR] [--env PATH]... [--target FRAMEWORK [--write-env FILE]]`
Subcommand add_doctor_command(CLI::App& parent);

// `nnfit data inspect PATH [--take N] [--json]`, `nnfit data bench CONFIG.json [--split S]
//  [--epochs N] [--compute-threads N] [--json]`
Subcommand add_data_command(CLI::App& parent);
// The `bench` subcommand of `data` (data_bench.cpp).
Subcommand add_data_bench_command(CLI::App& data);

// `nnfit profile LOGDIR [--json] [--peak-gflops X] [--peak-gbps X] [--html FILE]`
Subcommand add_profile_command(CLI::App& parent);

// `nnfit monitor [--interval 1s] [--count N] [--json] [--nvml LIB]`
Subcommand add_monitor_command(CLI::App& parent);

// `nnfit ops [--json]`: the op catalogue and each backend's kernels per dtype.
Subcommand add_ops_command(CLI::App& parent);

// At most about 360 bytes of an error or hint line: its start (the file and key) and end
// (what was expected) with the number of bytes cut between them said (main.cpp).
std::string clip_error_line(const std::string& text);

// Note [OpenMP spin] in omp_env.cpp: sets GOMP_SPINCOUNT and re-executes the program when
// the user set neither it nor OMP_WAIT_POLICY and the machine is busy (or NNFIT_OPENMP_SPIN
// names a count); returns otherwise.
void apply_openmp_spin_default(char** argv);

}  // namespace nnfit::cli
