// `nnfit train CONFIG.json`: read the config, build and compile the Keras model, load the
// IDX data, fit with a progress bar and, with --metrics-json, a machine-readable record.
// The config and the model are checked before any data is read, so a typo costs no time.
// Under an MPI launcher (`mpirun -np N nnfit train`) it trains data-parallel: every rank
// runs this command, rank 0 alone writes files and prints, and a failure on any rank ends
// the job with one line per rank naming the failed rank (docs/design/distributed.md).
#include <sched.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <memory>
#include <new>

#include "commands.h"
#include "cli_checks.h"
#include "memory_flags.h"
#include "metrics_json_writer.h"
#include "nnfit/core/determinism.h"
#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"
#include "nnfit/core/units.h"
#include "nnfit/data/in_memory_dataset.h"
#include "nnfit/dist/communicator.h"
#include "nnfit/dist/strategy.h"
#include "nnfit/io/idx.h"
#include "nnfit/model/callbacks.h"
#include "nnfit/model/checkpoint_callbacks.h"
#include "nnfit/backend/device_placement.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/model/saving.h"
#include "nnfit/model/targets.h"
#include "nnfit/model/tensorboard_callback.h"
#include "nnfit/model/training_callbacks.h"
#include "nnfit/profile/step_log.h"
#include "stop_signals.h"
#include "nnfit/config/train_config.h"

