// Sequential's inference loops: evaluate (from tensors or a Dataset) and predict. Each
// batch runs the inference program of its size, or, under on_oom="reduce_batch" when that
// does not fit, its micro-batches (sequential_accumulate.cpp).
#include <cstring>

#include "model/fit_data.h"
#include "model/sequential_impl.h"
#include "nnfit/core/error.h"
#include "nnfit/data/in_memory_dataset.h"

namespace nnfit {

using namespace fit_data;

Logs Sequential::evaluate(const Tensor& x, const Tensor& y, std::int64_t batch_size) {
  InferenceOptions o;
  o.batch_size = batch_size;
  return evaluate(x, y, o);
}

Logs Sequential::evaluate(const Tensor& x, const Tensor& y, const InferenceOptions& options) {
  std::vector<std::string> notes;
  OomScope scope(*this, options.on_oom, &notes, options.on_note);
  return evaluate_tensors(x, y, options.batch_size, "evaluation");
}

Logs Sequential::evaluate_tensors(const Tensor& x_in, const Tensor& y_in, std::int64_t batch_size, const char* what) {
  check_built();
  NNFIT_CHECK(batch_size > 0, InvalidArgument, "batch_size must be positive, got ", batch_size);
  PreparedData d = prepare_data(x_in, y_in, input_shape_, output_shape(), compile_options_, "no samples to evaluate");
  const std::int64_t n = d.n;
  data::InMemoryDataset ds(d.x, d.y);
  std::vector<Metric> metrics = make_metrics(compile_options_, one_prediction(output_shape()));
  const std::int64_t bs = std::min(batch_size, n);
  auto it = ds.batches(bs, false, 0, 0);
  StepContext ctx;
  ctx.training = false;
  double loss_sum = 0;
  std::int64_t seen = 0;
  while (seen < n) {
    std::int64_t rows = std::min(bs, n - seen);
    Entry& e = entry_or_split(false, rows, what);
    std::int64_t got = it.next(e.x_data(), e.y_data());
    NNFIT_CHECK(got == rows, InvalidArgument, "internal: evaluation batch of ", got, " rows, expected ", rows);
    run_entry(e, rows, ctx);
    loss_sum += static_cast<double>(e.loss_value()) * static_cast<double>(rows);
    for (Metric& m : metrics) m.update(e.pred_data(), e.y_data(), rows, e.program.graph().desc(e.pred));
    seen += rows;
  }
  Logs logs;
  for (const Metric& m : metrics) logs.push_back({m.name(), m.result()});
  logs.push_back({"loss", loss_sum / static_cast<double>(n)});
  return logs;
}

Logs Sequential::evaluate(const data::Dataset& data) { return evaluate(data, InferenceOptions{}); }

Logs Sequential::evaluate(const data::Dataset& data, const InferenceOptions& options) {
  std::vector<std::string> notes;
  OomScope scope(*this, options.on_oom, &notes, options.on_note);
  return evaluate_dataset(data, nullptr, "evaluation");
}

Logs Sequential::evaluate_dataset(const data::Dataset& data, data::Autotuner* tuner, const char* what) {
  check_built();
  std::vector<Metric> metrics = make_metrics(compile_options_, one_prediction(output_shape()));
  StepContext ctx;
  ctx.training = false;
  double loss_sum = 0;
  std::int64_t seen = 0, index = 0;
  std::unique_ptr<data::Iterator> it;
  std::optional<data::Autotuner> own;
  if (!tuner) tuner = &own.emplace();
  it = tuner->make_iterator(data);
  while (std::optional<data::Element> el = it->next()) {
    Entry& e = stage_element(*el, what, index++);
    const std::int64_t rows = (*el)[0].shape()[0];
    run_entry(e, rows, ctx);
    e.set_x(nullptr);  // the element goes at the end of this iteration
    loss_sum += static_cast<double>(e.loss_value()) * static_cast<double>(rows);
    for (Metric& m : metrics) m.update(e.pred_data(), e.y_data(), rows, e.program.graph().desc(e.pred));
    seen += rows;
  }
  NNFIT_CHECK(seen > 0, InvalidArgument, "no samples to evaluate: the dataset is empty");
  Logs logs;
  for (const Metric& m : metrics) logs.push_back({m.name(), m.result()});
  logs.push_back({"loss", loss_sum / static_cast<double>(seen)});
  return logs;
}

Tensor Sequential::predict(const Tensor& x, std::int64_t batch_size) {
  InferenceOptions o;
  o.batch_size = batch_size;
  return predict(x, o);
}

Tensor Sequential::predict(const Tensor& x_in, const InferenceOptions& options) {
  check_built();
  const std::int64_t batch_size = options.batch_size;
  NNFIT_CHECK(batch_size > 0, InvalidArgument, "batch_size must be positive, got ", batch_size);
  std::vector<std::string> notes;
  OomScope scope(*this, options.on_oom, &notes, options.on_note);
  Tensor x = prepare_inputs(x_in, input_shape_);
  const std::int64_t n = x.shape()[0];
  Shape out = output_shape();
  std::vector<std::int64_t> od{n};
  od.insert(od.end(), out.dims().begin(), out.dims().end());
  Tensor result = Tensor::zeros(Shape(od), DType::f32);
  const std::size_t x_row = n ? x.nbytes() / static_cast<std::size_t>(n) : 0;
  const std::size_t o_row = static_cast<std::size_t>(out.numel()) * sizeof(float);
  StepContext ctx;
  ctx.training = false;
  for (std::int64_t start = 0; start < n; start += batch_size) {
    std::int64_t rows = std::min(batch_size, n - start);
    Entry& e = entry_or_split(false, rows, "prediction");
    std::memcpy(e.x_data(), static_cast<const char*>(x.raw()) + static_cast<std::size_t>(start) * x_row,
                static_cast<std::size_t>(rows) * x_row);
    if (e.y >= 0) std::memset(e.y_data(), 0, e.program.graph().desc(e.y).bytes());
    run_entry(e, rows, ctx);
    std::memcpy(static_cast<char*>(result.raw()) + static_cast<std::size_t>(start) * o_row, e.pred_data(),
                static_cast<std::size_t>(rows) * o_row);
  }
  return result;
}

}  // namespace nnfit
