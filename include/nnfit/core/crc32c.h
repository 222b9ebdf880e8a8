// CRC-32C (Castagnoli) and TensorFlow's CRC mask, shared by every writer of TFRecord
// framing (io's TFRecord files, profile's tfevents). Lives in core because io and profile
// may not include each other.
#pragma once
#include <cstddef>
#include <cstdint>

namespace nnfit {

// CRC-32C: reflected polynomial 0x82F63B78, init and final xor 0xFFFFFFFF, as TF's
// tsl/lib/hash/crc32c.h: crc32c("123456789") == 0xE3069283. Thread-safe.
std::uint32_t crc32c(const void* data, std::size_t size);
// TF's mask: rotate right 15, add 0xA282EAD8 (so CRCs of CRC-bearing data stay useful).
std::uint32_t mask_crc(std::uint32_t crc);

}  // namespace nnfit
