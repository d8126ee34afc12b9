// SPDX-License-Identifier: Apache-2.0
// Sequence and optional ops (runtime/boxed_value.h): SequenceEmpty,
// SequenceConstruct, SequenceInsert, SequenceAt, SequenceLength, SequenceErase,
// SplitToSequence, ConcatFromSequence, SequenceMap, Optional, OptionalHasElement,
// OptionalGetElement. Boxes are immutable: an op that changes a sequence builds a
// new one (elements are shared, not copied).

#include <algorithm>
#include <cstring>
#include <string>

#include "ir/subgraph.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/subgraph_runner.h"
#include "runtime/tensor_slices.h"
#include "util/error.h"

namespace fx {

namespace {

const BoxedValue& sequence_input(const KernelContext& ctx, int i) {
  BoxedPtr b = ctx.input_boxed(i);
  if (!b || b->kind != ValueKind::Sequence)
    throw Error("input " + std::to_string(i) + " must be a sequence");
  return *b;
}

void set_sequence(KernelContext& ctx, int i, DType elem, std::vector<Tensor> items) {
  auto box = std::make_shared<BoxedValue>();
  box->kind = ValueKind::Sequence;
  box->elem_dtype = elem;
  box->items = std::move(items);
  ctx.set_output_boxed(i, std::move(box));
}

// A position input in [-n, n) (or [-n, n] when `end_ok`), made non-negative.
int64_t position(const Tensor& t, int64_t n, bool end_ok) {
  int64_t p = scalar_int(t, "position");
  if (p < -n || p > n || (p == n && !end_ok))
    throw Error("position " + std::to_string(p) + " is out of range for a sequence of " +
                std::to_string(n));
  return p < 0 ? p + n : p;
}

void copy_to_output(KernelContext& ctx, int i, const Tensor& t) {
  Tensor& out = ctx.output(i, t.dtype(), t.dims());
  if (t.is_string())  // elements, not bytes (a string tensor has none)
    std::copy(t.data<std::string>(), t.data<std::string>() + t.numel(), out.data<std::string>());
  else if (t.byte_size())
    std::memcpy(out.raw(), t.raw(), t.byte_size());
}

// Splitting or concatenating copies bytes: string elements are refused by name.
void refuse_strings(const Tensor& t, const char* op) {
  if (t.is_string())
    throw Error(std::string(op) + ": string tensors are not supported by " + op + " here");
}

DType declared_dtype(const Graph& g, const Node& n, DType fallback) {
  if (n.outputs.empty() || n.outputs[0] == kNoValue) return fallback;
  DType d = g.value(n.outputs[0]).dtype;
  return d == DType::Undefined ? fallback : d;
}

std::shared_ptr<Kernel> sequence_empty(const Graph& g, const Node& n) {
  const DType elem = n.attrs.has("dtype") ? static_cast<DType>(n.attrs.get_int("dtype", 1))
                                          : declared_dtype(g, n, DType::Float32);
  return fn_kernel([elem](KernelContext& ctx) { set_sequence(ctx, 0, elem, {}); });
}

std::shared_ptr<Kernel> sequence_construct(const Graph&, const Node&) {
  return fn_kernel([](KernelContext& ctx) {
    std::vector<Tensor> items;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& t = ctx.in(i);
      if (!items.empty() && t.dtype() != items.front().dtype())
        throw Error("SequenceConstruct inputs have different types");
      items.push_back(t.clone());
    }
    set_sequence(ctx, 0, items.empty() ? DType::Undefined : items.front().dtype(),
                 std::move(items));
  });
}

std::shared_ptr<Kernel> sequence_insert(const Graph&, const Node&) {
  return fn_kernel([](KernelContext& ctx) {
    const BoxedValue& seq = sequence_input(ctx, 0);
    const Tensor& t = ctx.in(1);
    if (seq.elem_dtype != DType::Undefined && t.dtype() != seq.elem_dtype)
      throw Error("cannot insert " + t.str() + " into a sequence of " +
                  std::string(dtype_name(seq.elem_dtype)));
    const auto n = static_cast<int64_t>(seq.items.size());
    const Tensor* pos = ctx.input(2);
    const int64_t at = pos && pos->defined() ? position(*pos, n, true) : n;
    std::vector<Tensor> items = seq.items;
    items.insert(items.begin() + at, t.clone());
    set_sequence(ctx, 0, t.dtype(), std::move(items));
  });
}

std::shared_ptr<Kernel> sequence_at(const Graph&, const Node&) {
  return fn_kernel([](KernelContext& ctx) {
    const BoxedValue& seq = sequence_input(ctx, 0);
    const int64_t at = position(ctx.in(1), static_cast<int64_t>(seq.items.size()), false);
    copy_to_output(ctx, 0, seq.items[std::size_t(at)]);
  });
}

std::shared_ptr<Kernel> sequence_length(const Graph&, const Node&) {
  return fn_kernel([](KernelContext& ctx) {
    const BoxedValue& seq = sequence_input(ctx, 0);
    ctx.output(0, DType::Int64, {}).data<int64_t>()[0] = static_cast<int64_t>(seq.items.size());
  });
}

std::shared_ptr<Kernel> sequence_erase(const Graph&, const Node&) {
  return fn_kernel([](KernelContext& ctx) {
    const BoxedValue& seq = sequence_input(ctx, 0);
    const auto n = static_cast<int64_t>(seq.items.size());
    if (n == 0) throw Error("SequenceErase on an empty sequence");
    const Tensor* pos = ctx.input(1);
    const int64_t at = pos && pos->defined() ? position(*pos, n, false) : n - 1;
    std::vector<Tensor> items = seq.items;
    items.erase(items.begin() + at);
    set_sequence(ctx, 0, seq.elem_dtype, std::move(items));
  });
}

std::shared_ptr<Kernel> split_to_sequence(const Graph&, const Node& n) {
  const int64_t axis_attr = n.attrs.get_int("axis", 0);
  const bool keepdims = n.attrs.get_int("keepdims", 1) != 0;
  return fn_kernel([axis_attr, keepdims](KernelContext& ctx) {
    const Tensor& x = ctx.in(0);
    refuse_strings(x, "SplitToSequence");
    const int axis = normalize_axis(axis_attr, int64_t(x.rank()), "SplitToSequence axis");
    const int64_t extent = x.dim(axis);
    std::vector<int64_t> lengths;
    const Tensor* split = ctx.input(1);
    const bool given = split && split->defined();
    if (!given) {
      lengths.assign(std::size_t(extent), 1);
    } else if (split->rank() == 0) {
      const int64_t chunk = scalar_int(*split, "split");
      if (chunk <= 0) throw Error("split must be positive");
      for (int64_t at = 0; at < extent; at += chunk)
        lengths.push_back(std::min(chunk, extent - at));
    } else {
      lengths = split->to_int64s();
    }
    std::vector<Tensor> items;
    int64_t at = 0;
    for (int64_t len : lengths) {
      if (len < 0 || at + len > extent)
        throw Error("split lengths do not fit axis " + std::to_string(axis) + " of " + x.str());
      items.push_back(!given && !keepdims ? take_along(x, axis, at)
                                          : range_along(x, axis, at, at + len));
      at += len;
    }
    if (at != extent)
      throw Error("split lengths sum to " + std::to_string(at) + ", axis has " +
                  std::to_string(extent));
    set_sequence(ctx, 0, x.dtype(), std::move(items));
  });
}

std::shared_ptr<Kernel> concat_from_sequence(const Graph&, const Node& n) {
  if (!n.attrs.has("axis")) throw Error("ConcatFromSequence needs attribute 'axis'");
  const int64_t axis_attr = n.attrs.get_int("axis", 0);
  const bool new_axis = n.attrs.get_int("new_axis", 0) != 0;
  return fn_kernel([axis_attr, new_axis](KernelContext& ctx) {
    const BoxedValue& seq = sequence_input(ctx, 0);
    if (seq.items.empty()) throw Error("ConcatFromSequence of an empty sequence");
    refuse_strings(seq.items.front(), "ConcatFromSequence");
    const int64_t rank = int64_t(seq.items.front().rank()) + (new_axis ? 1 : 0);
    const int axis = normalize_axis(axis_attr, rank, "ConcatFromSequence axis");
    copy_to_output(ctx, 0, new_axis ? stack_along(seq.items, axis) : concat_along(seq.items, axis));
  });
}

class SequenceMapKernel final : public Kernel {
 public:
  SequenceMapKernel(const Graph& g, const Node& n) : body_(g, n, "body") {
    inputs_ = explicit_input_count(n);
    if (static_cast<int>(body_.formal_inputs().size()) != inputs_)
      throw Error("SequenceMap body takes " + std::to_string(body_.formal_inputs().size()) +
                  " inputs, the node has " + std::to_string(inputs_));
    for (ValueId o : body_.body().outputs()) out_dtypes_.push_back(body_.body().value(o).dtype);
  }
  void run(KernelContext& ctx) override {
    const std::size_t count = sequence_input(ctx, 0).items.size();
    std::vector<std::vector<Tensor>> results(out_dtypes_.size());
    std::vector<RunValue> in(static_cast<std::size_t>(inputs_));
    for (std::size_t i = 0; i < count; ++i) {
      for (int j = 0; j < inputs_; ++j) {
        RunValue v = input_value(ctx, j);
        if (v.is_boxed()) {
          if (v.boxed->kind != ValueKind::Sequence || v.boxed->items.size() != count)
            throw Error("SequenceMap's sequence inputs must have the same length");
          in[std::size_t(j)] = RunValue{v.boxed->items[i], nullptr};
        } else {
          in[std::size_t(j)] = v;
        }
      }
      auto outs = body_.run(ctx, in);
      if (outs.size() != results.size()) throw Error("SequenceMap body returned too few values");
      for (std::size_t k = 0; k < outs.size(); ++k) {
        if (outs[k].is_boxed()) throw Error("SequenceMap body returned a sequence");
        results[k].push_back(outs[k].tensor);
      }
    }
    for (std::size_t k = 0; k < results.size(); ++k) {
      const DType d = results[k].empty() ? out_dtypes_[k] : results[k].front().dtype();
      set_sequence(ctx, static_cast<int>(k), d, std::move(results[k]));
    }
  }

