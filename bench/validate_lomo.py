#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Leave-one-model-out validation of the estimates over the corpus (issue 21).

Affordable on a small shared machine: every model is measured ONCE (`fxc profile`, its
before/after timings, by bench/validate_estimates.py on the grid profile), and those
measurements are reused by every fold. Two predictions are judged on them:

  grid   the profile of `fxc calibrate` alone: a grid of kernel shapes, no model looked
         at, so every model is left out of everything fitted (one profile for all folds);
  lomo   per held-out model M, `fxc calibrate --from GRID/*.json --from OTHERS` on the
         grid's base profile: the grid's results and every OTHER model's measurement
         fitted together (class rates, fused rates, saving model, intervals); M's own
         measurement is never in its fold's fit, only judged by it.

usage: validate_lomo.py FXC DIR NAME=MODEL[:DIMS]... [--runs N] [--threads T]
                        [--profile GRID_PROFILE] [--jobs J] [--skip-measure] [--skip-folds]
                        [--families CORPUS_JSON [--by-family]] [--only NAME,NAME...]
--families: also a table per model family (corpus.json's "family" of each model), pooled
over the family's models as the corpus is pooled. --by-family: also leave one FAMILY out
(each family's models predicted by a fit on the grid and the other families' models).
DIR must hold grid/ (`fxc calibrate --work-dir DIR/grid --out GRID_PROFILE`, by default
GRID_PROFILE = DIR/grid.json); --threads should be the calibration's. Writes
  DIR/measured/NAME.result.json   the one measurement per model (and the grid's predictions)
  DIR/folds/NAME.profile.json     fold NAME's profile (everything but NAME fitted)
  DIR/folds/NAME/                 NAME predicted by its fold (validate_estimates --measured-in)
  DIR/family_folds/FAMILY.profile.json, DIR/family_folds/NAME/   the same per family (--by-family)
  DIR/lomo.json                   per model and pooled, each prediction
and prints the markdown tables.
"""
import concurrent.futures
import glob
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate_estimates as ve  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def estimates(fxc, out_dir, specs, extra):
    """bench/validate_estimates.py on specs; its JSON summary (None when it failed)."""
    p = subprocess.run([sys.executable, os.path.join(HERE, "validate_estimates.py"), fxc, out_dir]
                       + specs + extra, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        return None
    return json.loads(p.stdout)


def rows_of(out_dir, name):
    path = os.path.join(out_dir, name + ".rows.json")
    return json.load(open(path)) if os.path.exists(path) else []


def fold_profile(fxc, d, name, measured, left_out=None, sub="folds"):
    """Fits fold `name`: the grid's results and every other model's measurement (every
    model but those in `left_out`, by default `name` alone)."""
    left_out = left_out or {name}
    out = os.path.join(d, sub, name + ".profile.json")
    others = [f for n, f in measured.items() if n not in left_out]
    grid = sorted(glob.glob(os.path.join(d, "grid", "*.json")))
    cmd = [fxc, "-q", "calibrate", "--device", os.path.join(d, "grid", "base-profile.json.txt"),
           "--out", out]
    for f in grid + others:
        cmd += ["--from", f]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"fold {name}: " + (p.stderr or p.stdout).strip()[-300:])
    # The fold's profile must not have seen the held-out model: its provenance names files.
    src = json.load(open(out)).get("source", "")
    for n in left_out:
        assert n not in measured or measured[n] not in src, f"fold {name} was fitted on {n}"
    return out


def pooled(per_model, rows):
    ok = [m for m in per_model.values() if "error" not in m]
    s = ve.judge(rows)
    s["models"] = len(ok)
    s["speedup_within_10pct"] = (sum(1 for m in ok if m["speedup_within_10pct"]) / len(ok)
                                 if ok else None)
    return s


def table(title, per_model, summary):
    f = lambda v, spec=".2f": "-" if v is None else format(v, spec)  # noqa: E731
    pct = lambda v: "-" if v is None else f"{100 * v:.0f}%"  # noqa: E731
    print(f"{title}\n")
    print("| model | groups (outside noise) | Spearman | median err | sign acc. | interval held "
          "| speed-up measured | predicted | within 10% |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, m in per_model.items():
        if "error" in m:
            print(f"| {name} | failed: {m['error']} ||||||||")
            continue
        print(f"| {name} | {m['groups']} ({m['resolved']}) | {f(m['spearman'])} "
              f"| {pct(m['median_abs_rel_error'])} | {pct(m['sign_accuracy'])} "
              f"| {pct(m['interval_coverage'])} | {f(m['speedup_measured'], '.3f')} "
              f"| {f(m['speedup_predicted'], '.3f')} | {'yes' if m['speedup_within_10pct'] else 'no'} |")
    p = summary
    print(f"| **pooled** ({p['models']} models) | {p['groups']} ({p['resolved']}) "
          f"| {f(p['spearman'])} (outside noise {f(p['spearman_resolved'])}) "
          f"| {pct(p['median_abs_rel_error'])} | {pct(p['sign_accuracy'])} "
          f"| {pct(p['interval_coverage'])} | | | {pct(p['speedup_within_10pct'])} of models |")
    print()


def family_table(title, per_model, rows_by_model, family_of):
    pct = lambda v: "-" if v is None else f"{100 * v:.0f}%"  # noqa: E731
    fams = {}
    for name in per_model:
        fams.setdefault(family_of.get(name, "?"), []).append(name)
    print(f"{title}\n")
    print("| family | models | speed-up within 10% | groups (outside noise) | sign acc. "
          "| median err | interval held |")
    print("|---|---|---|---|---|---|---|")
    for fam, names in sorted(fams.items()):
        pm = {n: per_model[n] for n in names}
        s = pooled(pm, [r for n in names for r in rows_by_model.get(n, [])])
        print(f"| {fam} | {len(names)} | {pct(s['speedup_within_10pct'])} "
              f"| {s['groups']} ({s['resolved']}) | {pct(s['sign_accuracy'])} "
              f"| {pct(s['median_abs_rel_error'])} | {pct(s['interval_coverage'])} |")
    print()


def targets(name, s):
    ok = lambda v, t, ge=True: v is not None and (v >= t if ge else v <= t)  # noqa: E731
    items = [("speed-up within 10% on >= 80% of models", s["speedup_within_10pct"], 0.8, True),
             ("sign right on >= 90% of groups outside noise", s["sign_accuracy"], 0.9, True),
             ("pooled Spearman >= 0.85", s["spearman_resolved"], 0.85, True),
             ("median error <= 25% outside noise", s["median_abs_rel_error"], 0.25, False)]
    print(f"Targets, {name}: " + "; ".join(
        f"{t}: {'-' if v is None else round(v, 3)} {'MET' if ok(v, th, ge) else 'not met'}"
        for t, v, th, ge in items))
    print()


def main():
    args = sys.argv[1:]
    opts = {"--runs": "10", "--threads": "1", "--profile": None, "--jobs": "1",
            "--families": None, "--only": None}
    by_family = "--by-family" in args
    args = [a for a in args if a != "--by-family"]
    for k in list(opts):
        if k in args:
            i = args.index(k)
            opts[k] = args[i + 1]
            del args[i:i + 2]
    skip_measure = "--skip-measure" in args
    skip_folds = "--skip-folds" in args
    args = [a for a in args if a not in ("--skip-measure", "--skip-folds")]
    fxc, d, specs = args[0], args[1], args[2:]
    grid_profile = opts["--profile"] or os.path.join(d, "grid.json")
    measured_dir = os.path.join(d, "measured")
    os.makedirs(os.path.join(d, "folds"), exist_ok=True)
    names = [s.split("=", 1)[0] for s in specs]

    # 1. One measurement per model, predicted by the grid profile (no model fitted).
    t0 = time.time()
    if not skip_measure:
        # Measured in subsets (the bench lock is held a few minutes at a time): a run
        # adds its models to those an earlier run measured into the same DIR.
        summary = os.path.join(d, "grid_per_model.json")
        grid_sum = json.load(open(summary)) if os.path.exists(summary) else {"per_model": {}}
        for spec in specs:  # one at a time: a failing model must not lose the others
            s = estimates(fxc, measured_dir, [spec],
                          ["--device", grid_profile, "--runs", opts["--runs"],
                           "--threads", opts["--threads"]])
            name = spec.split("=", 1)[0]
            grid_sum["per_model"][name] = (s or {}).get("per_model", {}).get(
                name, {"error": "validate_estimates.py failed"})
            sys.stderr.write(f"measured {name} ({time.time() - t0:.0f} s)\n")
            json.dump(grid_sum, open(summary, "w"), indent=1)
    grid_sum = json.load(open(os.path.join(d, "grid_per_model.json")))
    grid_pm = {n: grid_sum["per_model"][n] for n in names if n in grid_sum["per_model"]}
    grid_rows = [r for n in grid_pm if "error" not in grid_pm[n] for r in rows_of(measured_dir, n)]
    measured = {n: os.path.join(measured_dir, n + ".result.json") for n in grid_pm
                if "error" not in grid_pm[n]
                and os.path.exists(os.path.join(measured_dir, n + ".result.json"))}
    measure_s = time.time() - t0

    # 2. Per fold: fit without the held-out model, predict it on its one measurement.
    lomo_pm, lomo_rows, lomo_rows_by = {}, [], {}
    t1 = time.time()
    def fold(spec):
        name = spec.split("=", 1)[0]
        if name not in measured:
            return name, {"error": "not measured"}, []
        try:
            prof = fold_profile(fxc, d, name, measured)
        except RuntimeError as e:
            return name, {"error": str(e)}, []
        out = os.path.join(d, "folds", name)
        s = estimates(fxc, out, [spec], ["--device", prof, "--measured-in", measured_dir])
        sys.stderr.write(f"fold {name} ({time.time() - t1:.0f} s)\n")
        return (name, (s or {}).get("per_model", {}).get(name, {"error": "prediction failed"}),
                rows_of(out, name))

    if not skip_folds:
        # The folds measure nothing (their predictions are made on the one measurement),
        # so they may run side by side. --only: the folds of those models alone (each
        # still fitted on every other measured model), for a quick look at a subset.
        only = set(opts["--only"].split(",")) if opts["--only"] else None
        fold_specs = [s for s in specs if only is None or s.split("=", 1)[0] in only]
        with concurrent.futures.ThreadPoolExecutor(int(opts["--jobs"])) as pool:
            for name, m, rows in pool.map(fold, fold_specs):
                lomo_pm[name] = m
                lomo_rows += rows
                lomo_rows_by[name] = rows
    folds_s = time.time() - t1

    # 3. --by-family: the stricter protocol. Per family of corpus.json (ResNet-18 and
    # its 13 export variants, the BERTs, ...), one fit on the grid and every model of
    # the OTHER families; each model predicted by its family's fold. Leaving one model
    # out still fits its siblings (the same network exported another way): this says
    # what a user's new architecture gets.
    lofo_pm, lofo_rows, lofo_rows_by = {}, [], {}
    if by_family and opts["--families"]:
        family_of = {m["name"]: m.get("family", "?")
                     for m in json.load(open(opts["--families"]))["models"]}
        os.makedirs(os.path.join(d, "family_folds"), exist_ok=True)
        members = {}
        for n in names:
            members.setdefault(family_of.get(n, n), set()).add(n)
        profiles = {}

        def family_fold(fam):
            try:
                key = "".join(c if c.isalnum() or c in "._-" else "_" for c in fam)
                return fam, fold_profile(fxc, d, key, measured, members[fam], "family_folds")
            except RuntimeError as e:
                return fam, e

        with concurrent.futures.ThreadPoolExecutor(int(opts["--jobs"])) as pool:
            for fam, prof in pool.map(family_fold, sorted(members)):
                profiles[fam] = prof

        def predict(spec):
            name = spec.split("=", 1)[0]
            prof = profiles[family_of.get(name, name)]
            if name not in measured or isinstance(prof, RuntimeError):
                return name, {"error": "not measured" if name not in measured else str(prof)}, []
            out = os.path.join(d, "family_folds", name)
            s = estimates(fxc, out, [spec], ["--device", prof, "--measured-in", measured_dir])
            return (name, (s or {}).get("per_model", {}).get(name, {"error": "prediction failed"}),
                    rows_of(out, name))

        with concurrent.futures.ThreadPoolExecutor(int(opts["--jobs"])) as pool:
            for name, m, rows in pool.map(predict, specs):
                lofo_pm[name] = m
                lofo_rows += rows
                lofo_rows_by[name] = rows

    result = {"grid": {"per_model": grid_pm, "pooled": pooled(grid_pm, grid_rows)},
              "measure_s": measure_s, "folds_s": folds_s}
    if lomo_pm:
        result["lomo"] = {"per_model": lomo_pm, "pooled": pooled(lomo_pm, lomo_rows)}
    if lofo_pm:
        result["lofo"] = {"per_model": lofo_pm, "pooled": pooled(lofo_pm, lofo_rows)}
    json.dump(result, open(os.path.join(d, "lomo.json"), "w"), indent=1)

    table("Grid profile (no model fitted; every model left out):", grid_pm,
          result["grid"]["pooled"])
    targets("grid profile", result["grid"]["pooled"])
    if lomo_pm:
        table("Leave one model out (grid + every other corpus model fitted, per fold):", lomo_pm,
              result["lomo"]["pooled"])
        targets("leave one model out", result["lomo"]["pooled"])
    if lofo_pm:
        table("Leave one family out (grid + every model of the other families fitted, per "
              "family):", lofo_pm, result["lofo"]["pooled"])
        targets("leave one family out", result["lofo"]["pooled"])
    if opts["--families"]:
        family_of = {m["name"]: m.get("family", "?")
                     for m in json.load(open(opts["--families"]))["models"]}
        family_table("Per family, grid profile:", grid_pm,
                     {n: rows_of(measured_dir, n) for n in grid_pm}, family_of)
        if lomo_pm:
            family_table("Per family, leave one model out:", lomo_pm, lomo_rows_by, family_of)
        if lofo_pm:
            family_table("Per family, leave one family out:", lofo_pm, lofo_rows_by, family_of)


if __name__ == "__main__":
    main()
