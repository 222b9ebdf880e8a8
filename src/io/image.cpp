// Image codecs. libjpeg reports errors through an error_exit callback that must not
// return; it longjmps back to decode_jpeg, which then throws a DataError (no C++ object
// with a destructor is created between setjmp and the libjpeg calls, so the jump skips
// nothing). libpng's simplified png_image API reports errors in image.message instead.
#include "nnfit/io/image.h"

#include <png.h>
#include <setjmp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

// jpeglib.h needs size_t and FILE declared first.
#include <jpeglib.h>
#include <jerror.h>

#include "nnfit/core/error.h"
#include "nnfit/io/regular_file.h"

namespace nnfit::io {
namespace {

struct JpegError {
  jpeg_error_mgr mgr;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  longjmp(err->jump, 1);
}
// A truncated file, or scan data that stops at a marker before the frame is complete
// (a frame header enlarged past its data), only warns in libjpeg, which pads the missing
// rows with gray; like TF's decode_jpeg (try_recover_truncated = false) we treat both as
// errors. Other warnings stay silent.
void jpeg_emit_message(j_common_ptr cinfo, int level) {
  if (level < 0 && (cinfo->err->msg_code == JWRN_JPEG_EOF || cinfo->err->msg_code == JWRN_HIT_MARKER)) {
    jpeg_error_exit(cinfo);
  }
}

// Note [Image sizes from headers]: a header's width and height are checked against what the
// file's bytes can hold before the image is allocated, so a 100-byte file claiming 65500 x
// 65500 pixels is refused, not decoded into 12 GB. Bounds: a sequential Huffman JPEG spends
// at least 2 bits per 8x8 block and component (a 1-bit DC code and a 1-bit end of block),
// so at most 256 pixels per byte; a progressive one codes every block's DC in its first
// scan, at least 1 bit each, so at most 512 pixels per byte (its AC scans can code runs of
// empty blocks in a few bits, and libjpeg holds the whole image's coefficients for it);
// PNG rows are deflated (at most 1032:1) and hold at least 1 bit per pixel, so at most
// 8256 pixels per byte. Arithmetic-coded JPEGs can spend less than a bit per block; for
// them, and for every image, the limit is kMaxImagePixels (2^28, 1 GiB as RGBA: past any
// image a network trains on).
constexpr std::uint64_t kMaxImagePixels = std::uint64_t{1} << 28;

void check_image_size(std::uint64_t width, std::uint64_t height, std::uint64_t max_pixels, const char* kind,
                      const std::string& file, std::size_t size) {
  const std::uint64_t pixels = width * height;  // both < 2^32
  const std::uint64_t limit = std::min(max_pixels, kMaxImagePixels);
  if (pixels <= limit) return;
  throw DataError(file, -1,
                  std::string(kind) + " header claims " + std::to_string(width) + " x " + std::to_string(height) +
                      " pixels, more than " + (limit == kMaxImagePixels ? std::string("nnfit decodes (2^28 pixels)")
                                                                        : "its " + std::to_string(size) + " bytes can hold"),
                  "the file is corrupt or truncated (or crafted); re-encode it, or remove it (ignore_errors() skips such images)");
}

Tensor decode_jpeg(const unsigned char* data, std::size_t size, const std::string& file, int channels) {
  NNFIT_CHECK(channels == 0 || channels == 1 || channels == 3, InvalidArgument,
              "decode_image: JPEG decodes to 1 or 3 channels, asked for ", channels);
  jpeg_decompress_struct cinfo{};
  JpegError err{};
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_error_exit;
  err.mgr.emit_message = jpeg_emit_message;
  Tensor out;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    throw DataError(file, -1, std::string("undecodable JPEG: ") + err.message,
                    "the file is corrupt or truncated; re-encode or remove it (ignore_errors() skips such images)");
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  const std::uint64_t pixels_per_byte = cinfo.arith_code ? 0 : cinfo.progressive_mode ? 512 : 256;
  const std::uint64_t max_pixels = pixels_per_byte ? pixels_per_byte * size + 4096 : kMaxImagePixels;
  if (cinfo.image_width == 0 || cinfo.image_height == 0 ||
      cinfo.image_width * std::uint64_t{cinfo.image_height} > std::min(max_pixels, kMaxImagePixels)) {
    // Leave libjpeg first: check_image_size throws, and a throw must not cross its frames.
    const std::uint64_t w = cinfo.image_width, h = cinfo.image_height;
    jpeg_destroy_decompress(&cinfo);
    check_image_size(w, h, max_pixels, "JPEG", file, size);
    throw DataError(file, -1, "JPEG header claims an empty image (" + std::to_string(w) + " x " + std::to_string(h) + ")");
  }
  if (channels == 1) cinfo.out_color_space = JCS_GRAYSCALE;
  if (channels == 3) cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  const std::int64_t h = cinfo.output_height, w = cinfo.output_width, c = cinfo.output_components;
  out = Tensor::uninitialized(Shape{h, w, c}, DType::u8);  // every row is written, or the decode fails
  auto* base = out.data<unsigned char>();
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = base + static_cast<std::size_t>(cinfo.output_scanline) * static_cast<std::size_t>(w * c);
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return out;
}

Tensor decode_png(const unsigned char* data, std::size_t size, const std::string& file, int channels) {
  NNFIT_CHECK(channels >= 0 && channels <= 4, InvalidArgument, "decode_image: PNG decodes to 1-4 channels, asked for ", channels);
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, data, size)) {
    throw DataError(file, -1, std::string("undecodable PNG: ") + image.message, "the file is corrupt or truncated");
  }
  int c = channels;
  if (c == 0) c = static_cast<int>(PNG_IMAGE_SAMPLE_CHANNELS(image.format));
  if (image.width * std::uint64_t{image.height} > 8256 * std::uint64_t{size} + 4096 ||
      image.width * std::uint64_t{image.height} > kMaxImagePixels) {
    const std::uint64_t w = image.width, h = image.height;
    png_image_free(&image);
    check_image_size(w, h, 8256 * std::uint64_t{size} + 4096, "PNG", file, size);
  }
  static constexpr png_uint_32 kFormats[] = {0, PNG_FORMAT_GRAY, PNG_FORMAT_GA, PNG_FORMAT_RGB, PNG_FORMAT_RGBA};
  image.format = kFormats[c];
  // Every row is written, or the decode fails: untouched pages of a lying header cost no RSS.
  Tensor out = Tensor::uninitialized(Shape{image.height, image.width, c}, DType::u8);
  if (!png_image_finish_read(&image, nullptr, out.raw(), 0, nullptr)) {
    const std::string message = image.message;
    png_image_free(&image);
    throw DataError(file, -1, "undecodable PNG: " + message, "the file is corrupt or truncated");
  }
  return out;
}