 private:
  SubgraphRunner body_;
  int inputs_ = 0;
  std::vector<DType> out_dtypes_;
};

std::shared_ptr<Kernel> optional_op(const Graph& g, const Node& n) {
  const DType declared = declared_dtype(g, n, DType::Undefined);
  return fn_kernel([declared](KernelContext& ctx) {
    auto box = std::make_shared<BoxedValue>();
    box->kind = ValueKind::Optional;
    box->elem_dtype = declared;
    if (BoxedPtr b = ctx.input_boxed(0)) {
      box->inner = b;
      box->elem_dtype = b->elem_dtype;
    } else if (const Tensor* t = ctx.input(0); t && t->defined()) {
      box->items.push_back(t->clone());
      box->elem_dtype = t->dtype();
    }
    ctx.set_output_boxed(0, std::move(box));
  });
}

std::shared_ptr<Kernel> optional_has_element(const Graph&, const Node&) {
  return fn_kernel([](KernelContext& ctx) {
    bool has;
    if (BoxedPtr b = ctx.input_boxed(0))
      has = b->kind != ValueKind::Optional || b->optional_has_element();
    else
      has = ctx.input(0) != nullptr && ctx.input(0)->defined();
    ctx.output(0, DType::Bool, {}).data<bool>()[0] = has;
  });
}

std::shared_ptr<Kernel> optional_get_element(const Graph&, const Node&) {
  return fn_kernel([](KernelContext& ctx) {
    BoxedPtr b = ctx.input_boxed(0);
    if (!b) {
      copy_to_output(ctx, 0, ctx.in(0));
    } else if (b->kind == ValueKind::Sequence) {
      ctx.set_output_boxed(0, b);
    } else if (b->inner) {
      ctx.set_output_boxed(0, b->inner);
    } else if (!b->items.empty()) {
      copy_to_output(ctx, 0, b->items.front());
    } else {
      throw Error("OptionalGetElement on an empty optional");
    }
  });
}

}  // namespace

void register_sequence_kernels(KernelTable& t) {
  t["SequenceEmpty"] = sequence_empty;
  t["SequenceConstruct"] = sequence_construct;
  t["SequenceInsert"] = sequence_insert;
  t["SequenceAt"] = sequence_at;
  t["SequenceLength"] = sequence_length;
  t["SequenceErase"] = sequence_erase;
  t["SplitToSequence"] = split_to_sequence;
  t["ConcatFromSequence"] = concat_from_sequence;
  t["SequenceMap"] = [](const Graph& g, const Node& n) {
    return std::make_shared<SequenceMapKernel>(g, n);
  };
  t["Optional"] = optional_op;
  t["OptionalHasElement"] = optional_has_element;
  t["OptionalGetElement"] = optional_get_element;
}

}  // namespace fx
