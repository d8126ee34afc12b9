// SPDX-License-Identifier: Apache-2.0
#pragma once
// Values for the symbolic dimensions of a model's inputs that the user did not bind,
// so that every command works without --dim. The rule, in order:
//
//   1. by name (case-insensitive, split at non-alphanumerics):
//        batch-like   "batch", "batch_size", "bs", "n", "b", "num_images"  -> batch (1)
//        sequence     "seq", "sequence", "len", "length", "tokens", "past", "time",
//                     "steps", "frames", "src", "tgt" or names containing "seq",
//                     "len", "token", "past"                            -> sequence (128)
//        image        "height", "h", "width", "w" (or containing them)  -> height/width
//      a sequence-like name on axis 1 of a rank-2 floating-point input, used by no
//      integer input, is a waveform's length ([batch, samples]): token sequences come
//      as integer ids, feature sequences as rank 3    -> samples (16000)
//   2. by position, for names that say nothing ("unk__12", "p2o.DynamicDimension.0",
//      dims without a name):
//        axis 0 of an input of rank >= 2                                -> batch (1)
//        axes 2 and 3 of a 4-D floating-point input                     -> height/width
//        axis 1 of a rank-2 integer input (token ids) or of a rank-3
//        floating-point input ([batch, seq, features])                  -> sequence (128)
//   3. anything else                                                    -> other (64)
//
// Samples take one second of 16 kHz audio: speech models window the waveform in frames
// of hundreds of samples, so a token-sequence length (128) can be shorter than a window
// and leave a convolution nothing to compute.
// Height and width take 224 unless another image input of the model (4-D floating
// point with 1, 3 or 4 channels) has static spatial dims: then those (a model with a
// fixed-size sibling image runs at its size; a past key/value cache is no image). A symbol used by
// several inputs gets one value, the first input's.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/shape.h"

namespace fx::transforms {

struct DimDefaults {
  int64_t batch = 1;
  int64_t sequence = 128;
  int64_t samples = 16000;
  int64_t image = 224;
  int64_t other = 64;
};

enum class DimKind { Batch, Sequence, Samples, Height, Width, Other };
const char* dim_kind_name(DimKind k);

struct InputSignature {
  std::string name;
  DType dtype = DType::Undefined;
  Shape shape;
};

struct AssumedDim {
  std::string symbol;
  int64_t value = 0;
  DimKind kind = DimKind::Other;
  std::string input;  // the first input that has it
  int axis = 0;
};

// The assumed values of the symbols of `inputs` not in `bound`, in first-use order.
std::vector<AssumedDim> assume_dims(const std::vector<InputSignature>& inputs,
                                    const std::map<std::string, int64_t>& bound,
                                    const DimDefaults& defaults = {});

// "assumed: batch=1, seq=128; bind with --dim NAME=V" (empty when none was assumed).
std::string assumed_dims_text(const std::vector<AssumedDim>& dims);

}  // namespace fx::transforms
