// FitProfile (fit_profile.h): the step log, the kernel timers, the trace session and the
// NNFIT_KERNEL_TIMES report of one fit.
#include "engine/fit_profile.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>

#include "nnfit/core/env_flags.h"
#include "nnfit/core/trace.h"
#include "nnfit/profile/chrome_trace.h"
#include "nnfit/profile/xplane.h"

namespace nnfit {

using namespace step_profile;

FitProfile::FitProfile(StepEngine& engine, const FitOptions& options)
    : engine_(engine),
      options_(options),
      // Per kernel of one program: the model's (static) inputs' at the batch size.
      kernel_times_(env_flag_enabled("NNFIT_KERNEL_TIMES") && !engine.model_.graph().has_unknown_dims()),
      timed_batch_(options.batch_size),
      log_steps_(!options.log_dir.empty()) {
  NNFIT_CHECK(options.profile_steps.empty() || !options.log_dir.empty(), InvalidArgument,
              "profile_steps \"", options.profile_steps, "\" needs a log_dir to write the trace to");
  if (kernel_times_) engine_.entry(true, timed_batch_).program.set_timing(true, engine_.timing_wait());
  if (!options.profile_steps.empty()) trace_steps_ = profile::parse_step_range(options.profile_steps);
  if (log_steps_) {
    files_ = ProfileFiles::open(options.log_dir);
    step_log_ = std::make_unique<profile::StepLogWriter>(files_.steps, /*append=*/engine_.iterations_ > 0);
    time_program_ = [this](Program& prog, bool update_only) {
      auto it = std::find_if(timed_.begin(), timed_.end(), [&](const TimedProgram& tp) { return tp.program == &prog; });
      if (it == timed_.end()) {
        const bool ours = !prog.timing();
        if (ours) prog.set_timing(true, engine_.timing_wait());
        timed_.push_back({&prog, 0, ours, update_only});
        it = timed_.end() - 1;
      }
      ++it->runs;
      if (std::none_of(step_programs_.begin(), step_programs_.end(), [&](const auto& sp) { return sp.first == &prog; })) {
        step_programs_.emplace_back(&prog, update_only);
      }
    };
  }
}

FitProfile::~FitProfile() {
  if (tracing_) trace::stop();
  for (const TimedProgram& tp : timed_) {
    if (tp.ours) tp.program->set_timing(false);
  }
}

void FitProfile::begin_step(std::int64_t global_step) {
  if (trace_steps_ && global_step == trace_steps_->first && !trace::running()) {
    trace::start();
    tracing_ = true;
  }
  step_programs_.clear();
}

void FitProfile::count_step(const StepEngine::Entry& e, std::int64_t rows) {
  if (rows == timed_batch_ && !e.split) ++timed_steps_;
}

void FitProfile::add_phases(profile::StepRecord& rec) {
  if (!log_steps_) return;
  std::array<std::int64_t, kNumStepPhases> ns{};
  for (const auto& [prog, update_only] : step_programs_) {
    const auto phase_ns = prog->take_phase_ns();
    for (std::size_t i = 0; i < kNumStepPhases; ++i) {
      ns[update_only ? static_cast<std::size_t>(StepPhase::update) : i] += phase_ns[i];
    }
  }
  rec.forward_us = (ns[0] + 500) / 1000;
  rec.backward_us = (ns[1] + 500) / 1000;
  rec.update_us = (ns[2] + 500) / 1000;
  ++logged_steps_;
}

void FitProfile::end_step(const profile::StepRecord& rec, std::int64_t global_step) {
  if (log_steps_) step_log_->add(rec);
  if (tracing_ && global_step >= trace_steps_->last) finish_trace();
}

void FitProfile::flush() {
  if (log_steps_) step_log_->flush();
}

void FitProfile::end_epoch(std::int64_t epoch) {
  if (!log_steps_) return;
  step_log_->flush();
  write_ops_json(files_.ops, timed_, logged_steps_, engine_.num_threads(), engine_.device().to_string());
  if (!options_.pipeline_stages.empty()) write_pipeline_json(files_.pipeline, options_.pipeline_stages, epoch);
}

void FitProfile::finish_trace() {
  if (!tracing_) return;
  tracing_ = false;
  trace::stop();
  // The Chrome trace (Perfetto, chrome://tracing, profile plugin <= 2.19) and beside it
  // the XSpace current profile plugins (XProf) read.
  const trace::Collected collected = trace::collect();
  const std::string chrome = profile::write_chrome_trace(collected, options_.log_dir);
  profile::write_xplane(collected, std::filesystem::path(chrome).parent_path().string());
}

void FitProfile::finish() {
  finish_trace();  // a range past the last step ends with training
  if (!kernel_times_) return;
  Program& prog = engine_.entry(true, timed_batch_).program;
  double total = 0;
  for (double t : prog.step_seconds()) total += t;
  std::fprintf(stderr, "nnfit: kernel times over %lld steps of batch %lld (%.3f ms/step):\n",
               static_cast<long long>(timed_steps_), static_cast<long long>(timed_batch_),
               total * 1e3 / static_cast<double>(std::max<std::int64_t>(1, timed_steps_)));
  for (std::size_t i = 0; i < prog.steps().size(); ++i) {
    const PlannedStep& st = prog.steps()[i];
    std::fprintf(stderr, "  %6.1f%%  %-45s %s\n", 100.0 * prog.step_seconds()[i] / std::max(total, 1e-12),
                 prog.graph().node(st.node).name.c_str(), st.impl.c_str());
  }
  prog.set_timing(false);
}

}  // namespace nnfit
