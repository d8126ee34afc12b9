#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Where the validation's error sits (issue 21): per group kind, unfused or fused time.

Reads what bench/validate_estimates.py left in OUT_DIR (MODEL.result.json, the `fxc
profile` before/after results with each group's measured before_us / after_us and cost
terms) and the device profile the estimates used. Per group it re-times the group's
unfused kernels and its fused kernel with the profile's kernel-time formula
(analysis/cost_model.h: kernel_time, with the working-set bandwidth curve when the
profile has one) and compares each side with what was measured.

Group kinds, by the fused kernel's class: elementwise chain, conv + epilogue, matmul +
epilogue, norm/softmax (row kernel), depthwise conv, pooling, data movement.

Per kind (groups outside the noise only, as the validation judges them):
  n, median |saving error| (relative to the measured saving), median log2(predicted /
  measured) of the unfused and of the fused time (0: right; +1: predicted twice too
  slow), and the share of the summed |saving error| the kind carries.
Per model: the whole-model time saved outside the groups (measured before - after - the
groups' measured savings), which no group estimate can predict.

usage: validate_breakdown.py OUT_DIR PROFILE.json [--json]
"""
import json
import math
import os
import sys

CLASSES = ["elementwise", "reduction", "conv", "depthwise", "matmul", "data_movement", "pooling"]
KIND = {"elementwise": "elementwise chain", "conv": "conv + epilogue",
        "matmul": "matmul + epilogue", "reduction": "norm/softmax (row)",
        "depthwise": "depthwise conv", "data_movement": "data movement",
        "pooling": "pooling"}


def term_class(t):
    """The kernel class of cost terms; results written before the pooling class filed
    pooling under depthwise, and of the two only the convolution has weights."""
    c = t["class"]
    if c == "depthwise" and t.get("constant_bytes", 1) == 0:
        return "pooling"
    return c


class Profile:
    def __init__(self, j):
        self.bw = j["memory_bandwidth_bytes_per_s"]
        self.peak = j["peak_flops"]
        self.launch = j["launch_overhead_s"]
        self.kc = j.get("kernel_classes", {})
        self.fc = j.get("fused_kernel_classes", {})
        curve = j.get("bandwidth_curve", {})
        self.curve = curve.get("points", [])
        self.follow = curve.get("follow", {})

    def bandwidth(self, c):
        return self.kc.get(c, {}).get("bandwidth_bytes_per_s") or self.bw

    def flops(self, c):
        return self.kc.get(c, {}).get("flops_per_s") or self.peak

    def cache_factor(self, c, nbytes):
        """DeviceProfile::cache_gain: the curve at this working set over its last point."""
        pts = self.curve
        if len(pts) < 2 or nbytes <= 0:
            return 1.0
        ref = math.log(pts[-1][1])
        x = math.log(nbytes)
        if x <= math.log(pts[0][0]):
            y = math.log(pts[0][1])
        elif x >= math.log(pts[-1][0]):
            y = ref
        else:
            for (b0, v0), (b1, v1) in zip(pts, pts[1:]):
                if math.log(b0) <= x <= math.log(b1):
                    t = (x - math.log(b0)) / (math.log(b1) - math.log(b0))
                    y = math.log(v0) + t * (math.log(v1) - math.log(v0))
                    break
        return math.exp(self.follow.get(c, 1.0) * (y - ref))

    def kernel_time(self, t):
        c = term_class(t)
        b, f, n = t["bytes"], t["flops"], t["launches"]
        bw = self.bandwidth(c) * self.cache_factor(c, b)
        if not t.get("fused"):
            if n == 0 and b == 0 and f == 0:
                base = 0.0
            else:
                base = max(b / bw, f / self.flops(c)) + n * self.launch
            e = t.get("epilogue_bytes", 0)
            return base + e / (self.bandwidth("elementwise") * self.cache_factor("elementwise", e))
        if n == 0 and b == 0 and f == 0:
            return 0.0
        fc = self.fc.get(c, {})
        scale = fc.get("scale") or 1.0
        ebw = fc.get("epilogue_bandwidth_bytes_per_s") or self.bandwidth("elementwise")
        e = t.get("epilogue_bytes", 0)
        return n * self.launch + scale * max(b / bw, f / self.flops(c)) + \
            e / (ebw * self.cache_factor("elementwise", e))


def main():
    args = [a for a in sys.argv[1:] if a != "--json"]
    as_json = "--json" in sys.argv
    out_dir, prof = args[0], Profile(json.load(open(args[1])))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from validate_estimates import group_noise_us, median
    kinds, models = {}, {}
    for fn in sorted(os.listdir(out_dir)):
        if not fn.endswith(".result.json"):
            continue
        name = fn[:-len(".result.json")]
        doc = json.load(open(os.path.join(out_dir, fn)))
        grp_saved = 0.0
        for g in doc["groups"]:
            if g.get("status") != "fused" or g.get("measured_saved_us") is None:
                continue
            meas = g["measured_saved_us"]
            grp_saved += meas
            terms = g.get("cost_terms") or {}
            if not terms.get("fused"):
                continue
            noise = group_noise_us(doc, g)
            if abs(meas) < 2 * noise or meas == 0:
                continue
            c = term_class(terms["fused"])
            unf = sum(prof.kernel_time(u) for u in terms["unfused"]) * 1e6
            fus = prof.kernel_time(terms["fused"]) * 1e6
            row = kinds.setdefault(c, {"err": [], "abs_us": 0.0, "unf": [], "fus": [],
                                       "sign": 0, "n": 0})
            row["n"] += 1
            pred = g["predicted_saved_us"]
            row["err"].append(abs(pred - meas) / abs(meas))
            row["abs_us"] += abs(pred - meas)
            row["sign"] += (pred > 0) == (meas > 0)
            if g.get("before_us") and unf > 0:
                row["unf"].append(math.log2(unf / g["before_us"]))
            if g.get("after_us") and fus > 0:
                row["fus"].append(math.log2(fus / g["after_us"]))
        before = doc["before"]["median_ms"] * 1e3
        after = doc["after"]["median_ms"] * 1e3
        models[name] = {"before_us": before, "after_us": after, "groups_saved_us": grp_saved,
                        "outside_groups_us": before - after - grp_saved}
    total = sum(r["abs_us"] for r in kinds.values()) or 1.0
    table = {}
    for c in CLASSES:
        if c not in kinds:
            continue
        r = kinds[c]
        table[KIND[c]] = {"groups": r["n"], "median_abs_rel_error": median(r["err"]),
                          "sign_accuracy": r["sign"] / r["n"],
                          "median_log2_unfused": median(r["unf"]),
                          "median_log2_fused": median(r["fus"]),
                          "share_of_abs_error": r["abs_us"] / total}
    if as_json:
        json.dump({"kinds": table, "models": models}, sys.stdout, indent=1)
        print()
        return
    f = lambda v, s="+.2f": "-" if v is None else format(v, s)
    print("| group kind | groups | median err | sign acc. | log2 pred/meas unfused | "
          "log2 pred/meas fused | share of abs error |")
    print("|---|---|---|---|---|---|---|")
    for k, r in table.items():
        print(f"| {k} | {r['groups']} | {100 * r['median_abs_rel_error']:.0f}% | "
              f"{100 * r['sign_accuracy']:.0f}% | {f(r['median_log2_unfused'])} | "
              f"{f(r['median_log2_fused'])} | {100 * r['share_of_abs_error']:.0f}% |")
    print()
    print("| model | before ms | after ms | groups' measured savings ms | saved outside groups ms |")
    print("|---|---|---|---|---|")
    for name, m in models.items():
        print(f"| {name} | {m['before_us'] / 1e3:.2f} | {m['after_us'] / 1e3:.2f} | "
              f"{m['groups_saved_us'] / 1e3:.2f} | {m['outside_groups_us'] / 1e3:.2f} |")


if __name__ == "__main__":
    main()
