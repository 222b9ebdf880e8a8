// Model: the Keras-facing object (a graph of layer calls, its compile options, dtype
// policy and seed) and Sequential, the chain built on it. Whatever runs steps (backend,
// optimizer, programs, the fit / evaluate / predict loops) is the step engine's
// (src/engine/step_engine.h); Model's methods that need it forward to it.
#include "nnfit/model/model.h"

#include "engine/step_engine.h"
#include "nnfit/core/error.h"

namespace nnfit {

Model::Model(std::string name) : name_(std::move(name)), engine_(std::make_unique<StepEngine>(*this)) {}

Model::Model(std::string name, LayerGraph graph) : Model(std::move(name)) {
  graph_ = std::move(graph);
  NNFIT_CHECK(!graph_.inputs().empty() && !graph_.outputs().empty(), InvalidArgument, "model '", name_,
              "' needs at least one input and one output");
}

Model::~Model() {
  // The engine's programs (and their arena) go first, after the work still queued on the
  // device; then the layers' weights, while the engine's backend (their allocator) lives.
  engine_->release();
  graph_ = LayerGraph();
  engine_.reset();
}

void Model::limit_weight_elements(std::uint64_t elements, std::string source) {
  weight_budget_elements_ = elements;
  weight_budget_source_ = std::move(source);
}

Sequential::Sequential(std::string name) : Model(std::move(name)) {}

void Sequential::set_input_shape(Shape shape) {
  NNFIT_CHECK(!compiled_, InvalidArgument, "model '", name(), "': set_input_shape() must come before compile()");
  if (graph_.inputs().empty()) graph_.add_input("input_layer", std::move(shape));
  else graph_.set_input_shape(0, std::move(shape));
}

void Sequential::set_input(const InputSpec& input) {
  NNFIT_CHECK(graph_.inputs().empty() && graph_.layers().empty(), InvalidArgument, "model '", name(),
              "': set_input() must come before the layers");
  graph_.add_input(input.name, input.shape, input.dtype);
}

void Sequential::add(std::unique_ptr<Layer> layer) {
  NNFIT_CHECK(!compiled_, InvalidArgument, "cannot add layer '", layer->name(), "' after compile()");
  NNFIT_CHECK(layer->num_outputs() == 1, InvalidArgument, layer->name(), ": a Sequential model's layers ",
              "have one output each; use a Functional model");
  if (graph_.inputs().empty()) graph_.add_input("input_layer", Shape{});
  TensorRef prev = graph_.outputs().empty() ? graph_.input_ref(0) : graph_.outputs()[0];
  Layer& l = graph_.add_layer(std::move(layer));
  graph_.set_outputs(graph_.call(l, {prev}));
}

std::vector<Shape> Model::input_shapes() const {
  std::vector<Shape> out;
  for (const InputSpec& in : graph_.inputs()) out.push_back(in.shape);
  return out;
}

std::vector<Shape> Model::output_shapes() const { return graph_.output_shapes(); }

const Shape& Model::input_shape() const {
  NNFIT_CHECK(num_inputs() == 1, InvalidArgument, "model '", name_, "' has ", num_inputs(),
              " inputs; give one tensor per input");
  return graph_.inputs()[0].shape;
}

Shape Model::output_shape() const {
  NNFIT_CHECK(num_outputs() == 1, InvalidArgument, "model '", name_, "' has ", num_outputs(),
              " outputs; give one target per output");
  return output_shapes()[0];
}

std::vector<std::string> Model::output_names() const {
  if (!graph_.output_keys().empty()) return graph_.output_keys();  // a dict's keys, as Keras names its outputs
  std::vector<std::string> names;
  for (const TensorRef& r : graph_.outputs()) {
    const LayerNode& n = graph_.nodes()[static_cast<std::size_t>(r.node)];
    names.push_back(n.layer ? n.layer->name() : graph_.inputs()[static_cast<std::size_t>(n.input_index)].name);
  }
  return names;
}

std::int64_t Model::count_params() const { return graph_.count_params(); }

void Model::set_dtype_policy(const DTypePolicy& policy) {
  NNFIT_CHECK(!compiled(), InvalidArgument, "model '", name_, "': set the dtype policy (", policy.name,
              ") before compile");
  dtype_policy_ = policy;
}

// What runs steps: forwarded to the engine.
void Model::set_memory_policy(const MemoryPolicy& policy) { engine_->set_memory_policy(policy); }
const MemoryPolicy& Model::memory_policy() const { return engine_->memory_policy(); }
void Model::set_device(Device device) { engine_->set_device(device); }
void Model::set_backend(std::unique_ptr<Backend> backend) { engine_->set_backend(std::move(backend)); }
void Model::set_strategy(std::shared_ptr<dist::Strategy> strategy) { engine_->set_strategy(std::move(strategy)); }
const dist::Strategy* Model::strategy() const { return engine_->strategy_.get(); }
int Model::num_replicas_in_sync() const { return engine_->replica_count(); }
void Model::set_communicator(std::shared_ptr<dist::Communicator> comm, DataParallelOptions options) {
  engine_->set_communicator(std::move(comm), std::move(options));
}
dist::Communicator* Model::communicator() const { return engine_->comm_.get(); }
void Model::set_num_threads(int threads) { engine_->set_num_threads(threads); }
int Model::num_threads() const { return engine_->num_threads(); }
void Model::build() { engine_->build(); }
bool Model::built() const { return engine_->built(); }
void Model::compile(CompileOptions options) { engine_->compile(std::move(options)); }
History Model::fit(const Tensor& x, const Tensor& y, const FitOptions& options) { return engine_->fit(x, y, options); }
History Model::fit(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const FitOptions& options) {
  return engine_->fit(x, y, options);
}
History Model::fit(const data::Dataset& train, const FitOptions& options) { return engine_->fit(train, options); }
Logs Model::evaluate(const Tensor& x, const Tensor& y, std::int64_t batch_size) {
  return engine_->evaluate(x, y, batch_size);
}
Logs Model::evaluate(const data::Dataset& data) { return engine_->evaluate(data); }
Tensor Model::predict(const Tensor& x, std::int64_t batch_size) { return engine_->predict(x, batch_size); }
Logs Model::evaluate(const Tensor& x, const Tensor& y, const InferenceOptions& options) {
  return engine_->evaluate(x, y, options);
}
Logs Model::evaluate(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const InferenceOptions& options) {
  return engine_->evaluate(x, y, options);
}
Logs Model::evaluate(const data::Dataset& data, const InferenceOptions& options) {
  return engine_->evaluate(data, options);
}
Tensor Model::predict(const Tensor& x, const InferenceOptions& options) { return engine_->predict(x, options); }
std::vector<Tensor> Model::predict(const std::vector<Tensor>& x, const InferenceOptions& options) {
  return engine_->predict(x, options);
}
std::vector<Tensor> Model::get_weights() const { return engine_->get_weights(); }
void Model::set_weights(const std::vector<Tensor>& values) { engine_->set_weights(values); }
void Model::set_stop_training(bool stop) { engine_->stop_training_ = stop; }
bool Model::stop_training() const { return engine_->stop_training_; }
int Model::interrupted() const { return engine_->interrupted_; }
std::int64_t Model::interrupted_epoch() const { return engine_->interrupted_epoch_; }
std::int64_t Model::interrupted_step() const { return engine_->interrupted_step_; }
double Model::learning_rate() const { return engine_->learning_rate(); }
void Model::set_learning_rate(double learning_rate) { engine_->set_learning_rate(learning_rate); }
void Model::set_resume_point(std::int64_t epoch, std::int64_t step, const std::string& progress) {
  engine_->set_resume_point(epoch, step, progress);
}
std::string Model::training_progress() const { return engine_->training_progress(); }
std::int64_t Model::fit_initial_epoch() const { return engine_->fit_initial_epoch_; }
std::int64_t Model::fit_initial_step() const { return engine_->fit_initial_step_; }
const std::vector<Callback*>& Model::fit_callbacks() const { return engine_->fit_callbacks_; }
std::int64_t Model::iterations() const { return engine_->iterations_; }
void Model::set_iterations(std::int64_t iterations) { engine_->set_iterations(iterations); }
double Model::loss_scale() const { return engine_->loss_scale_; }
std::int64_t Model::loss_scale_good_steps() const { return engine_->loss_scale_good_steps_; }
void Model::set_loss_scale_state(double scale, std::int64_t good_steps) {
  engine_->set_loss_scale_state(scale, good_steps);
}
std::vector<Tensor> Model::optimizer_slots() const { return engine_->optimizer_slots(); }
Tensor Model::host_view(const Tensor& t) const { return engine_->host_view(t); }
void Model::write_tensor(const Tensor& dst, const Tensor& src) const { engine_->write_tensor(dst, src); }
MemoryPlan Model::plan_memory(std::int64_t batch_size, const std::vector<Shape>& samples) {
  return engine_->plan_memory(batch_size, samples);
}
MemoryStats Model::memory_stats() const { return engine_->memory_stats(); }
std::int64_t Model::largest_batch_size_within(std::int64_t limit_bytes, std::int64_t max_batch,
                                              const std::vector<Shape>& samples) {
  return engine_->largest_batch_size_within(limit_bytes, max_batch, samples);
}
ProgramCacheStats Model::program_cache_stats() const { return engine_->program_cache_stats(); }
std::vector<Shape> Model::output_shapes_for(const std::vector<Shape>& samples) const {
  const auto shapes = graph_.infer_shapes(samples);
  std::vector<Shape> out;
  for (const TensorRef& r : graph_.outputs()) out.push_back(shapes[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.index)]);
  return out;
}
Device Model::device() const { return engine_->device(); }
std::int64_t Model::planned_peak_bytes() const { return engine_->planned_peak_bytes(); }

}  // namespace nnfit
