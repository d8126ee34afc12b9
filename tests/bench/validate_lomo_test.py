#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""bench/validate_lomo.py leaves each model out of its own fold: with a stand-in fxc that
records what each `fxc calibrate --from` was given and predicts a group's saving
exactly when the profile was fitted on that group's model (a fit that saw the model
"knows" it), every fold's fit gets the grid's results and every OTHER measurement, never
the held-out one, and the pooled leave-one-model-out error is the out-of-fold error,
not the perfect in-sample one. Usage: validate_lomo_test.py SCRIPT_DIR"""

import json
import os
import subprocess
import sys
import tempfile

script = os.path.join(sys.argv[1], "validate_lomo.py")

FAKE_FXC = r'''#!/usr/bin/python3
import json, sys
args = sys.argv[1:]
if args[0] == "-q":
    args = args[1:]
def opt(name):
    return [args[i + 1] for i, a in enumerate(args) if a == name]
if args[0] == "calibrate":
    json.dump({"source": "fitted to " + ", ".join(opt("--from")), "from": opt("--from")},
              open(opt("--out")[0], "w"))
elif args[0] == "analyze":
    model = args[1].split("/")[-1].split(".")[0]
    prof = json.load(open(opt("--device")[0]))
    seen = any("/" + model + ".result.json" in f for f in prof["from"])
    # A fit that saw the model predicts its measured saving (10 us per group index);
    # one that did not is 50% off.
    groups = [{"id": f"g{i}", "nodes": [f"{model}_n{i}"],
               "est_time_saved_us": 10.0 * (i + 1) * (1.0 if seen else 1.5),
               "est_time_saved_interval_us": [0.0, 100.0], "uncertain": False}
              for i in range(4)]
    json.dump({"groups": [{"id": g["id"], "nodes": g["nodes"], "status": "candidate"}
                          for g in groups]}, open(opt("--plan-out")[0], "w"))
    print(json.dumps({"groups": groups, "est_time_before_us": 1000.0}))
else:
    sys.exit("unexpected " + " ".join(args))
'''

models = ["m_a", "m_b", "m_c"]
with tempfile.TemporaryDirectory() as d:
    fxc = os.path.join(d, "fxc")
    with open(fxc, "w") as f:
        f.write(FAKE_FXC)
    os.chmod(fxc, 0o755)
    os.makedirs(os.path.join(d, "grid"))
    for g in ("memory.1.json", "conv.1.json"):
        json.dump({}, open(os.path.join(d, "grid", g), "w"))
    open(os.path.join(d, "grid", "base-profile.json.txt"), "w").write("{}")
    os.makedirs(os.path.join(d, "measured"))
    per_model = {}
    for m in models:
        groups = [{"id": f"g{i}", "nodes": [f"{m}_n{i}"], "status": "fused",
                   "measured_saved_us": 10.0 * (i + 1), "predicted_saved_us": 5.0}
                  for i in range(4)]
        doc = {"model": m, "runs": 10, "speedup": 1.1, "groups": groups,
               "before": {"median_ms": 1.0, "kernels": []}, "after": {"kernels": []}}
        json.dump(doc, open(os.path.join(d, "measured", m + ".result.json"), "w"))
        per_model[m] = {"groups": 4, "resolved": 4, "spearman": 1.0, "median_abs_rel_error": 0.5,
                        "sign_accuracy": 1.0, "interval_coverage": 1.0, "speedup_measured": 1.1,
                        "speedup_predicted": 1.0, "speedup_within_10pct": True}
    json.dump({"per_model": per_model}, open(os.path.join(d, "grid_per_model.json"), "w"))
    specs = [f"{m}={d}/{m}.onnx:-" for m in models]
    # m_a and m_b are one network exported two ways (one family); m_c another.
    families = os.path.join(d, "corpus.json")
    json.dump({"models": [{"name": "m_a", "family": "f1"}, {"name": "m_b", "family": "f1"},
                          {"name": "m_c", "family": "f2"}]}, open(families, "w"))
    out = subprocess.run([sys.executable, script, fxc, d] + specs
                         + ["--skip-measure", "--families", families, "--by-family"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    for m in models:
        prof = json.load(open(os.path.join(d, "folds", m + ".profile.json")))
        names = [os.path.basename(f) for f in prof["from"]]
        assert m + ".result.json" not in names, f"fold {m} was fitted on its own model: {names}"
        for other in models:
            if other != m:
                assert other + ".result.json" in names, f"fold {m} left out {other} too"
        assert "memory.1.json" in names and "conv.1.json" in names, names
    r = json.load(open(os.path.join(d, "lomo.json")))
    pooled = r["lomo"]["pooled"]
    assert pooled["groups"] == 12, pooled
    # Every group predicted out of fold: 50% off, never the 0% of a fit that saw it.
    assert abs(pooled["median_abs_rel_error"] - 0.5) < 1e-9, pooled
    assert pooled["sign_accuracy"] == 1.0, pooled
    assert "Leave one model out" in out.stdout and "| **pooled** (3 models)" in out.stdout
    # Leave one family out: family f1's fold has neither of its models, f2's has both.
    f1 = [os.path.basename(f) for f in
          json.load(open(os.path.join(d, "family_folds", "f1.profile.json")))["from"]]
    f2 = [os.path.basename(f) for f in
          json.load(open(os.path.join(d, "family_folds", "f2.profile.json")))["from"]]
    assert "m_a.result.json" not in f1 and "m_b.result.json" not in f1, f1
    assert "m_c.result.json" in f1 and "conv.1.json" in f1, f1
    assert "m_a.result.json" in f2 and "m_b.result.json" in f2, f2
    assert "m_c.result.json" not in f2, f2
    lofo = r["lofo"]["pooled"]
    assert lofo["groups"] == 12 and abs(lofo["median_abs_rel_error"] - 0.5) < 1e-9, lofo
    assert "Leave one family out" in out.stdout and "Targets, leave one family out" in out.stdout
print("ok")
