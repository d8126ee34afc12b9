#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The corpus step's table (bench/steps/45_corpus.sh): reads DIR/models.txt and each model's
DIR/NAME/{ort_disabled,ort_all,fxc}.<round>.json, vs_ort.json, errors; appends the markdown
to OUT and writes DIR/summary.json. Runs on a partial result as well (models not finished
show empty cells), e.g. while the step is still running:

    /usr/bin/python3 bench/corpus/corpus_table.py bench/cache/results/corpus /tmp/t.md --cpu "..."
"""

import argparse
import glob
import json
import math
import os
import statistics
import sys

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("out")
for k in ("cpu", "flags", "caches", "isa", "onnxruntime", "load_before", "load_after", "host_profile"):
    ap.add_argument("--" + k.replace("_", "-"), default="")
for k in ("threads", "rounds", "runs"):
    ap.add_argument("--" + k, type=int, default=0)
ap.add_argument("--fast", default="0")
a = ap.parse_args()
d, out = a.dir, a.out
meta = {"cpu": a.cpu, "isa_flags": a.flags.split(), "caches": a.caches,
        "isa_run": a.isa or "native", "threads": a.threads, "rounds": a.rounds, "runs": a.runs,
        "onnxruntime": a.onnxruntime, "load_before": a.load_before, "load_after": a.load_after,
        "fast": a.fast == "1", "host_profile": a.host_profile}

def values(files, key):
    v = []
    for f in files:
        try:
            j = json.load(open(f))
            for k in key.split("."):
                j = j[k]
            v.append(float(j))
        except (OSError, ValueError, KeyError, TypeError):
            pass
    return v

def med(files, key):
    v = values(files, key)
    return statistics.median(v) if v else None

def noise_verdict(unfused, fused):
    """Fused against unfused from the rounds' medians (paired by round): the relative
    spread of the repeated rounds (the larger of the two programs' range over their
    median) and whether fused is slower beyond it (every round slower, and the ratio of
    the medians above 1 + spread). With one round nothing can be told apart: spread None."""
    if len(unfused) != len(fused) or len(unfused) < 2 or min(unfused + fused) <= 0:
        return None, None
    spread = max((max(x) - min(x)) / statistics.median(x) for x in (unfused, fused))
    ratio = statistics.median(fused) / statistics.median(unfused)
    every_round = all(f > u for u, f in zip(unfused, fused))
    return spread, every_round and ratio > 1.0 + spread

rows = []
for name in open(os.path.join(d, "models.txt")).read().split():
    md = os.path.join(d, name)
    g = lambda pat: sorted(glob.glob(os.path.join(md, pat)))
    r = {"model": name,
         "ort_disabled_ms": med(g("ort_disabled.*.json"), "median_ms"),
         "ort_all_ms": med(g("ort_all.*.json"), "median_ms"),
         "unfused_ms": med(g("fxc.*.json"), "unfused.median_ms"),
         "fused_ms": med(g("fxc.*.json"), "fused.median_ms"),
         # Run after run, warm, as ort_run.js times ONNX Runtime: the like-for-like peer
         # figure. The interleaved "fused_ms" pairs with "unfused_ms" (each run after the
         # other program's, both equally cold) and is the fused-against-unfused figure.
         "fused_alone_ms": med(g("fxc.*.json"), "fused_alone.median_ms"),
         "load": open(os.path.join(md, "load")).read().strip() if os.path.exists(os.path.join(md, "load")) else ""}
    fx = g("fxc.*.json")
    r["unfused_round_ms"] = values(fx, "unfused.median_ms")
    r["fused_round_ms"] = values(fx, "fused.median_ms")
    r["round_spread"], r["fused_slower_beyond_noise"] = noise_verdict(r["unfused_round_ms"], r["fused_round_ms"])
    try:
        j = json.load(open(fx[0]))
        r["groups"] = j["groups"]
        r["autotune_cache"] = j.get("autotune_cache")  # absent: an fxc before the cache
        r["fused_agrees"] = bool(j["equivalent"])
        # The fused program runs the unfused program's steps (fxc says so): any gap
        # between the two is the machine's, and no plan can lose there.
        r["same_program"] = j.get("same_program")
        # Groups the warm-up timed slower than their members in this process and ran unfused
        # (fxc codegen --bench's benchmark-then-choose); absent: an fxc before it.
        wc = j.get("warmup_choice") or {}
        r["warmup_timed"] = wc.get("timed")
        r["warmup_fell_back"] = len(wc.get("fell_back", []))
        if r["same_program"]:
            r["fused_slower_beyond_noise"] = False
        pk = j.get("peak_activation_bytes", {})
        r["peak_unfused_bytes"], r["peak_fused_bytes"] = pk.get("unfused"), pk.get("fused")
    except (IndexError, OSError, ValueError, KeyError):
        pass
    try:
        vs = json.load(open(os.path.join(md, "vs_ort.json")))
        r["vs_ort_ok"] = bool(vs["ok"])
        # Quantized outputs are compared in quantization steps (bench/compare_outputs.py).
        q = [o for o in vs.get("outputs", []) if "steps" in o]
        if q:
            r["vs_ort_steps"] = max(o["steps"] for o in q)
            r["vs_ort_steps_allowed"] = max(o["steps_allowed"] for o in q)
    except (OSError, ValueError, KeyError):
        r["vs_ort_ok"] = None
    if os.path.exists(os.path.join(md, "errors")):
        r["errors"] = open(os.path.join(md, "errors")).read().strip().splitlines()
    def ratio(a, b):
        return r[a] / r[b] if r.get(a) and r.get(b) else None
    r["unfused_vs_ort_disabled"] = ratio("unfused_ms", "ort_disabled_ms")
    # An fxc run without the alone runs (--interleaved-only) leaves only the interleaved figure.
    r["fused_vs_ort_all"] = ratio("fused_alone_ms" if r.get("fused_alone_ms") else "fused_ms", "ort_all_ms")
    r["fused_interleaved_vs_ort_all"] = ratio("fused_ms", "ort_all_ms")
    r["fused_vs_unfused"] = ratio("fused_ms", "unfused_ms")
    if r.get("peak_unfused_bytes") and r.get("peak_fused_bytes") is not None:
        r["peak_fused_vs_unfused"] = r["peak_fused_bytes"] / r["peak_unfused_bytes"]
    rows.append(r)

def summary(key):
    v = [(r[key], r["model"]) for r in rows if r.get(key)]
    if not v:
        return None
    gm = math.exp(sum(math.log(x) for x, _ in v) / len(v))
    worst = max(v)
    return {"models": len(v), "geomean": gm, "worst": worst[0], "worst_model": worst[1]}

keys = {"unfused_vs_ort_disabled": "fxc unfused / ORT disabled",
        "fused_vs_ort_all": "fxc fused / ORT all, both run after run (target: geomean <= 0.9, worst <= 1.25)",
        "fused_interleaved_vs_ort_all": "fxc fused interleaved with unfused / ORT all run after run (the protocol"
                                        " before session 14: fxc's caches colder than ORT's)",
        "fused_vs_unfused": "fxc fused / fxc unfused (target: every model <= 1.0)",
        "peak_fused_vs_unfused": "peak activations fused / unfused (target: every model <= 1.0)"}
summ = {k: summary(k) for k in keys}
summ["fused_slower_than_unfused"] = [r["model"] for r in rows
                                     if (r.get("fused_vs_unfused") or 0) > 1.0 and not r.get("same_program")]
summ["same_program"] = [r["model"] for r in rows if r.get("same_program")]
summ["fused_slower_beyond_noise"] = [r["model"] for r in rows if r.get("fused_slower_beyond_noise")]
summ["noise_unknown"] = [r["model"] for r in rows if r.get("fused_vs_unfused") and r.get("round_spread") is None]
tuned = [r["autotune_cache"] for r in rows if r.get("autotune_cache")]
summ["autotune_cache"] = {
    "reported": len(tuned), "enabled": sum(1 for t in tuned if t.get("enabled")),
    "entries": max([t.get("entries", 0) for t in tuned] or [0]),
    "rejected_groups": sum(t.get("rejected", 0) for t in tuned),
    "models_with_rejections": [r["model"] for r in rows if (r.get("autotune_cache") or {}).get("rejected")],
    "paths": sorted({t["path"] for t in tuned if t.get("path")})}
summ["warmup_choice"] = {
    "timed_groups": sum(r.get("warmup_timed") or 0 for r in rows),
    "fell_back_groups": sum(r.get("warmup_fell_back") or 0 for r in rows),
    "models_with_fallbacks": [r["model"] for r in rows if r.get("warmup_fell_back")]}
summ["fused_larger_peak"] = [r["model"] for r in rows if (r.get("peak_fused_vs_unfused") or 0) > 1.0]
json.dump({"machine": meta, "summary": summ, "models": rows}, open(os.path.join(d, "summary.json"), "w"), indent=1)

f = lambda x, p=2: "" if x is None else f"{x:.{p}f}"
with open(out, "a") as o:
    w = lambda s="": print(s, file=o)
    w(f"- CPU: {meta['cpu']}; ISA flags: {' '.join(meta['isa_flags'])}; caches: {meta['caches']}")
    w(f"- ISA of this run: {meta['isa_run']}" + ("" if meta["isa_run"] == "native" else
      " (oneDNN: ONEDNN_MAX_CPU_ISA=AVX2; generated code: -march=$FX_MARCH; the runtime's target_clones"
      " kernels and ONNX Runtime still dispatch on cpuid)"))
    w(f"- ONNX Runtime {meta['onnxruntime']} (onnxruntime-node), {meta['threads']} threads each;"
      f" {meta['rounds']} interleaved rounds of {meta['runs']} runs; figure: median of the round medians."
      " Like for like: fused / ORT all compares fxc's fused program timed run after run (after one"
      " warm-up run) with ORT all timed run after run (after 3 warm-up runs); fused / unfused compares"
      " fxc's two programs timed alternately, each run after the other's. unfused / ORT disabled"
      " compares the interleaved unfused figure with ORT's run after run (fxc's side colder)")
    if meta["host_profile"]:
        w(f"- Host profile the default plans were estimated with: {meta['host_profile']}")
    w(f"- Load average before: {meta['load_before']}, after: {meta['load_after']} (well above 0: other jobs shared the machine)")
    w("- Command: `bench/run_all.sh corpus`" + (" with CORPUS_FAST=1" if meta["fast"] else "")
      + ("" if meta["isa_run"] == "native" else f" with FX_ISA={meta['isa_run']}")
      + "; fxc: `fxc codegen MODEL --opt-level 2 --bench RUNS --threads T --json --evict-mb 0 --inputs MODEL.inputs`")
    w()
    for k, label in keys.items():
        s = summ[k]
        if s:
            w(f"- {label}: geomean {s['geomean']:.3f} over {s['models']} models, worst {s['worst']:.2f} ({s['worst_model']})")
    w(f"- fused slower than unfused (any amount): {', '.join(summ['fused_slower_than_unfused']) or 'none'}"
      + (f"; not counted, the fused program being the unfused one (no group, no relayout):"
         f" {', '.join(summ['same_program'])}" if summ["same_program"] else ""))
    w(f"- fused slower than unfused beyond the spread of the rounds (every round slower and the ratio above"
      f" 1 + the larger round-to-round range of the two): {', '.join(summ['fused_slower_beyond_noise']) or 'none'}"
      + (f" (one round only, spread unknown: {len(summ['noise_unknown'])} models)" if summ["noise_unknown"] else ""))
    at = summ["autotune_cache"]
    if not at["reported"]:
        w("- autotune cache: not reported (an fxc without it)")
    elif not at["enabled"]:
        w("- autotune cache: off (FX_AUTOTUNE_CACHE=off): the plan is the estimate's alone")
    else:
        w(f"- autotune cache: on for {at['enabled']} of {at['reported']} models ({', '.join(at['paths'])},"
          f" {at['entries']} measured groups); groups it left out as measured slower on this CPU:"
          f" {at['rejected_groups']}" + (f" ({', '.join(at['models_with_rejections'])})" if at["models_with_rejections"] else "")
          + (" (the cache is empty: nothing measured on this CPU yet)" if at["entries"] == 0 else ""))
    wc = summ["warmup_choice"]
    if wc["timed_groups"]:
        w(f"- warm-up choice (each group timed against its members before the timed runs; a group"
          f" slower beyond the noise runs unfused): {wc['fell_back_groups']} of {wc['timed_groups']} groups"
          f" fell back" + (f" ({', '.join(wc['models_with_fallbacks'])})" if wc["models_with_fallbacks"] else ""))
    w(f"- fused peak activations larger than unfused: {', '.join(summ['fused_larger_peak']) or 'none'}")
    w()
    w("| model | ORT disabled ms | ORT all ms | fxc unfused ms | fxc fused ms | fxc fused alone ms | unfused / ORT dis | fused alone / ORT all | fused / unfused | round spread | slower beyond noise | groups | peak MiB unfused / fused | fused = unfused | fused = ORT | load | errors |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---|---|---|")
    mib = lambda b: "" if b is None else f"{b / 1048576:.1f}"
    yn = lambda b: "" if b is None else ("yes" if b else "NO")
    # "yes (2 of 2 steps)": a quantized output, its largest difference in quantization steps
    # and the number allowed.
    vs_ort = lambda r: yn(r.get("vs_ort_ok")) + (
        f" ({r['vs_ort_steps']:.0f} of {r['vs_ort_steps_allowed']:g} steps)"
        if r.get("vs_ort_steps") is not None else "")
    pm = lambda x: "" if x is None else f"±{100 * x:.0f}%"
    tuned_note = lambda r: ((f" (-{r['autotune_cache']['rejected']} autotune)"
                             if (r.get("autotune_cache") or {}).get("rejected") else "")
                            + (f" (-{r['warmup_fell_back']} warm-up)" if r.get("warmup_fell_back") else ""))
    slow = lambda r: ("same program" if r.get("same_program") else
                      "" if r.get("fused_slower_beyond_noise") is None else
                      "yes" if r["fused_slower_beyond_noise"] else "no")
    for r in rows:
        w(f"| {r['model']} | {f(r['ort_disabled_ms'])} | {f(r['ort_all_ms'])} | {f(r['unfused_ms'])} | {f(r['fused_ms'])} | {f(r.get('fused_alone_ms'))} | "
          f"{f(r['unfused_vs_ort_disabled'])} | {f(r['fused_vs_ort_all'])} | {f(r['fused_vs_unfused'])} | {pm(r.get('round_spread'))} | {slow(r)} | {r.get('groups', '')}{tuned_note(r)} | "
          f"{mib(r.get('peak_unfused_bytes'))} / {mib(r.get('peak_fused_bytes'))} | {yn(r.get('fused_agrees'))} | {vs_ort(r)} | "
          f"{r['load']} | {'; '.join(r.get('errors', []))[:160].replace('|', '/')} |")
for k in keys:
    s = summ[k]
    if s:
        print(f"45_corpus: {keys[k]}: geomean {s['geomean']:.3f} ({s['models']} models), worst {s['worst']:.2f} {s['worst_model']}", file=sys.stderr)