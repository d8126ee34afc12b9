#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Runs a model with ONNX Runtime (CPU) and prints one JSON object with its latency.
// The peer fxc's numbers are compared against; see usage() for the options.
'use strict';

const fs = require('fs');
const path = require('path');
const { performance } = require('perf_hooks');
const ort = require('onnxruntime-node');
const { encodeTensor, decodeTensor, modelOps, TYPES } = require('./tensor_pb');

function usage() {
  return `usage: node ort_run.js MODEL [options]
  --threads N          intra-op threads (default 2)
  --opt LEVEL          graph optimizations: disabled|basic|extended|all (default all)
  --runs N             timed runs (default 20); --warmup N untimed runs first (default 3)
  --cold-runs N        after the timed runs, N runs each after a read-modify-write walk over
                       a buffer larger than the last-level cache (result: "cold"; fxc
                       codegen --bench --json times its fused program the same way)
  --evict-mb N         size of that buffer in MiB (default 64)
  --interleave LEVEL   after the timed runs, --runs more runs each after one run of a second
                       session at graph optimizations LEVEL, one thread (result:
                       "interleaved"), as fxc codegen --bench alternates its unfused and
                       fused programs
  --dim NAME=N         bind a symbolic input dim (repeatable)
  --seed S             seed of the random inputs (default 1)
  --int-max N          integer inputs are drawn from [0, N) (default 100)
  --inputs DIR         read DIR/input_<i>.pb (TensorProto) instead of random inputs
  --save-inputs DIR    write the inputs used as DIR/input_<i>.pb
  --outputs DIR        write the outputs of the last run as DIR/output_<i>.pb
  --save-optimized F   write ORT's optimized model to F and count its nodes
  --profile F          write ORT's profiler JSON to F (separate session: 1 warm-up run,
                       then the run to read, its last "model_run" event)
Example: node ort_run.js bench/cache/gpt2_small.onnx --dim batch=1 --dim seq=128 --opt disabled`;
}

function parseArgs(argv) {
  const o = { threads: 2, opt: 'all', runs: 20, warmup: 3, coldRuns: 0, evictMb: 64, interleave: '', dims: {}, seed: 1, intMax: 100 };
  const num = (s, flag) => {
    const v = Number(s);
    if (!Number.isInteger(v) || v < 0) throw new Error(`${flag} wants a whole number, got '${s}'`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i], v = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--threads') o.threads = num(v(), a);
    else if (a === '--opt') o.opt = v();
    else if (a === '--runs') o.runs = num(v(), a);
    else if (a === '--warmup') o.warmup = num(v(), a);
    else if (a === '--seed') o.seed = num(v(), a);
    else if (a === '--cold-runs') o.coldRuns = num(v(), a);
    else if (a === '--evict-mb') o.evictMb = num(v(), a);
    else if (a === '--interleave') o.interleave = v();
    else if (a === '--int-max') o.intMax = num(v(), a);
    else if (a === '--inputs') o.inputs = v();
    else if (a === '--save-inputs') o.saveInputs = v();
    else if (a === '--outputs') o.outputs = v();
    else if (a === '--save-optimized') o.saveOptimized = v();
    else if (a === '--profile') o.profile = v();
    else if (a === '--dim') {
      const m = /^([^=]+)=(\d+)$/.exec(v());
      if (!m) throw new Error(`--dim wants NAME=N, got '${argv[i]}'`);
      o.dims[m[1]] = Number(m[2]);
    } else if (a === '-h' || a === '--help') o.help = true;
    else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else if (!o.model) o.model = a;
    else throw new Error(`unexpected argument ${a}`);
  }
  if (!o.help && !o.model) throw new Error('no model given');
  for (const [flag, level] of [['--opt', o.opt], ['--interleave', o.interleave || 'all']]) {
    if (!['disabled', 'basic', 'extended', 'all'].includes(level))
      throw new Error(`${flag} must be disabled|basic|extended|all, got '${level}'`);
  }
  return o;
}

// mulberry32: small, seedable, identical on every machine.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomInput(meta, o, next) {
  if (!meta.isTensor) throw new Error(`input '${meta.name}' is not a tensor`);
  const dims = meta.shape.map((d) => {
    if (typeof d === 'number' && d >= 0) return d;
    if (typeof d === 'string' && d in o.dims) return o.dims[d];
    throw new Error(`input '${meta.name}' has unbound dim '${d}': pass --dim ${d}=N`);
  });
  const n = dims.reduce((a, b) => a * b, 1);
  const entry = Object.values(TYPES).find(([t]) => t === meta.type);
  if (!entry) throw new Error(`input '${meta.name}': cannot generate type ${meta.type}`);
  const Arr = entry[1], data = new Arr(n);
  for (let i = 0; i < n; i++) {
    if (meta.type === 'float32' || meta.type === 'float64') data[i] = next() * 2 - 1;
    else if (meta.type === 'bool') data[i] = next() < 0.5 ? 0 : 1;
    else if (Arr === BigInt64Array || Arr === BigUint64Array) data[i] = BigInt(Math.floor(next() * o.intMax));
    else data[i] = Math.floor(next() * o.intMax);
  }
  return new ort.Tensor(meta.type, data, dims);
}

