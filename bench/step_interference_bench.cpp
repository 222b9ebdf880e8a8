// What the input pipeline's threads cost the training steps, measured inside one process.
// The Fashion-MNIST MLP of examples/fashion_mnist_mlp.json trains on batches that come,
// in alternating blocks of --block-steps steps, from the example's pipeline (cache,
// shuffle, batch 128, normalize, prefetch AUTOTUNE: its threads gather and normalize while
// the steps run) or from a replay of ready-made batches (normalize, batch, cache, prefetch:
// next to nothing runs beside the steps). Both feed the same model, under the same
// Autotuner, in the order A B B A A B B A ..., so whatever this shared machine does to
// memory and caches over seconds and minutes falls on both alike; separate runs
// alternated by a script differed by up to 30% in cycles per instruction here, which
// hides a 2% effect. The first --skip steps of each block are not counted (the other
// source's prefetch may still be refilling its buffer then).
//
// Per run: the ratio of the mean step compute time (forward + backward + update, from
// steps.jsonl) of each pipeline block to its paired replay block, their median and
// quartiles, and the input wait of the pipeline blocks as a share of their training time.
// Runs alternate over --threads for --rounds rounds; a Markdown table of the medians over
// runs closes the output (bench/RESULTS.md, "Input wait during training").
// Controls: --stream-mb N makes the pipeline also read N MiB per batch (memory
// interference the A/B must see); --prefetch N sets the pipeline's prefetch (default
// AUTOTUNE); --replay-batches N replays only N batches (kept in cache) instead of 469.
//
// cmake --build build/release --target nnfit_step_interference_bench
// build/release/nnfit_step_interference_bench [--threads 1,2] [--rounds 5] [--blocks 48]
//     [--block-steps 150] [--skip 15] [--stream-mb 0] [--prefetch -1] [--replay-batches -1]
//     [--fmnist DIR] [--model examples/fashion_mnist_mlp.json]
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <unistd.h>
#include <sstream>
#include <string>
#include <vector>

#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"
#include "nnfit/data/autotune.h"
#include "nnfit/data/dataset.h"
#include "nnfit/data/preprocessing.h"
#include "nnfit/data/sources.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/model/model.h"
#include "nnfit/profile/step_log.h"

using namespace nnfit;
using namespace nnfit::data;

