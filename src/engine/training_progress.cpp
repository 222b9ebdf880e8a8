// StepEngine::Totals::state / restore and the resume hooks: what a backup carries of a partly
// done epoch (loss sums, per-output sums, rows seen, each metric's sums).
#include <nlohmann/json.hpp>

#include "engine/engine_types.h"
#include "nnfit/core/error.h"

namespace nnfit {

std::string StepEngine::Totals::state() const {
  nlohmann::json m = nlohmann::json::array();
  for (const auto& om : metrics) m.push_back(om.metric.sums());
  return nlohmann::json{{"loss_sum", loss_sum}, {"output_loss_sums", output_loss_sums}, {"seen", seen}, {"metrics", m}}
      .dump();
}

void StepEngine::Totals::restore(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    const auto& m = j.at("metrics");
    const auto sums = j.at("output_loss_sums").get<std::vector<double>>();
    NNFIT_CHECK(m.size() == metrics.size() && sums.size() == output_loss_sums.size(), InvalidArgument,
                "the saved progress has ", m.size(), " metrics and ", sums.size(), " output losses; the model has ",
                metrics.size(), " and ", output_loss_sums.size());
    loss_sum = j.at("loss_sum").get<double>();
    output_loss_sums = sums;
    seen = j.at("seen").get<std::int64_t>();
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      metrics[i].metric.set_sums(m[i].get<std::vector<double>>());
    }
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(std::string("the saved epoch progress is not readable: ") + e.what());
  }
}

void StepEngine::set_resume_point(std::int64_t epoch, std::int64_t step, const std::string& progress) {
  NNFIT_CHECK(epoch >= 0 && step >= 0, InvalidArgument, "a resume point needs epoch and step >= 0, got ", epoch, ", ",
              step);
  resume_ = ResumePoint{epoch, step, progress};
}

std::string StepEngine::training_progress() const { return totals_ ? totals_->state() : ""; }

}  // namespace nnfit
