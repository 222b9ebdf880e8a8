// image_folder_dataset: (path, label) slices from a class-per-folder tree, decoded by a
// parallel map through io::read_image.
#include <algorithm>
#include <cstring>
#include <filesystem>

#include "nnfit/core/error.h"
#include "nnfit/data/sources.h"
#include "nnfit/io/image.h"

namespace nnfit::data {

ImageFolder image_folder_dataset(const std::string& directory, const ImageFolderOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) {
    throw DataError(directory, -1, "not a directory", "point at a folder holding one sub-folder per class");
  }
  ImageFolder out{Dataset::range(0, 0), {}, 0};
  for (const auto& entry : fs::directory_iterator(directory)) {
    if (entry.is_directory()) out.class_names.push_back(entry.path().filename().string());
  }
  std::sort(out.class_names.begin(), out.class_names.end());
  std::vector<std::pair<std::string, std::int64_t>> files;
  for (std::size_t label = 0; label < out.class_names.size(); ++label) {
    std::vector<std::string> in_class;
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(directory) / out.class_names[label])) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() &&
          std::find(options.extensions.begin(), options.extensions.end(), ext) != options.extensions.end()) {
        in_class.push_back(entry.path().string());
      }
    }
    std::sort(in_class.begin(), in_class.end());
    for (std::string& p : in_class) files.emplace_back(std::move(p), static_cast<std::int64_t>(label));
  }
  if (files.empty()) {
    throw DataError(directory, -1,
                    out.class_names.empty() ? "no class sub-folders" : "no images with the accepted extensions",
                    "expected <dir>/<class name>/<image>.jpg|png");
  }
  out.files = static_cast<std::int64_t>(files.size());
  std::size_t longest = 0;
  for (const auto& f : files) longest = std::max(longest, f.first.size());
  // Paths as a [N, longest] u8 tensor with a length column, so the slices are views.
  Tensor paths = Tensor::zeros(Shape{out.files, static_cast<std::int64_t>(longest)}, DType::u8);
  Tensor lengths = Tensor::zeros(Shape{out.files}, DType::i64);
  Tensor labels = Tensor::zeros(Shape{out.files}, DType::i64);
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::memcpy(paths.data<std::uint8_t>() + i * longest, files[i].first.data(), files[i].first.size());
    lengths.data<std::int64_t>()[i] = static_cast<std::int64_t>(files[i].first.size());
    labels.data<std::int64_t>()[i] = files[i].second;
  }
  const int channels = options.channels;
  out.dataset = Dataset::from_tensor_slices({paths, lengths, labels})
                    .map(
                        [channels](Element e) {
                          const std::string path(static_cast<const char*>(e[0].raw()),
                                                 static_cast<std::size_t>(*e[1].data<std::int64_t>()));
                          return Element{io::read_image(path, channels), e[2]};
                        },
                        {.num_parallel_calls = options.num_parallel_calls, .deterministic = true, .name = "map(decode)"},
                        ElementSpec{{DType::u8, Shape{-1, -1, channels == 0 ? -1 : channels}}, {DType::i64, Shape{}}});
  return out;
}

}  // namespace nnfit::data