void check_u8_image(const Tensor& image, const char* who) {
  NNFIT_CHECK(image.dtype() == DType::u8 && image.shape().rank() == 3, InvalidArgument, who,
              ": expects a uint8 [H, W, C] image, got ", dtype_name(image.dtype()), " ", image.shape().to_string());
}

}  // namespace

ImageFormat sniff_image_format(const unsigned char* data, std::size_t size) {
  if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) return ImageFormat::jpeg;
  if (size >= 8 && std::memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0) return ImageFormat::png;
  return ImageFormat::unknown;
}

Tensor decode_image(const unsigned char* data, std::size_t size, const std::string& file, int channels) {
  switch (sniff_image_format(data, size)) {
    case ImageFormat::jpeg: return decode_jpeg(data, size, file, channels);
    case ImageFormat::png: return decode_png(data, size, file, channels);
    case ImageFormat::unknown: break;
  }
  throw DataError(file, 0, "not a JPEG or PNG image (unrecognized magic bytes)",
                  "nnfit decodes JPEG and PNG; convert other formats first");
}

Tensor read_image(const std::string& path, int channels) {
  require_regular_file(path, "an image file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path, -1, "cannot open image file", "check the path exists and is readable");
  const std::vector<unsigned char> bytes(std::istreambuf_iterator<char>(in), {});
  return decode_image(bytes.data(), bytes.size(), path, channels);
}

void write_jpeg(const std::string& path, const Tensor& image, int quality) {
  check_u8_image(image, "write_jpeg");
  const int c = static_cast<int>(image.shape()[2]);
  NNFIT_CHECK(c == 1 || c == 3, InvalidArgument, "write_jpeg: needs 1 or 3 channels, got ", c);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw DataError(path, -1, "cannot create image file");
  jpeg_compress_struct cinfo{};
  JpegError err{};
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_error_exit;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&cinfo);
    std::fclose(f);
    throw DataError(path, -1, std::string("JPEG encoding failed: ") + err.message);
  }
  jpeg_create_compress(&cinfo);
  jpeg_stdio_dest(&cinfo, f);
  cinfo.image_width = static_cast<JDIMENSION>(image.shape()[1]);
  cinfo.image_height = static_cast<JDIMENSION>(image.shape()[0]);
  cinfo.input_components = c;
  cinfo.in_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  const std::size_t stride = static_cast<std::size_t>(image.shape()[1]) * static_cast<std::size_t>(c);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = image.data<unsigned char>() + cinfo.next_scanline * stride;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  if (std::fclose(f) != 0) throw DataError(path, -1, "write failed (disk full?)");
}

void write_png(const std::string& path, const Tensor& image) {
  check_u8_image(image, "write_png");
  const int c = static_cast<int>(image.shape()[2]);
  NNFIT_CHECK(c >= 1 && c <= 4, InvalidArgument, "write_png: needs 1-4 channels, got ", c);
  static constexpr png_uint_32 kFormats[] = {0, PNG_FORMAT_GRAY, PNG_FORMAT_GA, PNG_FORMAT_RGB, PNG_FORMAT_RGBA};
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.shape()[1]);
  png.height = static_cast<png_uint_32>(image.shape()[0]);
  png.format = kFormats[c];
  if (!png_image_write_to_file(&png, path.c_str(), 0, image.raw(), 0, nullptr)) {
    throw DataError(path, -1, std::string("PNG encoding failed: ") + png.message);
  }
}

}  // namespace nnfit::io
