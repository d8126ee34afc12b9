#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""bench/corpus/corpus_table.py compares like with like: fxc fused against ONNX Runtime
uses fxc's fused program timed run after run ("fused_alone", as ORT is timed), while fused
against unfused stays the interleaved pair. An fxc result without the alone runs falls
back to the interleaved figure, and the interleaved ratio against ORT is kept for the
record. A model whose fused program fxc reports as the unfused one is never counted as
slower than unfused. Groups that fell back at warm-up are counted and named. Usage: corpus_table_peer_test.py TABLE_SCRIPT"""

import json
import os
import subprocess
import sys
import tempfile

script = sys.argv[1]
# name: (ORT all, unfused interleaved, fused interleaved, fused alone or None), ms, 2 rounds
cases = {
    "warm_alone": (1.00, 1.30, 1.20, 0.90),
    "no_alone": (1.00, 1.30, 1.20, None),
    # fxc says the fused program is the unfused one: 8% slower in both rounds is noise.
    "same_program": (1.00, 1.00, 1.08, 1.08),
}
with tempfile.TemporaryDirectory() as d:
    with open(os.path.join(d, "models.txt"), "w") as f:
        f.write("\n".join(cases) + "\n")
    for name, (ort, unfused, fused, alone) in cases.items():
        os.makedirs(os.path.join(d, name))
        for r in (1, 2):
            fx = {"unfused": {"median_ms": unfused}, "fused": {"median_ms": fused},
                  "groups": 1, "equivalent": True}
            if name == "warm_alone":
                fx["groups"] = 4
                fx["warmup_choice"] = {"timed": 4, "decided_by_cache": 0,
                                       "fell_back": [{"id": 1, "reason": "slower"}]}
            if name == "same_program":
                fx["same_program"] = True
                fx["groups"] = 0
                fx["unfused"]["median_ms"] += 0.001 * r  # rounds apart by less than the gap
            if alone is not None:
                fx["fused_alone"] = {"median_ms": alone}
            with open(os.path.join(d, name, f"fxc.{r}.json"), "w") as f:
                json.dump(fx, f)
            for opt in ("disabled", "all"):
                with open(os.path.join(d, name, f"ort_{opt}.{r}.json"), "w") as f:
                    json.dump({"median_ms": ort}, f)
    out = os.path.join(d, "table.md")
    subprocess.run([sys.executable, script, d, out, "--rounds", "2", "--runs", "3",
                    "--host-profile", "/c/cpu-host.json: uncalibrated, measured, sha256 0123456789ab"],
                   check=True)
    rows = {r["model"]: r for r in json.load(open(os.path.join(d, "summary.json")))["models"]}
    fail = []
    want = {"warm_alone": (0.90, 1.20, 1.20 / 1.30), "no_alone": (1.20, 1.20, 1.20 / 1.30)}
    for name, (peer, interleaved, vs_unfused) in want.items():
        r = rows[name]
        for key, w in (("fused_vs_ort_all", peer), ("fused_interleaved_vs_ort_all", interleaved),
                       ("fused_vs_unfused", vs_unfused)):
            if r.get(key) is None or abs(r[key] - w) > 1e-9:
                fail.append(f"{name}: {key} = {r.get(key)}, want {w:.4f}")
    summ = json.load(open(os.path.join(d, "summary.json")))["summary"]
    if summ["fused_slower_beyond_noise"] or summ["fused_slower_than_unfused"]:
        fail.append(f"a program identical to the unfused one counted as slower: {summ}")
    if summ["same_program"] != ["same_program"]:
        fail.append(f"same_program list: {summ['same_program']}")
    table = open(out).read()
    if "| 4 (-1 warm-up) |" not in table or "1 of 4 groups fell back (warm_alone)" not in table:
        fail.append("the table does not say which groups fell back at warm-up")
    if "| same program |" not in table:
        fail.append("the table does not mark the identical program")
    if "| warm_alone | 1.00 | 1.00 | 1.30 | 1.20 | 0.90 | 1.30 | 0.90 | 0.92 |" not in table:
        fail.append("the table row of warm_alone does not show the alone time and ratio")
    if "Host profile the default plans were estimated with: /c/cpu-host.json: uncalibrated" not in table:
        fail.append("the table does not name the host profile")
    if "both run after run" not in table:
        fail.append("the table does not say how fused and ORT were timed")
    for line in fail:
        print("FAIL:", line)
    sys.exit(1 if fail else 0)
