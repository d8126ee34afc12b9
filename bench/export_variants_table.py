#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The export-variant step's table (bench/steps/17_export_variants.sh): reads DIR/families.txt
("FAMILY VARIANT VARIANT ...") and per variant DIR/NAME/{analyze.json, codegen.<round>.json,
load.<round>, errors}; writes the markdown to OUT and DIR/summary.json. Runs on a partial
result too (cells left empty), e.g. while the step is still running.
"""

import argparse
import glob
import hashlib
import json
import os
import statistics

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("out")
ap.add_argument("--cpu", default="")
for k in ("cores", "threads", "rounds", "runs"):
    ap.add_argument("--" + k, type=int, default=0)
a = ap.parse_args()


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def digest(lines):
    return hashlib.md5("\n".join(sorted(lines)).encode()).hexdigest()[:8]


def variant(name):
    d = os.path.join(a.dir, name)
    r = {"model": name, "speedups": [], "loads": []}
    an = load(os.path.join(d, "analyze.json"))
    if an:
        groups = an.get("groups", [])
        r.update(nodes_imported=an["canonical"]["nodes_before"],
                 canonical_nodes=an["canonical"]["nodes_after"],
                 kernels=f"{an['kernels_before']} -> {an['kernels_after']}",
                 groups=len(groups),
                 # What the exporter named the nodes matters to this one only.
                 names_digest=digest([",".join(g["nodes"]) for g in groups]),
                 # Pattern and member op types in order: the groups' structure.
                 ops_digest=digest([g["pattern"] + ":" + ",".join(g["ops"]) for g in groups]))
    for f in sorted(glob.glob(os.path.join(d, "codegen.*.json"))):
        j = load(f)
        try:
            r["speedups"].append(j["unfused"]["median_ms"] / j["fused"]["median_ms"])
        except (TypeError, KeyError, ZeroDivisionError):
            pass
    for f in sorted(glob.glob(os.path.join(d, "load.*"))):
        try:
            r["loads"].append(float(open(f).read().split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    if r["speedups"]:
        r["speedup"] = statistics.median(r["speedups"])
        r["spread"] = max(r["speedups"]) - min(r["speedups"])
    try:
        r["errors"] = open(os.path.join(d, "errors")).read().strip().replace("\n", "; ")
    except OSError:
        r["errors"] = ""
    return r


families = []
for line in open(os.path.join(a.dir, "families.txt")):
    parts = line.split()
    if not parts:
        continue
    rows = [variant(m) for m in parts[1:]]
    fam = {"family": parts[0], "variants": rows}
    sp = [r["speedup"] for r in rows if "speedup" in r]
    if len(sp) == len(rows) and sp:
        fam["range"] = max(sp) - min(sp)
        fam["noise"] = max(r["spread"] for r in rows)
        fam["equal_within_noise"] = fam["range"] <= fam["noise"]
    for key in ("canonical_nodes", "ops_digest", "names_digest", "groups"):
        fam["same_" + key] = len({r.get(key) for r in rows}) == 1
    families.append(fam)

with open(os.path.join(a.dir, "summary.json"), "w") as f:
    json.dump({"cpu": a.cpu, "cores": a.cores, "threads": a.threads, "rounds": a.rounds,
               "runs": a.runs, "families": families}, f, indent=1)

f2 = lambda v: "" if v is None else f"{v:.2f}"
with open(a.out, "w") as o:
    w = lambda s="": o.write(s + "\n")
    w("### The same network exported several ways")
    w()
    w(f"CPU: {a.cpu} ({a.cores} cores), {a.threads} threads; {a.rounds} rounds of {a.runs} runs "
      "per variant (fxc codegen --opt-level 2 --interleaved-only, corpus dims and inputs); "
      "analysis with no --dim.")
    w()
    w("Speed-up: unfused / fused median ms, the median over rounds (each round's figure under "
      "rounds). A family's speed-ups are equal within noise when their range is at most its "
      "noise, the largest round-to-round spread of any of its variants. Names digest: md5 of "
      "the groups' member names; ops digest: of each group's pattern and member op types in "
      "order (independent of node names). Load: 1-minute load average when each round of the "
      "variant started.")
    w()
    w("| family | variant | nodes as imported | canonical nodes | kernels | groups | names digest "
      "| ops digest | speed-up | rounds | load | errors |")
    w("|---|---|---:|---:|---|---:|---|---|---:|---|---|---|")
    for fam in families:
        for r in fam["variants"]:
            rounds = ", ".join(f"{s:.2f}" for s in r["speedups"])
            loads = " ".join(f"{l:.0f}" for l in r["loads"])
            w(f"| {fam['family']} | {r['model']} | {r.get('nodes_imported', '')} | "
              f"{r.get('canonical_nodes', '')} | {r.get('kernels', '')} | {r.get('groups', '')} | "
              f"{r.get('names_digest', '')} | {r.get('ops_digest', '')} | {f2(r.get('speedup'))} | "
              f"{rounds} | {loads} | {r['errors']} |")
    w()
    w("| family | variants | same canonical nodes | same groups (ops digest) | same names digest "
      "| speed-ups range | noise | equal within noise |")
    w("|---|---:|---|---|---|---:|---:|---|")
    yn = lambda b: "yes" if b else "no"
    for fam in families:
        w(f"| {fam['family']} | {len(fam['variants'])} | {yn(fam['same_canonical_nodes'])} | "
          f"{yn(fam['same_ops_digest'])} | {yn(fam['same_names_digest'])} | "
          f"{f2(fam.get('range'))} | {f2(fam.get('noise'))} | "
          f"{'' if 'equal_within_noise' not in fam else yn(fam['equal_within_noise'])} |")
