// Input-pipeline throughput: a decode-and-augment JPEG pipeline and the Fashion-MNIST
// pipeline of examples/, each run sequentially (no parallel map, no prefetch), under
// every static setting of a small grid (map threads x prefetch depth), and with AUTOTUNE
// under the Autotuner fit uses: alone (the CPU budget is every core), and for
// Fashion-MNIST also feeding a consumer that spins 0.5 ms per batch, as a training step.
// Each configuration runs `rounds` times, alternating; a run is a first pass (AUTOTUNE
// tunes during it, as a training run would) and then passes counted until 0.5 s.
// Prints a markdown table for bench/RESULTS.md.
//
// Build: cmake --build build/release --target nnfit_pipeline_bench
// Run:   build/release/nnfit_pipeline_bench [--rounds 3] [--images 1500] [--fmnist DIR]
//          [--only jpeg|fmnist|consumer] (one of the three tables)
//          [--setting TEXT] (only the settings whose label contains TEXT, for profiling)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "nnfit/core/env_flags.h"
#include "nnfit/data/autotune.h"
#include "nnfit/data/preprocessing.h"
#include "nnfit/data/sources.h"
#include "nnfit/io/image.h"

namespace {

using namespace nnfit;
using namespace nnfit::data;
namespace fs = std::filesystem;

// 96x96 RGB JPEGs with smooth gradients and noise (so they compress like photos), in 5
// class folders. Written once; reused when present.
std::string make_jpegs(int count) {
  const fs::path dir = fs::temp_directory_path() / ("nnfit_bench_jpeg_" + std::to_string(count));
  if (fs::exists(dir / "done")) return dir.string();
  std::mt19937 rng(7);
  for (int i = 0; i < count; ++i) {
    const fs::path cls = dir / ("class_" + std::to_string(i % 5));
    fs::create_directories(cls);
    Tensor img = Tensor::zeros(Shape{96, 96, 3}, DType::u8);
    auto* p = img.data<std::uint8_t>();
    const int a = static_cast<int>(rng() % 200), b = static_cast<int>(rng() % 3);
    for (int y = 0; y < 96; ++y) {
      for (int x = 0; x < 96; ++x) {
        for (int c = 0; c < 3; ++c) {
          p[(y * 96 + x) * 3 + c] = static_cast<std::uint8_t>((a + x * (c + 1) + y * (b + 1) + static_cast<int>(rng() % 24)) & 255);
        }
      }
    }
    io::write_jpeg((cls / ("img_" + std::to_string(i) + ".jpg")).string(), img, 90);
  }
  std::FILE* f = std::fopen((dir / "done").c_str(), "w");
  if (f) std::fclose(f);
  return dir.string();
}

struct Setting {
  std::string label;
  int map_threads;  // 0 sequential, N, or kAutotune
  int prefetch;     // 0 none, N, or kAutotune
};

// The JPEG pipeline: decode (parallel map inside image_folder_dataset), augment
// (random crop 80x80, random flip, rescale to [0, 1]), batch 32, prefetch.
Dataset jpeg_pipeline(const std::string& dir, const Setting& s) {
  ImageFolderOptions o;
  o.channels = 3;
  o.num_parallel_calls = s.map_threads;
  Dataset ds = image_folder_dataset(dir, o).dataset;
  MapOptions mo;
  mo.num_parallel_calls = s.map_threads;
  mo.name = "map(augment)";
  ds = ds.enumerate().map(
      [](Element e) {
        const std::uint64_t seed = element_seed(1, static_cast<std::uint64_t>(*e[0].data<std::int64_t>()));
        Tensor img = random_crop(e[1], 80, 80, seed);
        img = random_flip_left_right(img, seed + 1);
        return Element{rescale(img, 1.0f / 255), e[2]};
      },
      mo, ElementSpec{{DType::f32, Shape{80, 80, 3}}, ds.element_spec()[1]});
  ds = ds.batch(32);
  if (s.prefetch != 0) ds = ds.prefetch(s.prefetch);
  return ds;
}

// examples/fashion_mnist_*.json's training pipeline: normalize, cache, shuffle, batch 128,
// prefetch.
Dataset fmnist_pipeline(const std::string& dir, const Setting& s) {
  Dataset ds = idx_dataset(dir + "/train-images-idx3-ubyte.gz", dir + "/train-labels-idx1-ubyte.gz");
  MapOptions mo;
  mo.num_parallel_calls = s.map_threads;
  mo.name = "map(normalize)";
  ElementSpec spec = ds.element_spec();
  spec[0].dtype = DType::f32;
  ds = ds.map([](Element e) { return Element{rescale(e[0], 1.0f / 255), e[1]}; }, mo, spec);
  ds = ds.cache().shuffle(60000, ShuffleOptions{1}).batch(128);
  if (s.prefetch != 0) ds = ds.prefetch(s.prefetch);
  return ds;
}

// Elements (samples) per second over passes 2 and 3 of a fresh pipeline. consumer_us > 0
// spins that long per batch on the consuming thread, as a training step would.
double run(const std::function<Dataset()>& make, bool autotune, std::string* choices, int consumer_us) {
  AutotuneOptions o;
  o.compute_threads = 0;
  Autotuner tuner(o);
  const Dataset ds = make();
  double seconds = 0;
  std::int64_t samples = 0;
  // Pass 0 fills caches and lets AUTOTUNE settle; then passes count until 0.5 s (at least
  // 2, at most 30), so cheap pipelines are not timed over a few tens of milliseconds.
  for (int pass = 0; pass < 3 || (seconds < 0.5 && pass < 31); ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    std::int64_t n = 0;
    {
      auto it = autotune ? tuner.make_iterator(ds) : ds.make_iterator();
      while (auto e = it->next()) {
        n += (*e)[0].shape()[0];
        if (consumer_us > 0) {
          const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(consumer_us);
          while (std::chrono::steady_clock::now() < end) {
          }
        }
      }
    }
    if (pass > 0) {
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      samples += n;
    }
  }
  if (choices) *choices = tuner.summary();
  return static_cast<double>(samples) / seconds;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string g_setting_filter;

void bench(const std::string& title, const std::function<Dataset(const Setting&)>& make, int rounds,
           int consumer_us = 0) {
  std::vector<Setting> settings = {{"sequential", 0, 0}};
  for (int t : {1, 2, 3}) {
    for (int p : {1, 4}) settings.push_back({"static: " + std::to_string(t) + " map thread(s), prefetch " + std::to_string(p), t, p});
  }
  settings.push_back({"AUTOTUNE", kAutotune, kAutotune});
  std::erase_if(settings, [](const Setting& s) { return s.label.find(g_setting_filter) == std::string::npos; });
  if (settings.empty()) return;
  std::vector<std::vector<double>> rates(settings.size());
  std::string choices;
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < settings.size(); ++i) {
      const bool tuned = settings[i].map_threads == kAutotune;
      rates[i].push_back(run([&] { return make(settings[i]); }, tuned, tuned ? &choices : nullptr, consumer_us));
    }
  }
  double best_static = 0;
  std::string best_label;
  for (std::size_t i = 0; i < settings.size(); ++i) {  // sequential is a static setting too
    if (settings[i].map_threads != kAutotune && median(rates[i]) > best_static) {
      best_static = median(rates[i]);
      best_label = settings[i].label;
    }
  }
  std::printf("\n### %s\n\n| setting | samples/s (median of %d) | vs best hand-set |\n|---|---:|---:|\n", title.c_str(), rounds);
  for (std::size_t i = 0; i < settings.size(); ++i) {
    std::printf("| %s | %.0f | %.2f |\n", settings[i].label.c_str(), median(rates[i]), median(rates[i]) / best_static);
  }
  std::printf("\nBest hand-set: %s. AUTOTUNE chose: %s.\n", best_label.c_str(), choices.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 3, images = 1500;
  std::string only;
  std::string fmnist = nnfit::env_flag("FASHION_MNIST_DIR").value_or("/usr/share/datasets/fashion-mnist");
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--images")) images = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--fmnist")) fmnist = argv[i + 1];
    if (!std::strcmp(argv[i], "--only")) only = argv[i + 1];
    if (!std::strcmp(argv[i], "--setting")) g_setting_filter = argv[i + 1];
  }
  auto wanted = [&](const char* table) { return only.empty() || only == table; };
  if (wanted("jpeg")) {
    const std::string jpegs = make_jpegs(images);
    bench("JPEG decode + augment (" + std::to_string(images) + " images 96x96, crop 80, flip, batch 32)",
          [&](const Setting& s) { return jpeg_pipeline(jpegs, s); }, rounds);
  }
  if (wanted("fmnist")) {
    bench("Fashion-MNIST (normalize, cache, shuffle 60000, batch 128), alone",
          [&](const Setting& s) { return fmnist_pipeline(fmnist, s); }, rounds);
  }
  // What training sees: a consumer busy 0.5 ms per batch of 128 (nnfit's MLP step on 2
  // threads here) cannot take more than 256k samples/s; the pipeline should not slow it.
  if (wanted("consumer")) {
    bench("Fashion-MNIST feeding a consumer that computes 0.5 ms per batch (at most 256,000 samples/s)",
          [&](const Setting& s) { return fmnist_pipeline(fmnist, s); }, rounds, 500);
  }
  return 0;
}