namespace nnfit::cli {
namespace {

struct TrainArgs {
  std::string config;
  std::int64_t epochs = 0, steps_per_epoch = 0, batch_size = 0, seed = 0;
  std::string dtype_policy;
  std::string device;  // --device: overrides fit.device
  int threads = 0;
  std::string metrics_json;
  std::string logdir;
  std::string profile_steps;
  std::string save;        // --save PATH
  bool deterministic = false;
  std::string backup_dir;  // --backup-dir DIR
  bool quiet = false;
  std::string collective_timeout = "5m";
  std::string bucket_size = "256KiB";
  bool no_overlap = false;
  std::string communication = "auto";  // --communication-implementation
  MemoryFlags memory;
  CLI::Option* epochs_opt = nullptr;
  CLI::Option* steps_per_epoch_opt = nullptr;
  CLI::Option* batch_size_opt = nullptr;
  CLI::Option* seed_opt = nullptr;
};

// --threads, else NNFIT_NUM_THREADS, else every core this process may run on.
int default_threads() {
  if (auto v = env_flag("NNFIT_NUM_THREADS"); v && !v->empty()) {
    try {
      std::size_t used = 0;
      int n = std::stoi(*v, &used);
      if (used == v->size() && n > 0) return n;
    } catch (const std::exception&) {
    }
    throw InvalidArgument("NNFIT_NUM_THREADS=" + *v + ": expected a positive integer");
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return 1;
}

// A row count that an IDX header promises, for error messages.
std::string rows(std::int64_t n, const char* what) { return std::to_string(n) + " " + what; }

// Targets as the loss wants them (convert_targets, as fit converts them): class ids (i32)
// for sparse losses, else f32 values shaped like one prediction. A refused label becomes a
// DataError naming the file and, for uint8 labels (one byte each after the IDX header),
// its byte offset.
Tensor load_targets(const Tensor& labels, const std::string& file, const Model& model, const Loss& loss) {
  const std::int64_t n = labels.shape()[0];
  std::vector<std::int64_t> pred_dims{n};
  const Shape out = model.output_shape();
  pred_dims.insert(pred_dims.end(), out.dims().begin(), out.dims().end());
  const TensorDesc want = loss.target_desc({Shape(pred_dims), DType::f32});
  if (labels.numel() != want.shape.numel()) {
    throw DataError(file, -1,
                    "labels of shape " + labels.shape().to_string() + " do not fit the model's output " +
                        out.to_string() + " under " + loss.kind + " (expected " + want.shape.to_string() + ")");
  }
  Tensor y = Tensor::zeros(want.shape, want.dtype);
  const std::int64_t classes = out.rank() > 0 ? out.dim(-1) : 0;
  // With one unit (or none) the CLI bounds class ids only below: any non-negative integer
  // that fits the int32 target.
  const std::int64_t bound = classes > 1 ? classes : std::int64_t{1} << 31;
  try {
    convert_targets(labels, want, n, y.raw(), bound);
  } catch (const BadClassId& e) {
    const std::int64_t header = 4 + 4 * static_cast<std::int64_t>(labels.shape().rank());
    const std::int64_t offset = labels.dtype() == DType::u8 ? header + e.row() : -1;
    throw DataError(file, offset,
                    "label " + std::to_string(e.value()) + " of example " + std::to_string(e.row()) +
                        " is not a class id in [0, " + std::to_string(classes) + ")",
                    "the model's last layer has " + std::to_string(classes) + " units; labels must be below that");
  }
  return y;
}

std::pair<Tensor, Tensor> load_split(const config::DataFiles& files, const Model& model, const Loss& loss) {
  Tensor images = io::read_idx(files.images);
  Tensor labels = io::read_idx(files.labels);
  const std::int64_t n = images.shape()[0];
  if (labels.shape()[0] != n) {
    throw DataError(files.labels, -1,
                    "holds " + rows(labels.shape()[0], "labels") + " but " + files.images + " holds " +
                        rows(n, "images"),
                    "images and labels must come from the same split");
  }
  if (n == 0) throw DataError(files.images, -1, "holds no examples");
  const Shape& in = model.input_shape();
  if (images.numel() / n != in.numel()) {
    std::vector<std::int64_t> sample(images.shape().dims().begin() + 1, images.shape().dims().end());
    throw DataError(files.images, -1,
                    "each image has shape " + Shape(sample).to_string() + " but the model's input shape is " +
                        in.to_string(),
                    "make the model's InputLayer batch_shape match the images");
  }
  const float scale = images.dtype() == DType::u8 ? 1.0f / 255 : 1.0f;
  return {data::InMemoryDataset::to_float(images, scale, in), load_targets(labels, files.labels, model, loss)};
}

// Errors from compile() name the layer but not the file.
template <typename F>
void with_file(const std::string& file, F&& f) {
  try {
    f();
  } catch (const Unsupported& e) {
    throw Unsupported(file + ": " + e.what(), e.hint());
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(file + ": " + e.what(), e.hint());
  }
}

// Callbacks that write files run on rank 0 only; the others (EarlyStopping,
// ReduceLROnPlateau, TerminateOnNaN) run on every rank, which all see the same logs.
bool writes_files(const Callback* cb) {
  return dynamic_cast<const ModelCheckpoint*>(cb) || dynamic_cast<const BackupAndRestore*>(cb) ||
         dynamic_cast<const CSVLogger*>(cb) || dynamic_cast<const TensorBoard*>(cb);
}

int run_train(const TrainArgs& args, dist::Communicator& comm) {
  const bool root = comm.rank() == 0;
  if (!args.profile_steps.empty()) {
    if (args.logdir.empty()) {
      throw InvalidArgument("--profile-steps " + args.profile_steps + " needs --logdir DIR to write the trace to",
                            "add --logdir DIR; the trace goes to DIR/train/plugins/profile/<timestamp>/");
    }
    profile::parse_step_range(args.profile_steps);  // a malformed range fails before any work
  }
  config::TrainConfig cfg = config::read_train_config(args.config);
  // Before any kernel is made: results independent of the thread count.
  if (args.deterministic || cfg.deterministic) set_op_determinism(true);
  if (*args.epochs_opt) cfg.epochs = args.epochs;
  if (*args.steps_per_epoch_opt) cfg.steps_per_epoch = args.steps_per_epoch;
  if (*args.batch_size_opt) cfg.batch_size = args.batch_size;
  if (*args.seed_opt) cfg.seed = static_cast<std::uint64_t>(args.seed);

  // Before the model exists: an explicit device that cannot be used is a usage error
  // (exit 2), and the default looks at the driver before it loads the CUDA plugin.
  const DevicePlacement placement =
      place_device(args.device.empty() ? parse_device_request(cfg.device, cfg.path + ": fit.device")
                                       : parse_device_request(args.device, "--device"),
                   "", comm.local_rank());
  const MemoryPolicy memory = resolve_memory_policy(cfg.memory, cfg.path, args.memory);
  std::optional<DTypePolicy> policy;
  if (!args.dtype_policy.empty()) policy = DTypePolicy::from_name(args.dtype_policy);
  if (policy && cfg.compile) cfg.compile->dtype_policy = policy;  // the flag overrides compile.dtype_policy
  // Under a launcher with several ranks: one replica per rank, chosen before compile.
  std::shared_ptr<dist::Strategy> strategy;
  if (comm.size() > 1) {
    dist::CommunicationOptions co;
    co.bytes_per_pack = parse_size_bytes(args.bucket_size, "--bucket-size");
    co.overlap = !args.no_overlap;
    co.timeout_seconds = dist::parse_duration_seconds(args.collective_timeout, "--collective-timeout");
    co.implementation = args.communication == "nccl"   ? dist::CommunicationImplementation::nccl
                        : args.communication == "ring" ? dist::CommunicationImplementation::ring
                                                       : dist::CommunicationImplementation::automatic;
    // A non-owning handle: the communicator outlives the model (run_train's caller owns it).
    strategy = std::make_shared<dist::MultiWorkerMirroredStrategy>(
        std::shared_ptr<dist::Communicator>(&comm, [](dist::Communicator*) {}), co);
  }
  auto configure = [&](Model& m) {
    if (policy) m.set_dtype_policy(*policy);
    m.set_device(placement.device);
    m.set_memory_policy(memory);
    m.set_num_threads(args.threads > 0 ? args.threads : default_threads());
    m.set_seed(cfg.seed);
    if (strategy) m.set_strategy(strategy);
  };
  std::unique_ptr<Model> model;
  if (!cfg.model_file.empty()) {
    // Fine-tuning a saved model: its weights, and its compile config (optimizer state
    // included) unless the config compiles it anew.
    LoadOptions lo;
    lo.compile = !cfg.compile;
    lo.configure = configure;
    model = load_model(cfg.model_file, lo);
    if (!model->compiled() && !cfg.compile) {
      throw InvalidArgument(cfg.path + ": " + cfg.model_file + " has no compile config; give a \"compile\" section");
    }
  } else {
    model = model_from_keras_json(cfg.model_json, cfg.model_where);
    configure(*model);
  }
  if (cfg.compile) with_file(cfg.model_where, [&] { model->compile(*cfg.compile); });
  const Loss loss = model->compile_options().loss;

  FitOptions fit;
  fit.epochs = cfg.epochs;
  fit.batch_size = cfg.train.pipeline ? cfg.train.pipeline->batch_size(cfg.batch_size) : cfg.batch_size;
  fit.shuffle = cfg.shuffle;
  fit.seed = cfg.seed;
  fit.on_oom = cfg.on_oom;
  fit.class_weight = cfg.class_weight;
  fit.steps_per_epoch = cfg.steps_per_epoch;
  fit.validation_freq = cfg.validation_freq;
  fit.validation_epochs = cfg.validation_epochs;
  fit.validation_steps = cfg.validation_steps;
  // Rank 0 alone prints, as it alone writes (the ranks agree on what the notes are about:
  // Note [Micro-batches across ranks]).
  if (root) fit.on_note = [](const std::string& note) { std::fprintf(stderr, "nnfit: note: %s\n", note.c_str()); };
  std::pair<Tensor, Tensor> train_tensors;
  std::optional<data::Dataset> train_dataset;
  if (cfg.train.files) {
    train_tensors = load_split(*cfg.train.files, *model, loss);
  } else {
    // With a log dir the stages are measured for LOGDIR/pipeline.json (nnfit profile).
    config::PipelineProbe probe;
    train_dataset = config::build_pipeline(*cfg.train.pipeline, cfg.batch_size, cfg.seed, args.logdir.empty() ? nullptr : &probe);
    if (train_dataset->cardinality() == data::kInfiniteCardinality && cfg.steps_per_epoch == 0) {
      throw InvalidArgument(cfg.path + ": data.train's pipeline repeats forever and fit.steps_per_epoch is not set, so "
                            "no epoch would end",
                            "set \"steps_per_epoch\" in the fit section (or --steps-per-epoch N), or give the repeat a count");
    }
    for (std::size_t i = 0; i < probe.names.size(); ++i) fit.pipeline_stages.emplace_back(probe.names[i], probe.stats[i]);
  }
  // fit.validation_batch_size: the files' batches, or a pipeline's batch that takes fit's size.
  if (cfg.validation && cfg.validation->files) {
    fit.validation_data = load_split(*cfg.validation->files, *model, loss);
    fit.validation_batch_size = cfg.validation_batch_size;
  } else if (cfg.validation) {
    fit.validation_dataset = config::build_pipeline(*cfg.validation->pipeline,
                                            cfg.validation_batch_size > 0 ? cfg.validation_batch_size : cfg.batch_size,
                                            cfg.seed);
    if (fit.validation_dataset->cardinality() == data::kInfiniteCardinality && cfg.validation_steps == 0) {
      throw InvalidArgument(cfg.path + ": data.validation's pipeline repeats forever and fit.validation_steps is not "
                            "set, so no validation would end",
                            "set \"validation_steps\" in the fit section, or give the repeat a count");
    }
  }

  // fit.callbacks from the config, then --backup-dir's BackupAndRestore.
  std::vector<std::unique_ptr<Callback>> owned;
  if (!cfg.callbacks_json.empty()) owned = callbacks_from_keras_json(cfg.callbacks_json, cfg.path + ": fit");
  if (!root) std::erase_if(owned, [](const auto& cb) { return writes_files(cb.get()); });
  if (!args.backup_dir.empty() && root) {
    BackupAndRestoreOptions bo;
    bo.backup_dir = args.backup_dir;
    owned.push_back(std::make_unique<BackupAndRestore>(bo));
  }
  ProgressBar progress(stdout);
  std::unique_ptr<MetricsJsonWriter> metrics;
  const bool quiet = args.quiet || !root;
  if (!quiet) {
    if (comm.size() > 1) {
      std::printf("data-parallel: %d ranks over %s, global batch %lld (%lld per rank)\n", comm.size(),
                  comm.name().c_str(), static_cast<long long>(fit.batch_size),
                  static_cast<long long>(fit.batch_size / comm.size()));
    }
    // The wide table (Keras's on a terminal of 112 columns or more), as the CLI has always printed it.
    std::fputs(model->summary(/*columns=*/112).c_str(), stdout);
    std::printf("Device: %s\n", placement.to_string().c_str());
    std::printf("Deterministic: %s\n", op_determinism() ? "yes (--deterministic: results independent of the thread count)"
                                                         : "same seed and thread count give the same bits (--deterministic: any thread count)");
    std::fflush(stdout);
    fit.callbacks.push_back(&progress);
  }
  if (!args.metrics_json.empty() && root) {
    metrics = std::make_unique<MetricsJsonWriter>(args.metrics_json, *model, fit.batch_size, placement.reason);
    fit.callbacks.push_back(metrics.get());
  }
  for (const auto& cb : owned) fit.callbacks.push_back(cb.get());
  std::unique_ptr<TensorBoard> tensorboard;
  if (!args.logdir.empty() && root) {
    TensorBoardOptions tb;
    tb.learning_rate = model->compile_options().optimizer.learning_rate;
    tb.monitor = true;  // host CPU/RAM and GPU figures per epoch, as `nnfit monitor` shows them
    tensorboard = std::make_unique<TensorBoard>(args.logdir, tb);
    fit.callbacks.push_back(tensorboard.get());
    fit.log_dir = args.logdir;
    fit.profile_steps = args.profile_steps;
  }
  // SIGINT / SIGTERM stop at the next step: callbacks' on_train_end run (backups, logs),
  // then exit 130 / 143 (docs/cli.md).
  StopSignals signals;
  fit.interrupt = signals.flag();
  History h;
  try {
    if (train_dataset || fit.validation_dataset) {
      // What a pipeline yields is only seen while training: an element that does not fit
      // the model is bad data met at run time (exit 1), named by split and batch.
      if (env_flag_enabled("NNFIT_VERBOSE")) {
        fit.autotune.log = [](const std::string& line) { std::fprintf(stderr, "nnfit: autotune: %s\n", line.c_str()); };
      }
      try {
        h = train_dataset ? model->fit(*train_dataset, fit) : model->fit(train_tensors.first, train_tensors.second, fit);
      } catch (const InvalidArgument& e) {
        throw Error(cfg.path + ": " + e.what(), e.hint());
      }
      if (!quiet && !h.autotune_summary.empty()) {
        std::printf("autotune: %s (%zu change%s; NNFIT_VERBOSE=1 logs each)\n", h.autotune_summary.c_str(),
                    h.autotune_decisions.size(), h.autotune_decisions.size() == 1 ? "" : "s");
      }
    } else {
      h = model->fit(train_tensors.first, train_tensors.second, fit);
    }
  } catch (const Unsupported& e) {
    // Raised while running, it is a runtime failure (exit 1), not a config error.
    throw Error(e.what(), e.hint());
  } catch (const OutOfMemory& e) {
    // "cpu:0: out of memory allocating 128 GiB" alone names neither the config nor the
    // value that sized it.
    throw OutOfMemory(cfg.path + ": training with batch size " + std::to_string(fit.batch_size) +
                          (*args.batch_size_opt ? " (--batch-size)" : " (fit.batch_size)") + ": " + e.what(),
                      e.hint().empty() ? "try a smaller --batch-size" : e.hint(), e.shared_details());
  }
  if (h.interrupted) {
    std::fflush(stdout);
    std::fprintf(stderr, "nnfit: %s: training stopped after %lld epoch(s) and %lld step(s) of the next; %s\n",
                 signal_name(h.interrupted), static_cast<long long>(h.stopped_epoch),
                 static_cast<long long>(h.stopped_step),
                 args.backup_dir.empty() && cfg.callbacks_json.find("BackupAndRestore") == std::string::npos
                     ? "no BackupAndRestore (--backup-dir): a rerun starts over"
                     : "the backup was written there: rerun the same command to go on from that step");
    if (!args.save.empty()) std::fprintf(stderr, "nnfit: --save skipped: training did not finish\n");
    return 128 + h.interrupted;
  }
  if (!args.save.empty() && root) {
    save_model(*model, args.save);
    if (!quiet) std::printf("saved the model to %s\n", args.save.c_str());
  }
  return 0;
}

// One process, or every rank of an MPI job. A failure on a rank becomes one line naming
// the rank on stderr, then the job ends (Note [Collective watchdog]); the other ranks
// print theirs, naming this one.
int run_train_ranks(const TrainArgs& args) {
  dist::CommunicatorOptions co;
  co.timeout_s = dist::parse_duration_seconds(args.collective_timeout, "--collective-timeout");
  std::unique_ptr<dist::Communicator> comm = dist::make_communicator(co);
  if (comm->size() == 1) return run_train(args, *comm);
  auto fail = [&](const std::string& what, const std::string& hint, int code) {
    std::fflush(stdout);
    std::string line = "rank " + std::to_string(comm->rank()) + ": " + what;
    for (char& c : line) {
      if (c == '\n') c = ' ';
    }
    std::fprintf(stderr, "nnfit: error: %s\n", clip_error_line(line).c_str());
    if (!hint.empty()) std::fprintf(stderr, "  hint: %s\n", clip_error_line(hint).c_str());
    std::fflush(stderr);
    comm->abort_job(what, code);
  };
  try {
    const int code = run_train(args, *comm);
    comm->barrier("the barrier at the end of training");
    return code;
  } catch (const InvalidArgument& e) {
    fail(e.what(), e.hint(), 2);
  } catch (const dist::PeerFailure& e) {
    fail(e.what(), e.hint(), 1);
  } catch (const dist::CollectiveTimeout& e) {
    fail(e.what(), e.hint(), 1);
  } catch (const OutOfMemory& e) {
    fail(std::string("OutOfMemory: ") + e.what(), e.hint(), 1);
  } catch (const Error& e) {
    fail(e.what(), e.hint(), 1);
  } catch (const std::bad_alloc&) {
    fail("out of host memory", "try a smaller --batch-size", 1);
  } catch (const std::exception& e) {
    fail(std::string("internal error: ") + e.what(), "please report this as a bug", 1);
  }
  return 1;  // not reached: fail() ends the job (Communicator::abort_job)
}

}  // namespace

Subcommand add_train_command(CLI::App& parent) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* app = parent.add_subcommand("train", "Train a Keras model described by a JSON config (docs/config.md)");
  app->add_option("config", args->config, "The config file: model, data, compile, fit")->required();
  args->epochs_opt = app->add_option("--epochs", args->epochs, "Override fit.epochs")->check(kFitsInt64)->check(kPositive);
  args->steps_per_epoch_opt = app->add_option("--steps-per-epoch", args->steps_per_epoch,
                                              "Override fit.steps_per_epoch (batches per epoch; the data's pass goes on "
                                              "into the next epoch)")
                                  ->check(kFitsInt64)
                                  ->check(kPositive);
  args->batch_size_opt =
      app->add_option("--batch-size", args->batch_size, "Override fit.batch_size")->check(kFitsInt64)->check(kPositive);
  args->seed_opt = app->add_option("--seed", args->seed, "Override fit.seed")->check(kFitsInt64)->check(kNonNegative);
  app->add_option("--dtype-policy", args->dtype_policy,
                  "Keras's dtype policy for the whole model: float32, mixed_bfloat16, mixed_float16, bfloat16, "
                  "float16 (overrides compile.dtype_policy; a layer's own \"dtype\" still wins)")
      ->check(kNotEmpty);
  app->add_option("--device", args->device,
                  "Where to train: cpu, cuda:N, or auto (the default: the first usable GPU, else the CPU); "
                  "overrides fit.device")
      ->check(kNotEmpty);
  app->add_option("--threads", args->threads,
                  "Compute threads (default: $NNFIT_NUM_THREADS, else all cores)")
      ->check(kPositive);
  app->add_option("--metrics-json", args->metrics_json,
                  "Rewrite this JSON file after every epoch with timings, memory and metrics (docs/cli.md)");
  app->add_option("--logdir", args->logdir,
                  "Write TensorBoard logs and the per-step breakdown here: LOGDIR/train, LOGDIR/validation, "
                  "LOGDIR/steps.jsonl, ops.json, pipeline.json (docs/outputs.md); read them with 'nnfit profile'");
  app->add_option("--profile-steps", args->profile_steps,
                  "Trace these global steps, e.g. 10-20 (from 1, inclusive), into "
                  "LOGDIR/train/plugins/profile/<timestamp>/<host>.trace.json.gz; needs --logdir");
  app->add_option("--save", args->save,
                  "Write the trained model here; the format follows the extension: .keras, .h5, .weights.h5");
  app->add_option("--backup-dir", args->backup_dir,
                  "Back up the run here after every epoch (Keras's BackupAndRestore); a run restarted with the same "
                  "directory resumes where it stopped, and a run that ends normally deletes it");
  add_memory_flags(*app, args->memory);
  app->add_option("--collective-timeout", args->collective_timeout,
                  "Under mpirun: a rank that waits this long in a collective (20s, 5m, 1h) ends the job, naming "
                  "the rank that did not arrive (default 5m)");
  app->add_option("--bucket-size", args->bucket_size,
                  "Under mpirun: gradients are summed across ranks in buckets of this size, each as soon as the "
                  "backward pass has made it (default 256KiB)");
  app->add_flag("--no-overlap", args->no_overlap,
                "Under mpirun: sum the gradient buckets after the backward pass instead of during it");
  app->add_option("--communication-implementation", args->communication,
                  "Under mpirun, a model on a GPU: auto (NCCL where every rank loads it, else host memory over MPI), "
                  "nccl (an error where it cannot be used) or ring (host memory over MPI); TensorFlow's "
                  "CommunicationImplementation")
      ->check(CLI::IsMember({"auto", "nccl", "ring"}));
  app->add_flag("--quiet,-q", args->quiet, "Print neither the model summary nor the progress bar");
  app->add_flag("--deterministic", args->deterministic,
                "Results independent of the number of threads (also fit.deterministic, NNFIT_DETERMINISTIC=1); "
                "runs with the same seed and thread count are bitwise equal either way");
  return {app, [args] { return run_train_ranks(*args); }};
}

}  // namespace nnfit::cli
