// LearningRateSchedule::keras_json: each schedule as Keras 3 serializes it, so a model
// saved by nnfit resumes on the same schedule in Keras and in nnfit
// (model/keras/keras_training_config.cpp reads these objects).
#include <cstdio>

#include "nnfit/nn/lr_schedule.h"

namespace nnfit {

namespace {

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  // JSON numbers need a digit form Python reads as a float where Keras writes one.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string integer(std::int64_t v) { return std::to_string(v); }
std::string boolean(bool v) { return v ? "true" : "false"; }

std::string object(const char* cls, const std::string& config) {
  return std::string(R"({"module": "keras.optimizers.schedules", "class_name": ")") + cls +
         R"(", "config": {)" + config + R"(}, "registered_name": null})";
}

}  // namespace

std::string ConstantLearningRate::keras_json() const { return num(lr_); }

std::string ExponentialDecay::keras_json() const {
  return object("ExponentialDecay", R"("initial_learning_rate": )" + num(initial_) + R"(, "decay_steps": )" +
                                        integer(decay_steps_) + R"(, "decay_rate": )" + num(decay_rate_) +
                                        R"(, "staircase": )" + boolean(staircase_) + R"(, "name": "ExponentialDecay")");
}

std::string InverseTimeDecay::keras_json() const {
  return object("InverseTimeDecay", R"("initial_learning_rate": )" + num(initial_) + R"(, "decay_steps": )" +
                                        integer(decay_steps_) + R"(, "decay_rate": )" + num(decay_rate_) +
                                        R"(, "staircase": )" + boolean(staircase_) + R"(, "name": "InverseTimeDecay")");
}

std::string PolynomialDecay::keras_json() const {
  return object("PolynomialDecay", R"("initial_learning_rate": )" + num(initial_) + R"(, "decay_steps": )" +
                                       integer(decay_steps_) + R"(, "end_learning_rate": )" + num(end_) +
                                       R"(, "power": )" + num(power_) + R"(, "cycle": )" + boolean(cycle_) +
                                       R"(, "name": "PolynomialDecay")");
}

std::string PiecewiseConstantDecay::keras_json() const {
  std::string b, v;
  for (std::size_t i = 0; i < boundaries_.size(); ++i) b += (i ? ", " : "") + integer(boundaries_[i]);
  for (std::size_t i = 0; i < values_.size(); ++i) v += (i ? ", " : "") + num(values_[i]);
  return object("PiecewiseConstantDecay",
                R"("boundaries": [)" + b + R"(], "values": [)" + v + R"(], "name": "PiecewiseConstant")");
}

std::string CosineDecay::keras_json() const {
  return object("CosineDecay", R"("initial_learning_rate": )" + num(initial_) + R"(, "decay_steps": )" +
                                   integer(decay_steps_) + R"(, "alpha": )" + num(alpha_) + R"(, "name": "CosineDecay", )" +
                                   R"("warmup_target": )" + (warmup_target_ ? num(*warmup_target_) : "null") +
                                   R"(, "warmup_steps": )" + integer(warmup_steps_));
}

std::string CosineDecayRestarts::keras_json() const {
  return object("CosineDecayRestarts", R"("initial_learning_rate": )" + num(initial_) + R"(, "first_decay_steps": )" +
                                           integer(first_decay_steps_) + R"(, "t_mul": )" + num(t_mul_) +
                                           R"(, "m_mul": )" + num(m_mul_) + R"(, "alpha": )" + num(alpha_) +
                                           R"(, "name": "SGDRDecay")");
}

}  // namespace nnfit
