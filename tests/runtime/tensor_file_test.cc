// SPDX-License-Identifier: Apache-2.0
#include "onnx/tensor_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runtime/tensor.h"
#include "util/error.h"

namespace fx {
namespace {

TEST(TensorFile, RoundTripsThroughTensorProto) {
  auto dir = std::filesystem::temp_directory_path() / "fx_tensor_file_test";
  std::filesystem::create_directories(dir);
  std::string path = (dir / "t.pb").string();
  Tensor t = Tensor::from_floats({2, 2}, {1.5f, -2, 0, 7});
  write_tensor_file(path, *t.to_tensor_data(), "weights");
  std::string name;
  Tensor back = Tensor::from_data(read_tensor_file(path, &name));
  EXPECT_EQ(name, "weights");
  EXPECT_EQ(back.dims(), t.dims());
  EXPECT_EQ(back.to_floats(), t.to_floats());
}

TEST(TensorFile, MissingAndGarbageFilesAreFileErrors) {
  EXPECT_THROW(read_tensor_file("/nonexistent/x.pb"), FileError);
  auto path = std::filesystem::temp_directory_path() / "fx_tensor_file_garbage.pb";
  std::ofstream(path) << "\xff\xff\xff not a proto";
  EXPECT_THROW(read_tensor_file(path.string()), FileError);
}

}  // namespace
}  // namespace fx
