// SPDX-License-Identifier: Apache-2.0
#include "runtime/dnnl_parts.h"

#include <algorithm>
#include <string>

#include "runtime/dnnl_util.h"
#include "runtime/thread_pool.h"

namespace fx {

dnnl::primitive_attr part_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

DnnlPart make_part(const dnnl::primitive_desc_base& pd,
                   const std::vector<std::pair<int, dnnl::memory::desc>>& descs,
                   std::vector<DnnlPart::Bind> binds) {
  DnnlPart part;
  part.prim = dnnl::primitive(pd.get());
  for (const auto& [arg, md] : descs)
    part.args[arg] = dnnl::memory(md, dnnl_engine(), DNNL_MEMORY_NONE);
  auto sp = pd.scratchpad_desc();
  if (sp.get_size() > 0) part.args[DNNL_ARG_SCRATCHPAD] = dnnl::memory(sp, dnnl_engine());
  part.binds = std::move(binds);
  return part;
}

bool is_reference_impl(const dnnl::primitive_desc_base& pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

dnnl::memory reorder_weights(const dnnl::memory::desc& user, const void* data,
                             const dnnl::memory::desc& want) {
  dnnl::memory src(user, dnnl_engine(), const_cast<void*>(data));
  dnnl::memory dst(want, dnnl_engine());
  dnnl::reorder(src, dst).execute(dnnl_stream(), src, dst);
  dnnl_stream().wait();
  return dst;
}

void run_part(DnnlPart& p, const std::vector<void*>& tensors) {
  for (const auto& b : p.binds) {
    char* base = static_cast<char*>(tensors[static_cast<std::size_t>(b.tensor)]);
    p.args[b.arg].set_data_handle(base + b.byte_offset);
  }
  p.prim.execute(dnnl_stream(), p.args);
  dnnl_stream().wait();
}

void run_parts(std::vector<DnnlPart>& parts, const std::vector<void*>& tensors, int threads) {
  // One OpenMP thread for every part, a lone one included: an OpenMP team's barrier
  // stalls for a time slice whenever one of its threads is descheduled.
  OneOmpThread one;
  if (parts.size() == 1) {
    run_part(parts[0], tensors);
    return;
  }
  pool_run(static_cast<int64_t>(parts.size()), threads,
           [&](int64_t i) { run_part(parts[static_cast<std::size_t>(i)], tensors); });
}

std::vector<std::pair<int64_t, int64_t>> split_range(int64_t n, int parts, int64_t min_size) {
  int64_t k = std::max<int64_t>(1, std::min<int64_t>(parts, n / std::max<int64_t>(min_size, 1)));
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t i = 0; i < k; ++i) out.emplace_back(n * i / k, n * (i + 1) / k);
  return out;
}

}  // namespace fx
