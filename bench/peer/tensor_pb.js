// SPDX-License-Identifier: Apache-2.0
// Just enough protobuf to exchange tensors with fxc and the ONNX test data, and to count
// the nodes of a model ORT saved. Field numbers are from onnx.proto:
//   TensorProto: dims=1 (int64), data_type=2, float_data=4, int32_data=5, int64_data=7,
//                name=8, raw_data=9, double_data=10
//   ModelProto: graph=7;  GraphProto: node=1;  NodeProto: op_type=4, domain=7
'use strict';

const fs = require('fs');

// ONNX data_type <-> onnxruntime-node tensor type and typed array.
const TYPES = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
  4: ['uint16', Uint16Array], 5: ['int16', Int16Array], 6: ['int32', Int32Array],
  7: ['int64', BigInt64Array], 9: ['bool', Uint8Array], 10: ['float16', Uint16Array],
  11: ['float64', Float64Array], 12: ['uint32', Uint32Array], 13: ['uint64', BigUint64Array],
};
const ONNX_TYPE = Object.fromEntries(Object.entries(TYPES).map(([k, [n]]) => [n, Number(k)]));

// ------------------------------------------------------------------ writing
function varint(n) {
  let v = BigInt.asUintN(64, BigInt(n));
  const out = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return Buffer.from(out);
}
const key = (field, wire) => varint((field << 3) | wire);
const bytesField = (field, buf) => Buffer.concat([key(field, 2), varint(buf.length), buf]);

/** Encodes {type, dims, data} (an onnxruntime-node Tensor works) as a TensorProto. */
function encodeTensor(name, tensor) {
  const dataType = ONNX_TYPE[tensor.type];
  if (!dataType) throw new Error(`cannot encode tensor '${name}' of type ${tensor.type}`);
  const d = tensor.data;
  const raw = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
  const parts = tensor.dims.map((x) => Buffer.concat([key(1, 0), varint(x)]));
  parts.push(key(2, 0), varint(dataType), bytesField(8, Buffer.from(name, 'utf8')),
             bytesField(9, raw));
  return Buffer.concat(parts);
}

// ------------------------------------------------------------------ reading
class Reader {
  constructor(buf) { this.buf = buf; this.pos = 0; }
  done() { return this.pos >= this.buf.length; }
  varint() {
    let v = 0n, shift = 0n, b;
    do {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      b = this.buf[this.pos++];
      v |= BigInt(b & 0x7f) << shift;
      shift += 7n;
    } while (b & 0x80);
    return v;
  }
  // Returns [field, wire, value]; value is a BigInt (varint), or a Buffer (other wires).
  next() {
    const k = Number(this.varint());
    const field = k >>> 3, wire = k & 7;
    if (wire === 0) return [field, wire, this.varint()];
    let len = wire === 1 ? 8 : wire === 5 ? 4 : wire === 2 ? Number(this.varint()) : -1;
    if (len < 0) throw new Error(`unsupported protobuf wire type ${wire}`);
    const v = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return [field, wire, v];
  }
}

function packedVarints(v, wire) {
  if (wire === 0) return [v];
  const r = new Reader(v), out = [];
  while (!r.done()) out.push(r.varint());
  return out;
}

/** Decodes a TensorProto into {name, type, dims, data}. */
function decodeTensor(buf) {
  const r = new Reader(buf);
  let name = '', dataType = 0, raw = null;
  const dims = [], ints = [], floats = [], doubles = [];
  while (!r.done()) {
    const [f, w, v] = r.next();
    if (f === 1) dims.push(...packedVarints(v, w).map(Number));
    else if (f === 2) dataType = Number(v);
    else if (f === 8) name = v.toString('utf8');
    else if (f === 9) raw = Buffer.from(v);  // copy: aligned for the typed array view
    else if (f === 5 || f === 7) ints.push(...packedVarints(v, w).map((x) => BigInt.asIntN(64, x)));
    else if (f === 4) for (let i = 0; i < v.length; i += 4) floats.push(v.readFloatLE(i));
    else if (f === 10) for (let i = 0; i < v.length; i += 8) doubles.push(v.readDoubleLE(i));
  }
  const t = TYPES[dataType];
  if (!t) throw new Error(`tensor '${name}': unsupported data_type ${dataType}`);
  const [type, Arr] = t;
  let data;
  if (raw) data = new Arr(raw.buffer, raw.byteOffset, raw.byteLength / Arr.BYTES_PER_ELEMENT);
  else if (floats.length) data = Arr.from(floats);
  else if (doubles.length) data = Arr.from(doubles);
  else data = Arr.from(ints, (x) => (Arr === BigInt64Array || Arr === BigUint64Array ? x : Number(x)));
  return { name, type, dims, data };
}

/** Op histogram of a model file: {nodes, ops: {'[domain::]Op': count}}. */
function modelOps(path) {
  const model = new Reader(fs.readFileSync(path));
  const ops = {};
  let nodes = 0;
  while (!model.done()) {
    const [f, , graph] = model.next();
    if (f !== 7) continue;
    const g = new Reader(graph);
    while (!g.done()) {
      const [gf, , node] = g.next();
      if (gf !== 1) continue;
      const n = new Reader(node);
      let op = '', domain = '';
      while (!n.done()) {
        const [nf, , nv] = n.next();
        if (nf === 4) op = nv.toString('utf8');
        else if (nf === 7) domain = nv.toString('utf8');
      }
      const k = domain && domain !== 'ai.onnx' ? `${domain}::${op}` : op;
      ops[k] = (ops[k] || 0) + 1;
      nodes++;
    }
  }
  return { nodes, ops };
}

module.exports = { encodeTensor, decodeTensor, modelOps, TYPES };
