// SPDX-License-Identifier: Apache-2.0
// ConvParts (runtime/conv_parts.h): grouped, 3-D and 1-D convolutions through each cut
// (channels-last or blocked with their reorders, split over channels or groups, single)
// agree with a direct reference, and the cut taken is the one the header promises. Which
// of channels-last and blocked a shape takes is oneDNN's choice for the CPU.

#include "runtime/conv_parts.h"

#include <cstdlib>

#include "runtime_test_util.h"

namespace fx {
namespace {

struct Case {
  std::vector<int64_t> x, w;  // ONNX dims
  int64_t group;
  std::vector<int64_t> stride, pad_l, pad_r;  // per spatial dim
};

std::vector<int64_t> out_dims(const Case& c) {
  std::vector<int64_t> out{c.x[0], c.w[0]};
  for (std::size_t i = 2; i < c.x.size(); ++i) {
    const std::size_t s = i - 2;
    out.push_back((c.x[i] + c.pad_l[s] + c.pad_r[s] - c.w[i]) / c.stride[s] + 1);
  }
  return out;
}

// Direct convolution over any number of spatial dims, in double.
std::vector<float> reference(const Case& c, const std::vector<float>& x,
                             const std::vector<float>& w, const std::vector<float>& b) {
  const auto out = out_dims(c);
  const std::size_t sp = c.x.size() - 2;
  const int64_t cg = c.x[1] / c.group, og = c.w[0] / c.group;
  std::vector<float> y(static_cast<std::size_t>(dims_numel(out)));
  std::vector<int64_t> o(sp), k(sp);
  int64_t out_plane = 1, in_plane = 1, taps = 1;
  for (std::size_t s = 0; s < sp; ++s) {
    out_plane *= out[2 + s];
    in_plane *= c.x[2 + s];
    taps *= c.w[2 + s];
  }
  for (int64_t n = 0; n < c.x[0]; ++n)
    for (int64_t oc = 0; oc < c.w[0]; ++oc)
      for (int64_t q = 0; q < out_plane; ++q) {
        for (std::size_t s = sp, r = static_cast<std::size_t>(q); s-- > 0;) {
          o[s] = static_cast<int64_t>(r) % out[2 + s];
          r /= static_cast<std::size_t>(out[2 + s]);
        }
        double acc = b[static_cast<std::size_t>(oc)];
        const int64_t g = oc / og;
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t t = 0; t < taps; ++t) {
            int64_t rem = t, in_off = 0;
            bool inside = true;
            for (std::size_t s = sp; s-- > 0;) {
              k[s] = rem % c.w[2 + s];
              rem /= c.w[2 + s];
            }
            for (std::size_t s = 0; s < sp; ++s) {
              const int64_t i = o[s] * c.stride[s] - c.pad_l[s] + k[s];
              inside = inside && i >= 0 && i < c.x[2 + s];
              in_off = in_off * c.x[2 + s] + i;
            }
            if (!inside) continue;
            acc +=
                static_cast<double>(
                    x[static_cast<std::size_t>((n * c.x[1] + g * cg + ci) * in_plane + in_off)]) *
                w[static_cast<std::size_t>((oc * cg + ci) * taps + t)];
          }
        y[static_cast<std::size_t>((n * c.w[0] + oc) * out_plane + q)] = static_cast<float>(acc);
      }
  return y;
}

// Runs `c` through ConvParts (channels-last allowed or not) and checks it against the
// reference; returns the cut taken.
ConvParts::Cut check(const Case& c, bool allow_channels_last, int* reorders = nullptr) {
  if (allow_channels_last)
    unsetenv("FX_NO_BLOCKED");
  else
    setenv("FX_NO_BLOCKED", "1", 1);
  auto x = test::random_floats(dims_numel(c.x), 1);
  auto w = test::random_floats(dims_numel(c.w), 2);
  auto b = test::random_floats(c.w[0], 3);
  ConvPartsSpec s;
  s.x = c.x, s.w = c.w, s.out = out_dims(c), s.group = c.group;
  s.strides = dnnl::memory::dims(c.stride.begin(), c.stride.end());
  s.dil = dnnl::memory::dims(c.stride.size(), 0);
  s.pl = dnnl::memory::dims(c.pad_l.begin(), c.pad_l.end());
  s.pr = dnnl::memory::dims(c.pad_r.begin(), c.pad_r.end());
  s.weights = w.data();
  s.bias = true;
  ConvParts parts(s, 2);
  unsetenv("FX_NO_BLOCKED");
  std::vector<float> y(static_cast<std::size_t>(dims_numel(s.out)));
  parts.run(x.data(), nullptr, b.data(), y.data(), 2);
  Tensor got = test::floats(s.out, y);
  EXPECT_THAT(got, test::FloatsNear(reference(c, x, w, b)))
      << "cut " << ConvParts::cut_name(parts.cut());
  if (reorders) *reorders = parts.reorders_per_run();
  return parts.cut();
}

// RegNet-like grouped 3x3 (8 groups of 16 channels), stride 2 with padding.
const Case kGrouped{{1, 128, 14, 14}, {128, 16, 3, 3}, 8, {2, 2}, {1, 1}, {1, 1}};
// R3D-like 3x3x3 over a short clip, padding on every side.
const Case k3d{{1, 16, 6, 10, 9}, {32, 16, 3, 3, 3}, 1, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}};
// R(2+1)D-like temporal 3x1x1, stride 2 in time.
const Case kTemporal{{1, 24, 7, 6, 6}, {48, 24, 3, 1, 1}, 1, {2, 1, 1}, {1, 0, 0}, {1, 0, 0}};

