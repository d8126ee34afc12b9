// SPDX-License-Identifier: Apache-2.0
#include "onnx/wire_format.h"

#include <stdexcept>

namespace fx::onnx_wire {
namespace {

constexpr uint32_t kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kStartGroup = 3, kEndGroup = 4,
                   kFixed32 = 5;

class Reader {
 public:
  Reader(std::span<const std::byte> buf, std::size_t base) : buf_(buf), base_(base) {}
  bool done() const { return pos_ >= buf_.size(); }
  std::size_t pos() const { return pos_; }
  std::size_t absolute(std::size_t p) const { return base_ + p; }

  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= buf_.size()) fail("truncated varint");
      auto b = static_cast<uint8_t>(buf_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    fail("varint longer than 10 bytes");
  }

  // Skips the payload of a field with the given wire type; returns [begin, end).
  std::pair<std::size_t, std::size_t> skip(uint32_t wire_type) {
    std::size_t begin = pos_;
    switch (wire_type) {
      case kVarint: varint(); break;
      case kFixed64: advance(8); break;
      case kFixed32: advance(4); break;
      case kLengthDelimited: {
        uint64_t len = varint();
        begin = pos_;
        advance(len);
        break;
      }
      case kStartGroup:
      case kEndGroup: fail("deprecated group field");
      default: fail("invalid wire type " + std::to_string(wire_type));
    }
    return {begin, pos_};
  }

  std::span<const std::byte> slice(std::size_t b, std::size_t e) const {
    return buf_.subspan(b, e - b);
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("malformed protobuf at byte " + std::to_string(base_ + pos_) + ": " +
                             what);
  }

 private:
  void advance(uint64_t n) {
    if (n > buf_.size() - pos_) fail("field runs past the end of the data (truncated file?)");
    pos_ += static_cast<std::size_t>(n);
  }

  std::span<const std::byte> buf_;
  std::size_t base_;
  std::size_t pos_ = 0;
};

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_bytes(std::string& out, std::span<const std::byte> b) {
  out.append(reinterpret_cast<const char*>(b.data()), b.size());
}

void put_length_delimited(std::string& out, uint64_t tag, const std::string& payload) {
  put_varint(out, tag);
  put_varint(out, payload.size());
  out += payload;
}

// Calls on_field(field, wire_type, tag_begin, payload_begin, payload_end) per field.
template <class F>
void for_each_field(Reader& r, F&& on_field) {
  while (!r.done()) {
    std::size_t tag_begin = r.pos();
    uint64_t tag = r.varint();
    auto field = static_cast<uint32_t>(tag >> 3);
    auto wire = static_cast<uint32_t>(tag & 7);
    if (field == 0) r.fail("field number 0");
    auto [b, e] = r.skip(wire);
    on_field(field, wire, tag, tag_begin, b, e);
  }
}

// TensorProto: drops raw_data (9) when large; returns where it was.
std::string strip_tensor(std::span<const std::byte> t, std::size_t base, std::size_t threshold,
                         std::optional<Region>& region) {
  std::string out;
  Reader r(t, base);
  for_each_field(r, [&](uint32_t field, uint32_t wire, uint64_t, std::size_t tag_begin,
                        std::size_t b, std::size_t e) {
    if (field == 9 && wire == kLengthDelimited && e - b >= threshold) {
      region = Region{r.absolute(b), e - b};
      return;
    }
    put_bytes(out, r.slice(tag_begin, e));
  });
  return out;
}

std::string strip_graph(std::span<const std::byte> g, std::size_t base, std::size_t threshold,
                        std::vector<std::optional<Region>>& regions) {
  std::string out;
  out.reserve(g.size() < (1u << 20) ? g.size() : (1u << 20));
  Reader r(g, base);
  for_each_field(r, [&](uint32_t field, uint32_t wire, uint64_t tag, std::size_t tag_begin,
                        std::size_t b, std::size_t e) {
    if (field == 5 && wire == kLengthDelimited) {
      std::optional<Region> region;
      std::string t = strip_tensor(r.slice(b, e), r.absolute(b), threshold, region);
      regions.push_back(region);
      put_length_delimited(out, tag, t);
      return;
    }
    put_bytes(out, r.slice(tag_begin, e));
  });
  return out;
}

}  // namespace

StrippedModel strip_large_raw_data(std::span<const std::byte> model, std::size_t threshold) {
  StrippedModel result;
  Reader r(model, 0);
  for_each_field(r, [&](uint32_t field, uint32_t wire, uint64_t tag, std::size_t tag_begin,
                        std::size_t b, std::size_t e) {
    if (field == 7 && wire == kLengthDelimited) {
      // A repeated graph field is merged by protobuf: initializers append in order.
      put_length_delimited(result.bytes, tag,
                           strip_graph(r.slice(b, e), b, threshold, result.initializer_data));
      return;
    }
    put_bytes(result.bytes, r.slice(tag_begin, e));
  });
  return result;
}

}  // namespace fx::onnx_wire
