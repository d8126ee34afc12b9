// SPDX-License-Identifier: Apache-2.0
// The passes of a row kernel (row_schedule.h). A row op runs in the first pass after
// all of its per-row scalars are known; a reduction ends its pass.

#include "codegen/row_schedule.h"

#include <algorithm>

#include "util/error.h"

namespace fx {

bool is_reduction(const KOp& op) {
  return op.op.rfind("Reduce", 0) == 0;
}

Schedule schedule_passes(const LoweredGroup& g) {
  Schedule s;
  const std::size_t nv = g.vars.size();
  s.phase.assign(nv, 0);
  s.ready.assign(nv, -1);
  s.last_use.assign(nv, -1);
  for (const KOp& op : g.ops) {
    int p = 0;
    for (int a : op.args) {
      const KVar& v = g.vars[static_cast<std::size_t>(a)];
      p = std::max(p, v.row ? s.phase[a] : s.ready[a] + 1);
    }
    if (is_reduction(op)) {
      if (!g.vars[static_cast<std::size_t>(op.args.at(0))].row) {
        throw Error("codegen: node '" + op.node +
                    "' reduces a value that is constant along the row");
      }
      s.phase[op.result] = p;
      s.ready[op.result] = p;
    } else if (g.vars[static_cast<std::size_t>(op.result)].row) {
      s.phase[op.result] = p;
    } else {
      int r = -1;
      for (int a : op.args) r = std::max(r, s.ready[a]);
      s.ready[op.result] = r;
      p = r + 1;  // where it is read at the earliest
    }
    for (int a : op.args) s.last_use[a] = std::max(s.last_use[a], p);
    s.passes = std::max(s.passes, p + 1);
  }
  return s;
}

namespace {

// Relative cost of a row op: the polynomial transcendental ops dominate a pass.
int op_weight(const KOp& op) {
  static const char* heavy[] = {"Exp",  "Erf",  "Tanh", "Sigmoid",   "Gelu", "GeluTanh",
                                "Mish", "Elu",  "Log",  "Softplus",  "Sin",  "Cos",
                                "Pow",  "Sqrt", "Div",  "Reciprocal"};
  for (const char* h : heavy)
    if (op.op == h) return 8;
  return 1;
}

}  // namespace

int heaviest_pass(const LoweredGroup& g, const Schedule& s) {
  std::vector<int> work(static_cast<std::size_t>(s.passes), 0);
  for (const KOp& op : g.ops)
    if (g.vars[static_cast<std::size_t>(op.result)].row || is_reduction(op))
      work[static_cast<std::size_t>(s.phase[op.result])] += op_weight(op);
  return static_cast<int>(std::max_element(work.begin(), work.end()) - work.begin());
}

}  // namespace fx
