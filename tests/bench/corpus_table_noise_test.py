#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""bench/corpus/corpus_table.py calls fused slower than unfused only beyond the spread of
the repeated rounds: a model slower in every round by more than the rounds' range is
listed, one whose rounds disagree (or whose gap is inside the range) is not, and a
single round says nothing about noise. The table says whether the autotune cache was
used and which groups it left out. Usage: corpus_table_noise_test.py TABLE_SCRIPT"""

import json
import os
import subprocess
import sys
import tempfile

script = sys.argv[1]
# (unfused round medians, fused round medians) in ms
cases = {
    "steady_slower": ([1.00, 1.01], [1.20, 1.21]),   # +20%, rounds within 1%
    "mixed_rounds": ([1.00, 1.00], [1.10, 0.95]),    # one round faster
    "inside_spread": ([1.00, 1.30], [1.20, 1.35]),   # +11%, rounds 26% apart
    "faster": ([2.00, 2.02], [1.50, 1.52]),
    "one_round": ([1.00], [1.50]),
}
with tempfile.TemporaryDirectory() as d:
    with open(os.path.join(d, "models.txt"), "w") as f:
        f.write("\n".join(cases) + "\n")
    for name, (unfused, fused) in cases.items():
        os.makedirs(os.path.join(d, name))
        for r, (u, fu) in enumerate(zip(unfused, fused), 1):
            with open(os.path.join(d, name, f"fxc.{r}.json"), "w") as f:
                json.dump({"unfused": {"median_ms": u}, "fused": {"median_ms": fu}, "groups": 1,
                           "equivalent": True,
                           "autotune_cache": {"enabled": True, "path": "/c/autotune/cpu.json",
                                              "entries": 5, "consulted": 2,
                                              "rejected": 1 if name == "faster" else 0}}, f)
    out = os.path.join(d, "table.md")
    subprocess.run([sys.executable, script, d, out, "--rounds", "2", "--runs", "3"], check=True)
    summ = json.load(open(os.path.join(d, "summary.json")))
    rows = {r["model"]: r for r in summ["models"]}
    got = summ["summary"]["fused_slower_beyond_noise"]
    fail = []
    if got != ["steady_slower"]:
        fail.append(f"slower beyond noise: {got}, want ['steady_slower']")
    if set(summ["summary"]["fused_slower_than_unfused"]) != {"steady_slower", "mixed_rounds", "inside_spread", "one_round"}:
        fail.append(f"slower at all: {summ['summary']['fused_slower_than_unfused']}")
    if rows["one_round"]["round_spread"] is not None:
        fail.append("one round has a spread")
    if abs(rows["inside_spread"]["round_spread"] - 0.30 / 1.15) > 1e-9:
        fail.append(f"inside_spread's spread {rows['inside_spread']['round_spread']}")
    table = open(out).read()
    if "±26%" not in table or "beyond the spread" not in table:
        fail.append("the table does not print the spread and the verdict")
    if "autotune cache: on for 5 of 5 models (/c/autotune/cpu.json, 5 measured groups)" not in table \
            or "1 (-1 autotune)" not in table:
        fail.append("the table does not say how the autotune cache was used")
    for line in fail:
        print("FAIL:", line)
    sys.exit(1 if fail else 0)
