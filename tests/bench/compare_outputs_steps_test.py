#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""bench/compare_outputs.py compares a quantized output in quantization steps: a model
whose output is a DequantizeLinear with scale 0.5 matches within 2 steps (1.0) and not
beyond, while a float output keeps the relative tolerance; bench/corpus/corpus_table.py
states the step count in its "fused = ORT" column.
Usage: compare_outputs_steps_test.py COMPARE_SCRIPT TABLE_SCRIPT"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

compare, table = sys.argv[1], sys.argv[2]


def model(path, quantized):
    x = helper.make_tensor_value_info("x", TensorProto.UINT8, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    if quantized:
        nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"])]
        inits = [numpy_helper.from_array(np.array(0.5, np.float32), "s"),
                 numpy_helper.from_array(np.array(0, np.uint8), "z")]
    else:
        nodes = [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)]
        inits = []
    g = helper.make_graph(nodes, "g", [x], [y], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def outputs(d, values):
    os.makedirs(d, exist_ok=True)
    t = numpy_helper.from_array(np.array(values, np.float32), "y")
    with open(os.path.join(d, "output_0.pb"), "wb") as f:
        f.write(t.SerializeToString())


def run(*args):
    p = subprocess.run([sys.executable, compare, *args], capture_output=True, text=True)
    return p.returncode, json.loads(p.stdout)


failures = []
with tempfile.TemporaryDirectory() as d:
    q, fl = os.path.join(d, "q.onnx"), os.path.join(d, "f.onnx")
    model(q, True)
    model(fl, False)
    ref = [10.0, 20.0, 30.0, 40.0]
    outputs(os.path.join(d, "ref"), ref)
    outputs(os.path.join(d, "two"), [10.0, 21.0, 30.0, 40.0])    # 2 steps of 0.5
    outputs(os.path.join(d, "three"), [10.0, 21.5, 30.0, 40.0])  # 3 steps
    rd = os.path.join(d, "ref")
    rc, j = run(rd, os.path.join(d, "two"), "--model", q, "--steps", "2")
    if rc != 0 or not j["ok"] or abs(j["outputs"][0]["steps"] - 2) > 1e-6:
        failures.append(f"2 steps of a quantized output should match: {j}")
    rc, j = run(rd, os.path.join(d, "three"), "--model", q, "--steps", "2")
    if rc != 1 or j["ok"]:
        failures.append(f"3 steps should not match with 2 allowed: {j}")
    rc, j = run(rd, os.path.join(d, "two"), "--model", fl, "--steps", "2")
    if rc != 1 or j["ok"] or "steps" in j["outputs"][0]:
        failures.append(f"a float output keeps the relative tolerance: {j}")
    rc, j = run(rd, os.path.join(d, "two"))
    if rc != 1 or j["ok"]:
        failures.append(f"without --model nothing is compared in steps: {j}")

    # The table states the steps.
    res = os.path.join(d, "results")
    os.makedirs(os.path.join(res, "qdq"))
    with open(os.path.join(res, "models.txt"), "w") as f:
        f.write("qdq\n")
    with open(os.path.join(res, "qdq", "fxc.1.json"), "w") as f:
        json.dump({"unfused": {"median_ms": 2.0}, "fused": {"median_ms": 1.0}, "groups": 1,
                   "equivalent": True}, f)
    rc, j = run(rd, os.path.join(d, "two"), "--model", q, "--steps", "2")
    with open(os.path.join(res, "qdq", "vs_ort.json"), "w") as f:
        json.dump(j, f)
    out = os.path.join(d, "table.md")
    subprocess.run([sys.executable, table, res, out, "--rounds", "1", "--runs", "3"], check=True,
                   capture_output=True)
    row = [l for l in open(out) if l.startswith("| qdq ")]
    if not row or "yes (2 of 2 steps)" not in row[0]:
        failures.append(f"the table should say 'yes (2 of 2 steps)': {row}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
