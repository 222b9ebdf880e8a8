// The C++ API end to end: Keras's Fashion-MNIST MLP or convnet, trained and evaluated.
//   usage: train_fashion_mnist [mlp|cnn] [EPOCHS] [THREADS]
//   (FASHION_MNIST_DIR overrides the data path)
#include <cstdio>
#include <cstdlib>
#include <string>

#include "nnfit/core/error.h"
#include "nnfit/data/in_memory_dataset.h"
#include "nnfit/io/idx.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"

int main(int argc, char** argv) {
  using namespace nnfit;
  try {
    const char* env = std::getenv("FASHION_MNIST_DIR");
    std::string dir = env ? env : "/usr/share/datasets/fashion-mnist";
    std::string kind = argc > 1 ? argv[1] : "mlp";
    std::int64_t epochs = argc > 2 ? std::atoll(argv[2]) : 2;
    int threads = argc > 3 ? std::atoi(argv[3]) : 0;
    Shape sample = kind == "cnn" ? Shape{28, 28, 1} : Shape{28, 28};

    auto images = [&](const char* f) {
      return data::InMemoryDataset::to_float(io::read_idx(dir + "/" + f), 1.0f / 255, sample);
    };
    Tensor x = images("train-images-idx3-ubyte.gz"), y = io::read_idx(dir + "/train-labels-idx1-ubyte.gz");
    Tensor xt = images("t10k-images-idx3-ubyte.gz"), yt = io::read_idx(dir + "/t10k-labels-idx1-ubyte.gz");

    Sequential model("fashion_mnist_" + kind);
    model.set_input_shape(sample);
    if (kind == "cnn") {
      model.add(std::make_unique<Conv2D>("conv2d", Conv2DOptions{.filters = 32, .activation = "relu"}));
      model.add(std::make_unique<MaxPooling2D>("max_pooling2d", Pooling2DOptions{}));
      model.add(std::make_unique<Conv2D>("conv2d_1", Conv2DOptions{.filters = 64, .activation = "relu"}));
      model.add(std::make_unique<MaxPooling2D>("max_pooling2d_1", Pooling2DOptions{}));
      model.add(std::make_unique<Flatten>("flatten"));
      model.add(std::make_unique<Dropout>("dropout", 0.5));
    } else {
      model.add(std::make_unique<Flatten>("flatten"));
      model.add(std::make_unique<Dense>("dense", DenseOptions{.units = 128, .activation = "relu"}));
    }
    model.add(std::make_unique<Dense>("dense_1", DenseOptions{.units = 10}));
    model.set_num_threads(threads);
    model.set_seed(1);
    model.compile({.optimizer = {.name = "adam"},
                   .loss = Loss::from_name("sparse_categorical_crossentropy", /*from_logits=*/true),
                   .metrics = {"accuracy"}});
    std::printf("%s", model.summary().c_str());

    ProgressBar progress;
    FitOptions fit;
    fit.epochs = epochs;
    fit.batch_size = 128;
    fit.seed = 1;
    fit.validation_data = std::make_pair(xt, yt);
    fit.callbacks = {&progress};
    History history = model.fit(x, y, fit);
    for (const Logs& e : history.epochs) {
      std::printf("samples/s %.0f\n", log_value(e, "samples_per_s"));
    }
    std::printf("test accuracy %.4f\n", log_value(model.evaluate(xt, yt, 1000), "accuracy"));
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
