#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Self-test of tensor_pb.js: round trips, and reading files written by other protobuf
// encoders (the ONNX test data, written by Python's onnx package). Run: node tensor_pb_test.js
'use strict';

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { encodeTensor, decodeTensor, modelOps } = require('./tensor_pb');

// Round trip of every type ort_run.js writes, with negative int64 (10-byte varints).
for (const [type, data, dims] of [
  ['float32', Float32Array.from([1.5, -2, 3e-8, 0]), [2, 2]],
  ['int64', BigInt64Array.from([0n, -1n, 1n << 40n]), [3]],
  ['int32', Int32Array.from([7, -7]), [1, 2]],
  ['bool', Uint8Array.from([1, 0, 1]), [3]],
  ['float32', new Float32Array(0), [0, 4]],
]) {
  const back = decodeTensor(encodeTensor('t_' + type, { type, data, dims }));
  assert.strictEqual(back.name, 't_' + type);
  assert.strictEqual(back.type, type);
  assert.deepStrictEqual(back.dims, dims);
  assert.deepStrictEqual(Array.from(back.data), Array.from(data));
}

// Files from the ONNX backend test data (raw_data written by numpy_helper); expected
// values read with Python's onnx.numpy_helper.
const node = '/usr/share/libonnx-testdata/data/node';
let checked = 0;
if (fs.existsSync(node)) {
  const gather = decodeTensor(fs.readFileSync(path.join(node, 'test_gather_0/test_data_set_0/input_1.pb')));
  assert.strictEqual(gather.type, 'int64');
  assert.deepStrictEqual(gather.dims, [3]);
  assert.deepStrictEqual(Array.from(gather.data), [0n, 1n, 3n]);
  const abs = decodeTensor(fs.readFileSync(path.join(node, 'test_abs/test_data_set_0/output_0.pb')));
  assert.deepStrictEqual(abs.dims, [3, 4, 5]);
  assert.ok(Array.from(abs.data).every((x) => x >= 0), 'abs output has a negative value');
  const ops = modelOps(path.join(node, 'test_abs/model.onnx'));
  assert.deepStrictEqual(ops, { nodes: 1, ops: { Abs: 1 } });
  checked = 3;
}
console.log(`tensor_pb: ok (round trips; ${checked} ONNX test-data files)`);
