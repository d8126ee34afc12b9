// SPDX-License-Identifier: Apache-2.0
#include "codegen/row_rewrite.h"

#include <algorithm>

#include "codegen/op_exprs.h"

namespace fx {

namespace {

bool is_mean_sum(const KOp& op) {
  return op.op == "ReduceSum" && op.mean;
}

// How many ops read var v, and whether it is a group output.
int readers(const LoweredGroup& g, int v) {
  int n = 0;
  for (const KOp& op : g.ops) n += static_cast<int>(std::count(op.args.begin(), op.args.end(), v));
  for (const KOutput& out : g.outputs) n += out.var == v ? 1 : 0;
  return n;
}

}  // namespace

LoweredGroup one_pass_variance(LoweredGroup g) {
  auto is_input = [&](int v) {
    return std::any_of(g.inputs.begin(), g.inputs.end(), [&](const KInput& in) {
      return in.var == v && g.vars[static_cast<std::size_t>(v)].row;
    });
  };
  auto new_var = [&](bool row, const std::string& comment) { return add_var(g, row, comment); };
  for (std::size_t a = 0; a < g.ops.size(); ++a) {
    if (!is_mean_sum(g.ops[a]) || !is_input(g.ops[a].args.at(0))) continue;
    const int x = g.ops[a].args[0], mu = g.ops[a].result;
    // d = x - mu, sq = d * d, var = mean(sq), in this order after a.
    std::size_t b = a + 1, c, d;
    for (; b < g.ops.size(); ++b)
      if (g.ops[b].op == "Sub" && g.ops[b].args == std::vector<int>{x, mu}) break;
    if (b == g.ops.size()) continue;
    const int dv = g.ops[b].result;
    for (c = b + 1; c < g.ops.size(); ++c)
      if (g.ops[c].op == "Mul" && g.ops[c].args == std::vector<int>{dv, dv}) break;
    if (c == g.ops.size() || readers(g, g.ops[c].result) != 1) continue;
    const int sq = g.ops[c].result;
    for (d = c + 1; d < g.ops.size(); ++d)
      if (is_mean_sum(g.ops[d]) && g.ops[d].args.at(0) == sq) break;
    if (d == g.ops.size()) continue;
    const int var = g.ops[d].result;
    const std::string node = g.ops[a].node;

    std::vector<KOp> stats;
    auto op = [&](const std::string& type, std::vector<int> args, int result, bool mean = false) {
      KOp k;
      k.node = node;
      k.op = type;
      k.args = std::move(args);
      k.result = result;
      k.mean = mean;
      stats.push_back(k);
      return result;
    };
    const int sh = op("RowHeadMean", {x}, new_var(false, "shift: mean of the row's head"));
    const int e = op("Sub", {x, sh}, new_var(true, ""));
    const int m1 = op("ReduceSum", {e}, new_var(false, "mean - shift"), true);
    const int e2 = op("Mul", {e, e}, new_var(true, ""));
    const int s2 = op("ReduceSum", {e2}, new_var(false, "mean of (x - shift)^2"), true);
    op("Add", {sh, m1}, mu);
    const int m1sq = op("Mul", {m1, m1}, new_var(false, ""));
    const int raw = op("Sub", {s2, m1sq}, new_var(false, ""));
    KVar zero;
    zero.row = false;
    zero.literal = true;
    zero.c_name = c_float_literal(0.f);
    g.vars.push_back(zero);
    op("Max", {raw, static_cast<int>(g.vars.size()) - 1}, var);  // rounding: never < 0

    // The square and its reduction go; the statistics replace the mean's reduction.
    g.ops.erase(g.ops.begin() + static_cast<std::ptrdiff_t>(d));
    g.ops.erase(g.ops.begin() + static_cast<std::ptrdiff_t>(c));
    g.ops.erase(g.ops.begin() + static_cast<std::ptrdiff_t>(a));
    g.ops.insert(g.ops.begin() + static_cast<std::ptrdiff_t>(a), stats.begin(), stats.end());
    a += stats.size() - 1;
  }
  return g;
}

}  // namespace fx