namespace {

constexpr std::int64_t kBatch = 128;
constexpr std::int64_t kWarmupSteps = 2 * 469;  // one full pass of each source fills its cache

Element rescaled(Element e) { return Element{rescale(e[0], 1.0f / 255), e[1]}; }

// The source's element spec with x as f32, per sample (batched = false) or per batch.
ElementSpec f32_spec(const Dataset& idx, bool batched) {
  ElementSpec spec = idx.element_spec();
  spec[0].dtype = DType::f32;
  if (batched) {
    spec[0].shape = Shape{-1, 28, 28};
    spec[1].shape = Shape{-1};
  }
  return spec;
}

// The control: a map that also reads `bytes` of its own buffer per batch, so the pipeline
// competes with the steps for the shared cache and memory bandwidth: the A/B must show
// such interference when it is there, or its figure for the real pipeline means nothing.
Dataset::MapFn streaming(std::int64_t bytes) {
  auto buffer = std::make_shared<std::vector<std::uint64_t>>(static_cast<std::size_t>(bytes / 8), 1);
  auto sink = std::make_shared<std::atomic<std::uint64_t>>(0);
  return [buffer, sink](Element e) {
    std::uint64_t sum = 0;
    for (std::uint64_t v : *buffer) sum += v;
    sink->fetch_add(sum, std::memory_order_relaxed);
    return e;
  };
}

// Block b's source: A B B A, repeated (0: the pipeline, 1: the replay).
int source_of_block(std::int64_t b) { return (b % 4 == 0 || b % 4 == 3) ? 0 : 1; }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Settings {
  std::int64_t blocks = 48, block_steps = 150, skip = 15, replay_batches = -1;
  int prefetch = kAutotune;
  double stream_mb = 0;
  std::string fmnist, model_path = "examples/fashion_mnist_mlp.json";
};

struct Result {
  double ratio = 0, q1 = 0, q3 = 0;  // pipeline / replay step compute: median and quartiles over pairs
  double pipeline_us = 0, replay_us = 0;  // median block means
  double wait_percent = 0;
  std::string autotune;
};

Result measure(int threads, const Settings& st) {
  std::ifstream in(st.model_path);
  if (!in) throw InvalidArgument("cannot read " + st.model_path + " (run from the repository's root or give --model)");
  const nlohmann::json config = nlohmann::json::parse(in);
  std::unique_ptr<Model> model = model_from_keras_json(config.at("model").dump(), st.model_path);
  model->set_num_threads(threads);
  model->set_seed(1);
  CompileOptions co;
  co.optimizer = optimizer_from_keras_json(config.at("compile").at("optimizer").dump(), st.model_path);
  co.loss = loss_from_keras_json(config.at("compile").at("loss").dump(), st.model_path);
  model->compile(co);

  const Dataset idx =
      idx_dataset(st.fmnist + "/train-images-idx3-ubyte.gz", st.fmnist + "/train-labels-idx1-ubyte.gz");
  const ElementSpec spec = f32_spec(idx, true);
  // The example's pipeline, repeated inside its prefetch as fit's next-epoch start does.
  Dataset pipeline = idx.cache().shuffle(60000, ShuffleOptions{1}).batch(kBatch).map(rescaled, MapOptions{}, spec);
  if (st.stream_mb > 0) pipeline = pipeline.map(streaming(static_cast<std::int64_t>(st.stream_mb * (1 << 20))));
  pipeline = pipeline.repeat().prefetch(st.prefetch);
  const Dataset replay = idx.map(rescaled, MapOptions{}, f32_spec(idx, false))
                             .batch(kBatch)
                             .take(st.replay_batches)
                             .cache()
                             .repeat()
                             .prefetch(kAutotune);
  const std::int64_t blocks = st.blocks, block_steps = st.block_steps;
  const std::int64_t steps = kWarmupSteps + blocks * block_steps;
  // Built by fit under its Autotuner, so both sources' knobs are tuned as in training.
  auto factory = [&]() -> std::function<std::optional<Element>()> {
    auto a = std::shared_ptr<Iterator>(pipeline.make_iterator());
    auto b = std::shared_ptr<Iterator>(replay.make_iterator());
    auto step = std::make_shared<std::int64_t>(0);
    return [=]() -> std::optional<Element> {
      const std::int64_t s = (*step)++;
      if (s >= steps) return std::nullopt;
      int source = s < kWarmupSteps / 2 ? 0 : 1;
      if (s >= kWarmupSteps) source = source_of_block((s - kWarmupSteps) / block_steps);
      return (source == 0 ? a : b)->next();
    };
  };
  const std::string log_dir =
      (std::filesystem::temp_directory_path() / ("nnfit_step_interference_" + std::to_string(::getpid()))).string();
  FitOptions fo;
  fo.epochs = 1;
  fo.batch_size = kBatch;
  fo.log_dir = log_dir;
  const History h = model->fit(Dataset::from_generator(factory, spec, steps), fo);
  const std::vector<profile::StepRecord> log = profile::read_step_log(log_dir + "/steps.jsonl");
  std::filesystem::remove_all(log_dir);
  if (static_cast<std::int64_t>(log.size()) != steps) throw InvalidArgument("steps.jsonl has the wrong length");

  // Per block: the mean compute time of its counted steps (a pipeline thread that takes a
  // compute core now and then makes a few steps slow, which a median would not see); per
  // pipeline block, its wait.
  std::vector<double> block_mean(blocks);
  double wait_us = 0, total_us = 0;
  for (std::int64_t b = 0; b < blocks; ++b) {
    double sum = 0;
    for (std::int64_t i = st.skip; i < block_steps; ++i) {
      const profile::StepRecord& r = log[kWarmupSteps + b * block_steps + i];
      sum += static_cast<double>(r.forward_us + r.backward_us + r.update_us);
      if (source_of_block(b) == 0) {
        wait_us += static_cast<double>(r.input_wait_us);
        total_us += static_cast<double>(r.total_us());
      }
    }
    block_mean[b] = sum / static_cast<double>(block_steps - st.skip);
  }
  // Pairs (pipeline, replay) within each A B B A group: blocks (4k, 4k+1) and (4k+3, 4k+2).
  std::vector<double> ratios;
  for (std::int64_t g = 0; g < blocks; g += 4) {
    ratios.push_back(block_mean[g] / block_mean[g + 1]);
    ratios.push_back(block_mean[g + 3] / block_mean[g + 2]);
  }
  std::vector<double> by_source[2];
  for (std::int64_t b = 0; b < blocks; ++b) by_source[source_of_block(b)].push_back(block_mean[b]);
  Result r;
  r.ratio = median(ratios);
  std::sort(ratios.begin(), ratios.end());
  r.q1 = ratios[ratios.size() / 4];
  r.q3 = ratios[3 * ratios.size() / 4];
  r.pipeline_us = median(by_source[0]);
  r.replay_us = median(by_source[1]);
  r.wait_percent = 100.0 * wait_us / total_us;
  r.autotune = h.autotune_summary;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Settings st;
  st.fmnist = env_flag("FASHION_MNIST_DIR").value_or("/usr/share/datasets/fashion-mnist");
  std::vector<int> thread_counts{1, 2};
  int rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const char* v = argv[i + 1];
    if (!std::strcmp(argv[i], "--threads")) {
      thread_counts.clear();
      std::stringstream list(v);
      for (std::string t; std::getline(list, t, ',');) thread_counts.push_back(std::atoi(t.c_str()));
    } else if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(v);
    else if (!std::strcmp(argv[i], "--blocks")) st.blocks = std::atoll(v);
    else if (!std::strcmp(argv[i], "--block-steps")) st.block_steps = std::atoll(v);
    else if (!std::strcmp(argv[i], "--skip")) st.skip = std::atoll(v);
    else if (!std::strcmp(argv[i], "--prefetch")) st.prefetch = std::atoi(v);
    else if (!std::strcmp(argv[i], "--stream-mb")) st.stream_mb = std::atof(v);
    else if (!std::strcmp(argv[i], "--replay-batches")) st.replay_batches = std::atoll(v);
    else if (!std::strcmp(argv[i], "--fmnist")) st.fmnist = v;
    else if (!std::strcmp(argv[i], "--model")) st.model_path = v;
    else {
      std::fprintf(stderr, "step_interference_bench: unknown option %s (see the file's header)\n", argv[i]);
      return 2;
    }
  }
  const bool threads_ok = !thread_counts.empty() &&
                          std::all_of(thread_counts.begin(), thread_counts.end(), [](int t) { return t > 0; });
  if (st.blocks < 4 || st.blocks % 4 || st.block_steps <= st.skip || st.skip < 0 || rounds < 1 || !threads_ok) {
    std::fprintf(stderr, "step_interference_bench: --blocks must be a positive multiple of 4, --block-steps "
                         "larger than --skip, --rounds and every --threads value positive\n");
    return 2;
  }
  try {
    std::vector<std::vector<Result>> results(thread_counts.size());
    for (int round = 0; round < rounds; ++round) {
      for (std::size_t t = 0; t < thread_counts.size(); ++t) {
        const Result r = measure(thread_counts[t], st);
        results[t].push_back(r);
        std::printf("round %d, threads %d: step time vs replay %.4f (quartiles %.4f %.4f), compute %.1f / %.1f us, "
                    "input wait %.2f%%, autotune: %s\n",
                    round + 1, thread_counts[t], r.ratio, r.q1, r.q3, r.pipeline_us, r.replay_us, r.wait_percent,
                    r.autotune.c_str());
        std::fflush(stdout);
      }
    }
    std::printf("\n%lld blocks of %lld steps per run (first %lld of each not counted), %d rounds%s\n\n",
                static_cast<long long>(st.blocks), static_cast<long long>(st.block_steps),
                static_cast<long long>(st.skip), rounds,
                st.stream_mb > 0 ? (", the pipeline streaming " + std::to_string(st.stream_mb) + " MiB a batch").c_str()
                                 : "");
    std::printf("| compute threads | step time vs replay (median) | per run | input wait (median) | per run |\n");
    std::printf("|---:|---:|---|---:|---|\n");
    for (std::size_t t = 0; t < thread_counts.size(); ++t) {
      std::vector<double> ratio, wait;
      std::string ratios, waits;
      for (const Result& r : results[t]) {
        ratio.push_back(r.ratio);
        wait.push_back(r.wait_percent);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s%.3f", ratios.empty() ? "" : " ", r.ratio);
        ratios += buf;
        std::snprintf(buf, sizeof buf, "%s%.2f", waits.empty() ? "" : " ", r.wait_percent);
        waits += buf;
      }
      std::printf("| %d | %.3f | %s | %.2f%% | %s |\n", thread_counts[t], median(ratio), ratios.c_str(),
                  median(wait), waits.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "step_interference_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
