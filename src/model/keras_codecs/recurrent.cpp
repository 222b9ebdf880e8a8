// Keras codecs of the recurrent layers: SimpleRNN, LSTM, GRU (Keras 3's keys, and Keras 2's
// time_major and implementation). What nnfit does not run yet (stateful, dropout inside
// the cell, regularizers, constraints) is refused by name.
#include "model/keras_codecs/codec.h"

#include "nnfit/nn/layers.h"

namespace nnfit::keras_json {
namespace {

LayerPtr read_recurrent(const Reader& r, const std::string& p, const json& c, const std::string& name, RecurrentCell cell) {
  check_keys(r, p, c, kCommon,
             {"units", "activation", "recurrent_activation", "use_bias", "kernel_initializer", "recurrent_initializer",
              "bias_initializer", "unit_forget_bias", "reset_after", "kernel_regularizer", "recurrent_regularizer",
              "bias_regularizer", "activity_regularizer", "kernel_constraint", "recurrent_constraint",
              "bias_constraint", "dropout", "recurrent_dropout", "seed", "return_sequences", "return_state",
              "go_backwards", "stateful", "unroll", "zero_output_for_mask", "use_cudnn", "time_major",
              "implementation"});
  require_null(r, p, c, {"kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "activity_regularizer",
                         "kernel_constraint", "recurrent_constraint", "bias_constraint"});
  require_value(r, p, c, "stateful", false);
  require_value(r, p, c, "time_major", false);
  for (const char* key : {"dropout", "recurrent_dropout"}) {
    const double rate = get_number(r, p, c, key, 0.0);
    if (rate < 0.0 || rate >= 1.0) r.invalid(p, std::string("\"") + key + "\" must be in [0, 1), got " + show(c[key]));
    if (rate != 0.0) {
      r.unsupported(p, std::string("\"") + key + "\" = " + show(c[key]) + " is not supported yet",
                    "set it to 0 (a Dropout or SpatialDropout1D layer before the recurrent layer is supported)");
    }
  }
  if (cell == RecurrentCell::simple_rnn && find(c, "recurrent_activation")) {
    r.invalid(p, "SimpleRNN has no \"recurrent_activation\"");
  }
  RecurrentOptions o;
  o.units = get_int(r, p, c, "units", std::nullopt);
  if (o.units <= 0) r.invalid(p, "\"units\" must be positive, got " + std::to_string(o.units));
  o.activation = get_activation(r, p, c, o.activation);
  o.recurrent_activation = get_activation(r, p, c, "recurrent_activation", o.recurrent_activation);
  o.use_bias = get_bool(r, p, c, "use_bias", o.use_bias);
  o.kernel_initializer = get_initializer(r, p, c, "kernel_initializer", o.kernel_initializer);
  o.recurrent_initializer = get_initializer(r, p, c, "recurrent_initializer", o.recurrent_initializer);
  o.bias_initializer = get_initializer(r, p, c, "bias_initializer", o.bias_initializer);
  o.unit_forget_bias = get_bool(r, p, c, "unit_forget_bias", o.unit_forget_bias);
  o.reset_after = get_bool(r, p, c, "reset_after", o.reset_after);
  o.return_sequences = get_bool(r, p, c, "return_sequences", false);
  o.return_state = get_bool(r, p, c, "return_state", false);
  o.go_backwards = get_bool(r, p, c, "go_backwards", false);
  o.zero_output_for_mask = get_bool(r, p, c, "zero_output_for_mask", false);
  if (cell == RecurrentCell::lstm) return std::make_unique<LSTM>(name, o);
  if (cell == RecurrentCell::gru) return std::make_unique<GRU>(name, o);
  return std::make_unique<SimpleRNN>(name, o);
}

LayerPtr read_simple_rnn(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  return read_recurrent(r, p, c, name, RecurrentCell::simple_rnn);
}
LayerPtr read_lstm(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  return read_recurrent(r, p, c, name, RecurrentCell::lstm);
}
LayerPtr read_gru(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  return read_recurrent(r, p, c, name, RecurrentCell::gru);
}

bool write_recurrent(const Writer& w, const Layer& l, ojson& c) {
  auto* rnn = dynamic_cast<const Recurrent*>(&l);
  if (!rnn) return false;
  const RecurrentOptions& o = rnn->options();
  c.update({{"return_sequences", o.return_sequences}, {"return_state", o.return_state},
            {"go_backwards", o.go_backwards}, {"stateful", false}, {"unroll", false}});
  if (!w.keras2 || o.zero_output_for_mask) c["zero_output_for_mask"] = o.zero_output_for_mask;
  if (w.keras2) c["time_major"] = false;
  c.update({{"units", o.units}, {"activation", write_activation(w, l, o.activation)}});
  if (rnn->cell() != RecurrentCell::simple_rnn) {
    c["recurrent_activation"] = write_activation(w, l, o.recurrent_activation);
  }
  c.update({{"use_bias", o.use_bias}, {"kernel_initializer", write_initializer(o.kernel_initializer)},
            {"recurrent_initializer", write_initializer(o.recurrent_initializer)},
            {"bias_initializer", write_initializer(o.bias_initializer)}});
  if (rnn->cell() == RecurrentCell::lstm) c["unit_forget_bias"] = o.unit_forget_bias;
  c.update({{"kernel_regularizer", nullptr}, {"recurrent_regularizer", nullptr}, {"bias_regularizer", nullptr},
            {"activity_regularizer", nullptr}, {"kernel_constraint", nullptr}, {"recurrent_constraint", nullptr},
            {"bias_constraint", nullptr}, {"dropout", 0.0}, {"recurrent_dropout", 0.0}});
  if (rnn->cell() == RecurrentCell::gru) c["reset_after"] = o.reset_after;
  if (w.keras2 && rnn->cell() != RecurrentCell::simple_rnn) c["implementation"] = 2;
  return true;
}

}  // namespace

const LayerFamily& recurrent_layers() {
  static const LayerFamily family{{{"SimpleRNN", read_simple_rnn}, {"LSTM", read_lstm}, {"GRU", read_gru}},
                                  write_recurrent};
  return family;
}

}  // namespace nnfit::keras_json
