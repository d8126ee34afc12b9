// SPDX-License-Identifier: Apache-2.0
#include "runtime/tensor.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "util/error.h"

namespace fx {
namespace {

TEST(Tensor, OwnedStorageIsAlignedAndSized) {
  Tensor t(DType::Float32, {2, 3, 5});
  EXPECT_EQ(t.numel(), 30);
  EXPECT_EQ(t.byte_size(), 120u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw()) % kTensorAlignment, 0u);
  EXPECT_EQ(t.dim(-1), 5);
  EXPECT_THROW(t.dim(3), Error);
}

TEST(Tensor, CopiesShareStorageAndCloneDoesNot) {
  Tensor a = Tensor::from_floats({2, 2}, {1, 2, 3, 4});
  Tensor shared = a;
  Tensor deep = a.clone();
  a.data<float>()[0] = 9;
  EXPECT_EQ(shared.data<float>()[0], 9);
  EXPECT_EQ(deep.data<float>()[0], 1);
}

TEST(Tensor, ReshapedIsAViewAndChecksCount) {
  Tensor a = Tensor::from_floats({2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor v = a.reshaped({3, 2});
  EXPECT_EQ(v.raw(), a.raw());
  EXPECT_EQ(v.dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_THROW(a.reshaped({4, 2}), Error);
}

TEST(Tensor, FromDataViewsConstantBytesAndConverts) {
  auto d = TensorData::from_int64s({3}, {7, -1, 4});
  Tensor t = Tensor::from_data(d);
  EXPECT_EQ(t.dtype(), DType::Int64);
  EXPECT_EQ(t.raw(), static_cast<const void*>(d->bytes().data()));
  EXPECT_EQ(t.to_int64s(), (std::vector<int64_t>{7, -1, 4}));
  EXPECT_EQ(t.to_floats(), (std::vector<float>{7, -1, 4}));
  auto back = t.to_tensor_data();
  EXPECT_EQ(back->to_int64s(), d->to_int64s());
}

TEST(Tensor, NegativeDimIsAnError) { EXPECT_THROW(Tensor(DType::Float32, {2, -1}), Error); }

TEST(AlignedBuffer, GrowsOnlyWhenNeeded) {
  AlignedBuffer b;
  EXPECT_TRUE(b.reserve(100));
  std::size_t cap = b.capacity();
  EXPECT_GE(cap, 100u);
  EXPECT_FALSE(b.reserve(50));
  EXPECT_EQ(b.capacity(), cap);
  EXPECT_TRUE(b.reserve(cap + 1));
}

}  // namespace
}  // namespace fx
