/**
 * Where the time goes in one kind of timed section of a profiled bench run:
 *
 *   BENCH_PROFILE_WINDOWS=/tmp/w.json node --import tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/run.ts
 *   node --import tsx bench/profile-summary.ts /tmp/prof/CPU.….cpuprofile /tmp/w.json ingest [top]
 *
 * Section names: load, ingest, ingest-first, commit-tables, commit-fresh, commit-history; from
 * bench/ingest-width.ts width-<variant> (width-wide, width-narrow, width-first-wide …) and, in the
 * committer children's own profiles (BENCH_IW_COMMIT_PROF), width-commit.
 * Prints CPU time per category (the innermost stack frame that matches a category below: the
 * ledger emulator, the AWS SDK, parquet-wasm …, else the file of the leaf frame), then the
 * functions with the most self time. Only the main thread's profile is meaningful (tsx's loader
 * thread writes a second, idle one).
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const CATEGORIES: [string, RegExp][] = [
  [
    'ledger emulator (dynalite)',
    /node_modules\/(dynalite|lazy|levelup|memdown|abstract-leveldown|level-|big\.js)/,
  ],
  ['AWS SDK client', /node_modules\/@(aws-sdk|smithy)\//],
  // Node's HTTP client and socket writes / reads (the SDK's requests; fs streams do not pass here).
  ['HTTP client, sockets (node:http, net)', /node:(_http_\w+|net|internal\/stream_base_commons)$/],
  ['gzip (node:zlib)', /node:zlib$|^(processChunkSync|zlibBufferSync) /],
  ['Powertools logger / metrics', /node_modules\/@aws-lambda-powertools\//],
  ['Lambda event: parseKinesisEvent', /^parseKinesisEvent /],
  ['Parquet encoding (parquet-wasm)', /parquet_wasm|^wasm-function/],
  ['Parquet writer (lambdas/src/parquet)', /lambdas\/src\/parquet\//],
  ['Arrow IPC (apache-arrow)', /node_modules\/apache-arrow/],
  ['JSON scanner (fast path)', /shape-scanner\.ts|^takeBytes /],
  ['columns (columnar-batch)', /columnar-batch\.ts/],
  [
    'metadata.json parse / serialize',
    /iceberg\/json\.ts|iceberg\/table-metadata\.ts|node_modules\/lossless-json/,
  ],
  [
    'ledger entries (ports/ledger, dynamodb-ledger, data-file-json)',
    /ports\/ledger\.ts|dynamodb-ledger\.ts|data-file-json\.ts/,
  ],
  ['Avro (avsc / manifests)', /node_modules\/avsc|\/avro\//],
  [
    'local object store / fs',
    /local-object-store\.ts|file-catalog\.ts|^(open|close|writeFile|readFile|rename|mkdir|openFileHandle|writeBuffer|read|stat|unlink|rm) /,
  ],
];

function main(): void {
  const [profileFile, windowsFile, name, topArg] = process.argv.slice(2);
  if (!profileFile || !windowsFile || !name) {
    console.error('usage: profile-summary.ts <cpuprofile> <windows.json> <section> [top]');
    process.exit(2);
  }
  const top = Number(topArg ?? 30);
  const prof = JSON.parse(readFileSync(profileFile, 'utf8')) as Profile;
  const all = JSON.parse(readFileSync(windowsFile, 'utf8')) as Record<string, [number, number][]>;
  const windows = all[name];
  if (!windows) throw new Error(`no section '${name}' (have: ${Object.keys(all).join(', ')})`);
  const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const inside = (t: number) => windows.some(([a, b]) => t >= a && t <= b);
  const selfUs = new Map<number, number>();
  let t = prof.startTime;
  for (let i = 0; i < prof.samples.length; i++) {
    t += prof.timeDeltas[i]!;
    if (inside(t)) selfUs.set(prof.samples[i]!, (selfUs.get(prof.samples[i]!) ?? 0) + prof.timeDeltas[i]!);
  }
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const label = (f: CallFrame) =>
    `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
  const file = (f: CallFrame) => {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f.url) ?? /\/((?:lambdas|bench)\/.*)$/.exec(f.url);
    return m ? m[1]! : f.functionName.startsWith('(') ? f.functionName : `native ${f.functionName}`;
  };
  const byCategory = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const leaf = nodes.get(id)!.callFrame;
    byFunction.set(label(leaf), (byFunction.get(label(leaf)) ?? 0) + us);
    let cat: string | undefined;
    for (let x: number | undefined = id; x !== undefined && !cat; x = parent.get(x)) {
      const f = nodes.get(x)!.callFrame;
      const key = `${f.functionName} ${f.url}`;
      cat = CATEGORIES.find(([, re]) => re.test(key))?.[0];
    }
    // The bench's own frame around the handler: its self time is the runtime's JSON.parse of the event.
    if (!cat && leaf.functionName === 'timedIngest') cat = 'Lambda event: JSON.parse';
    cat ??= file(leaf);
    byCategory.set(cat, (byCategory.get(cat) ?? 0) + us);
  }
  const n = windows.length;
  const row = (k: string, us: number) =>
    `${(us / 1000 / n).toFixed(1).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)} %  ${k}`;
  console.log(`section '${name}': ${n} windows, ${(total / 1000 / n).toFixed(1)} ms of samples per window`);
  console.log('\nby category (per window):');
  for (const [k, us] of [...byCategory].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(row(k, us));
  console.log('\nfunctions by self time (per window):');
  for (const [k, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(row(k, us));
}

main();
