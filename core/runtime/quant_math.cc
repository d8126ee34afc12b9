// SPDX-License-Identifier: Apache-2.0
#include "runtime/quant_math.h"

#include <string>

#include "util/error.h"

namespace fx {

std::vector<int32_t> zero_points_of(const Tensor* zp, const char* what) {
  if (!zp) return {0};
  std::vector<int32_t> out(static_cast<std::size_t>(zp->numel()));
  switch (zp->dtype()) {
    case DType::UInt8:
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = zp->data<uint8_t>()[i];
      break;
    case DType::Int8:
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = zp->data<int8_t>()[i];
      break;
    case DType::Int32:
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = zp->data<int32_t>()[i];
      break;
    default:
      throw Error(std::string(what) + ": zero point must be uint8, int8 or int32, got " +
                  zp->str());
  }
  if (out.empty()) throw Error(std::string(what) + ": empty zero point " + zp->str());
  return out;
}

int32_t scalar_zero_point(const Tensor* zp, const char* what) {
  auto v = zero_points_of(zp, what);
  if (v.size() != 1) {
    throw Error(std::string(what) + ": expected a per-tensor zero point, got " + zp->str());
  }
  return v[0];
}

std::vector<float> scales_of(const Tensor& scale, const char* what) {
  if (scale.dtype() != DType::Float32) {
    throw Error(std::string(what) + ": scale must be float32, got " + scale.str());
  }
  if (scale.numel() == 0) throw Error(std::string(what) + ": empty scale " + scale.str());
  return std::vector<float>(scale.data<float>(), scale.data<float>() + scale.numel());
}

}  // namespace fx