// Pushes the session's weights out of the caches: one increment per 64-byte line of a
// buffer larger than the last-level cache (a fill could use streaming stores, which
// bypass the caches; an increment has to bring every line in). The same walk as fxc's
// CacheEvictor (core/profile/cache_evictor.h).
function makeEvictor(mb) {
  const words = new Int32Array((mb * 1048576) / 4);
  return () => {
    for (let i = 0; i < words.length; i += 16) words[i] += 1;
  };
}

function stats(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * (s.length - 1) + 0.5))];
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { median_ms: q(0.5), mean_ms: mean, min_ms: s[0], max_ms: s[s.length - 1], p90_ms: q(0.9) };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.help) return console.log(usage());
  const opts = {
    intraOpNumThreads: o.threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: o.opt, logSeverityLevel: 3,
  };
  if (o.saveOptimized) opts.optimizedModelFilePath = path.resolve(o.saveOptimized);
  let t0 = performance.now();
  const session = await ort.InferenceSession.create(o.model, opts);
  const loadMs = performance.now() - t0;

  const next = rng(o.seed);
  const feeds = {};
  session.inputMetadata.forEach((meta, i) => {
    feeds[meta.name] = o.inputs
      ? (({ type, dims, data }) => new ort.Tensor(type, data, dims))(
          decodeTensor(fs.readFileSync(path.join(o.inputs, `input_${i}.pb`))))
      : randomInput(meta, o, next);
  });
  if (o.saveInputs) {
    fs.mkdirSync(o.saveInputs, { recursive: true });
    session.inputNames.forEach((n, i) =>
      fs.writeFileSync(path.join(o.saveInputs, `input_${i}.pb`), encodeTensor(n, feeds[n])));
  }

  for (let i = 0; i < o.warmup; i++) await session.run(feeds);
  let out;
  // n timed runs of the session, each after `before` (untimed) when given.
  const timed = async (n, before) => {
    const t = [];
    for (let i = 0; i < n; i++) {
      if (before) await before();
      t0 = performance.now();
      out = await session.run(feeds);
      t.push(performance.now() - t0);
    }
    return t;
  };
  const ms = await timed(o.runs);
  const cold = o.coldRuns ? await timed(o.coldRuns, makeEvictor(o.evictMb)) : [];
  let inter = [];
  if (o.interleave && o.runs) {
    // The second session runs on the calling thread alone: a pool of its own would spin
    // after each of its runs on the cores the timed session is using (measured: ORT all
    // on MobileNetV2 2.3 -> 4.9 ms beside a 2-thread partner), which is not a cache effect.
    const { optimizedModelFilePath, ...rest } = opts;
    const other = await ort.InferenceSession.create(
        o.model, { ...rest, intraOpNumThreads: 1, graphOptimizationLevel: o.interleave });
    for (let i = 0; i < o.warmup; i++) await other.run(feeds);
    inter = await timed(o.runs, () => other.run(feeds));
    await other.release();
  }
  if (!out) out = await session.run(feeds);
  const result = {
    model: o.model, runtime: `onnxruntime-node ${require('onnxruntime-node/package.json').version}`,
    threads: o.threads, opt: o.opt, runs: o.runs, warmup: o.warmup, load_ms: loadMs,
    ...(o.runs ? stats(ms) : {}),
    ...(o.coldRuns ? { cold: { ...stats(cold), runs: o.coldRuns, evict_mb: o.evictMb } } : {}),
    ...(inter.length ? { interleaved: { ...stats(inter), with: o.interleave } } : {}),
  };
  if (o.outputs) {
    fs.mkdirSync(o.outputs, { recursive: true });
    session.outputNames.forEach((n, i) =>
      fs.writeFileSync(path.join(o.outputs, `output_${i}.pb`), encodeTensor(n, out[n])));
  }
  if (o.profile) result.profile = await profileOnce(o, opts, feeds);
  if (o.saveOptimized) {
    const h = modelOps(o.saveOptimized);
    result.optimized_nodes = h.nodes;
    result.optimized_ops = h.ops;
  }
  await session.release();
  console.log(JSON.stringify(result, null, 1));
}

// Profiling is a separate session so that its overhead never touches the timed runs.
async function profileOnce(o, opts, feeds) {
  const target = path.resolve(o.profile);
  const prefix = path.join(path.dirname(target), `.ort_profile_${process.pid}`);
  const { optimizedModelFilePath, ...rest } = opts;
  const s = await ort.InferenceSession.create(
      o.model, { ...rest, enableProfiling: true, profileFilePrefix: prefix });
  // A warm-up run and then the run to look at: readers take the last "model_run" event.
  await s.run(feeds);
  await s.run(feeds);
  s.endProfiling();
  await s.release();
  // ORT appends a timestamp to the prefix; find the file it wrote and give it our name.
  const dir = path.dirname(prefix);
  const written = fs.readdirSync(dir).filter((f) => f.startsWith(path.basename(prefix)));
  if (written.length !== 1) throw new Error(`expected one ORT profile in ${dir}, found ${written}`);
  fs.renameSync(path.join(dir, written[0]), target);
  return target;
}

main().catch((e) => {
  console.error(`ort_run: ${e.message}`);
  process.exit(1);
});