TEST(ConvParts, GroupedAgreesOnEveryCut) {
  const auto cut = check(kGrouped, true);
  EXPECT_NE(cut, ConvParts::Cut::Single) << "a grouped convolution of one image runs whole";
  EXPECT_EQ(check(kGrouped, false), ConvParts::Cut::Channels);
}

TEST(ConvParts, ThreeDimensionalAgreesOnEveryCut) {
  check(k3d, true);
  EXPECT_EQ(check(k3d, false), ConvParts::Cut::Channels);
  check(kTemporal, true);
  check(kTemporal, false);
}

// Splitting over groups: parts cover whole groups, the last range ragged (5 groups on 2
// threads), each reading only its own input channels.
TEST(ConvParts, GroupSplitWithOddGroupCount) {
  const Case c{{1, 40, 16, 16}, {60, 8, 3, 3}, 5, {1, 1}, {1, 1}, {1, 1}};
  EXPECT_EQ(check(c, false), ConvParts::Cut::Channels);
}

// Channels-last and blocked convert exactly the input and the output, once each per run;
// the plain cuts convert nothing.
TEST(ConvParts, ConvertingCutsCountTwoReordersOthersNone) {
  for (const Case& c : {k3d, kGrouped}) {
    int reorders = -1;
    const auto cut = check(c, true, &reorders);
    const bool converts = cut == ConvParts::Cut::ChannelsLast || cut == ConvParts::Cut::Blocked;
    EXPECT_EQ(reorders, converts ? 2 : 0);
    check(c, false, &reorders);
    EXPECT_EQ(reorders, 0);
  }
}

// Groups of 8 channels where the input and output blocks may be 8 or 16 wide: a part
// never starts inside a block (5 groups of 16 over 2 threads: ragged ranges).
TEST(ConvParts, BlockedGroupRangesStartOnBlocks) {
  check({{1, 64, 12, 12}, {64, 8, 3, 3}, 8, {1, 1}, {1, 1}, {1, 1}}, true);
  check({{1, 80, 10, 10}, {80, 16, 3, 3}, 5, {1, 1}, {1, 1}, {1, 1}}, true);
}

// Two images and a 1-D convolution: one primitive, never split.
TEST(ConvParts, BatchAndOneDimensionalRunWhole) {
  const Case batch{{2, 8, 6, 6}, {16, 4, 3, 3}, 2, {1, 1}, {1, 1}, {1, 1}};
  EXPECT_EQ(check(batch, true), ConvParts::Cut::Single);
  const Case line{{1, 8, 20}, {4, 8, 5}, 1, {1}, {2}, {2}};
  EXPECT_EQ(check(line, true), ConvParts::Cut::Single);
}

}  // namespace
}  // namespace fx
