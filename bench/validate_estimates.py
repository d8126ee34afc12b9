#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Validation of the estimates on models the calibration never saw (issue 21).

The cpu-host profile comes from `fxc calibrate` (a grid of kernel shapes; no model is
looked at), so every corpus model is left out of everything fitted. Per model:
  1. `fxc analyze MODEL --json --plan-out PLAN`: predicted saving (and interval) per
     group, the cost model's whole-model time unfused;
  2. every candidate of the plan accepted (the uncertain ones too, so that their
     savings are measured), `fxc profile MODEL --plan PLAN --json`: measured saving per
     group, measured whole-model speed-up;
  3. per group: predicted vs measured saving; a group is outside the noise when its
     measured saving is >= 2x its standard error (its kernels' quartiles over runs).
Prints a JSON summary per model and pooled:
  spearman (per-group savings), median absolute relative error and sign accuracy (groups
  outside the noise), predicted vs measured whole-model speed-up (within +-10%?), and how
  often the interval held the measured saving.

usage: validate_estimates.py FXC OUT_DIR NAME=MODEL[:DIMS]... [--runs N] [--threads T]
                            [--device PROFILE] [--measured-in DIR]

--measured-in DIR: measure nothing; take each model's before/after result from
DIR/NAME.result.json (an earlier run of this script) and predict the plan it measured
(DIR/NAME.plan.json, `fxc analyze --plan`) again with --device (each group by its
members): two profiles judged on one set of measurements.
"""
import json
import math
import os
import subprocess
import sys


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    if len(a) < 3:
        return None
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    sab = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    saa = sum((x - ma) ** 2 for x in ra)
    sbb = sum((y - mb) ** 2 for y in rb)
    return sab / math.sqrt(saa * sbb) if saa > 0 and sbb > 0 else None


def median(v):
    v = sorted(v)
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def group_noise_us(doc, group):
    """Standard error of a group's measured saving from its kernels' quartiles."""
    nodes = set(group.get("nodes") or [])
    runs = max(1, doc.get("runs") or 1)
    var = 0.0
    for side in ("before", "after"):
        for k in doc[side].get("kernels", []):
            if nodes.intersection(k.get("nodes") or []):
                q1, q3 = k.get("q1_us"), k.get("q3_us")
                if q1 is not None and q3 is not None:
                    var += ((q3 - q1) / 1.349) ** 2
    return 1.253 * math.sqrt(var / runs)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError((p.stderr or p.stdout).strip().splitlines()[-1:] or ["failed"])
    return p.stdout


def judge(rows):
    """rows: dicts with pred, meas, noise, low, high."""
    out = {"groups": len(rows)}
    resolved = [r for r in rows if abs(r["meas"]) >= 2 * r["noise"] and r["meas"] != 0]
    out["resolved"] = len(resolved)
    out["spearman"] = spearman([r["pred"] for r in rows], [r["meas"] for r in rows])
    out["spearman_resolved"] = spearman([r["pred"] for r in resolved],
                                        [r["meas"] for r in resolved])
    out["median_abs_rel_error"] = median(
        [abs(r["pred"] - r["meas"]) / abs(r["meas"]) for r in resolved])
    signs = [(r["pred"] > 0) == (r["meas"] > 0) for r in resolved]
    out["sign_accuracy"] = sum(signs) / len(signs) if signs else None
    held = [r["low"] <= r["meas"] <= r["high"] for r in rows if r["low"] is not None]
    out["interval_coverage"] = sum(held) / len(held) if held else None
    out["uncertain"] = sum(1 for r in rows if r["uncertain"])
    unc = [r for r in resolved if not r["uncertain"]]
    s2 = [(r["pred"] > 0) == (r["meas"] > 0) for r in unc]
    out["sign_accuracy_certain"] = sum(s2) / len(s2) if s2 else None
    return out


def main():
    args = sys.argv[1:]
    runs, threads, device = "10", "1", "cpu-host"
    if "--device" in args:
        i = args.index("--device")
        device = args[i + 1]
        del args[i:i + 2]
    if "--runs" in args:
        i = args.index("--runs")
        runs = args[i + 1]
        del args[i:i + 2]
    if "--threads" in args:
        i = args.index("--threads")
        threads = args[i + 1]
        del args[i:i + 2]
    measured_in = None
    if "--measured-in" in args:
        i = args.index("--measured-in")
        measured_in = args[i + 1]
        del args[i:i + 2]
    fxc, out_dir, models = args[0], args[1], args[2:]
    os.makedirs(out_dir, exist_ok=True)
    per_model, pooled = {}, []
    for spec in models:
        name, rest = spec.split("=", 1)
        path, _, dims = rest.partition(":")
        dim_args = dims.split() if dims and dims != "-" else []
        plan = os.path.join(out_dir, name + ".plan.json")
        # Judged on a measurement made before (--measured-in), the prediction is of the plan
        # that was measured, not of the plan this profile would propose: a fold's profile may
        # group differently, and a group measured but never predicted (or predicted but never
        # measured) would drop out of the whole-model comparison on one side only.
        measured_plan = os.path.join(measured_in, name + ".plan.json") if measured_in else None
        plan_arg = (["--plan", measured_plan]
                    if measured_plan and os.path.exists(measured_plan) else [])
        try:
            analysis = json.loads(run([fxc, "-q", "analyze", path, "--json", "--opt-level", "2",
                                       "--plan-out", plan, "--device", device] + plan_arg
                                      + dim_args))
            p = json.load(open(plan))
            for g in p["groups"]:
                g["status"] = "accepted"
            json.dump(p, open(plan, "w"))
            if measured_in:
                doc = json.load(open(os.path.join(measured_in, name + ".result.json")))
            else:
                doc = json.loads(run([fxc, "-q", "profile", path, "--plan", plan, "--json",
                                      "--runs", runs, "--threads", threads,
                                      "--estimate-device", device] + dim_args))
        except (RuntimeError, ValueError, OSError) as e:
            per_model[name] = {"error": str(e)}
            continue
        json.dump(doc, open(os.path.join(out_dir, name + ".result.json"), "w"))
        # By members: a re-prediction's group ids need not be the measured plan's.
        by_nodes = {tuple(sorted(g["nodes"])): g for g in analysis["groups"]}
        rows = []
        unmatched = 0
        for g in doc["groups"]:
            if g.get("status") != "fused" or g.get("measured_saved_us") is None:
                continue
            a = by_nodes.get(tuple(sorted(g.get("nodes") or [])))
            if a is None:
                unmatched += 1
                if measured_in:
                    continue
                a = {}
            interval = a.get("est_time_saved_interval_us")
            pred = a["est_time_saved_us"] if measured_in else g["predicted_saved_us"]
            rows.append({"id": g["id"], "pred": pred,
                         "meas": g["measured_saved_us"], "noise": group_noise_us(doc, g),
                         "low": interval[0] if interval else None,
                         "high": interval[1] if interval else None,
                         "uncertain": bool(a.get("uncertain"))})
        m = judge(rows)
        m["unmatched_groups"] = unmatched
        # Whole model, all fused groups: the cost model's own prediction (its unfused time
        # minus the predicted savings) and, on the measured unfused time, the predicted savings;
        # both with what the fused program saves on the kernels outside the groups
        # (est_lone_saved_us: fitted per kind of lone kernel; 0 from older fxc or profiles).
        # Analysis decides when that applies: a plan with no group still runs its convs in
        # the layout plan's chains (VGG), and older fxc credited it only with groups.
        est_before = analysis["est_time_before_us"]
        pred_saved = sum(r["pred"] for r in rows) + analysis.get("est_lone_saved_us", 0.0)
        meas_before = doc["before"]["median_ms"] * 1e3
        m["speedup_measured"] = doc.get("speedup")
        m["speedup_predicted"] = (est_before / (est_before - pred_saved)
                                  if est_before > pred_saved else None)
        m["speedup_predicted_on_measured_before"] = (
            meas_before / (meas_before - pred_saved) if meas_before > pred_saved else None)
        sm, sp = m["speedup_measured"], m["speedup_predicted"]
        m["speedup_within_10pct"] = (abs(sp / sm - 1) <= 0.10) if sm and sp else False
        m["unmeasured_ops"] = analysis.get("unmeasured_ops", [])
        per_model[name] = m
        pooled += rows
        with open(os.path.join(out_dir, name + ".rows.json"), "w") as f:
            json.dump(rows, f, indent=1)
    ok = [m for m in per_model.values() if "error" not in m]
    summary = judge(pooled)
    summary["models"] = len(ok)
    summary["speedup_within_10pct"] = (sum(1 for m in ok if m["speedup_within_10pct"]) / len(ok)
                                       if ok else None)
    json.dump({"per_model": per_model, "pooled": summary}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
