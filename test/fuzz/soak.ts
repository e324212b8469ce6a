/**
 * `npm run fuzz`: the shape fuzzer's properties (test/fuzz/harness.ts) for longer than `npm test`
 * allows, with fresh seeds. Prints each round's seed; on a failure, the seed, the replay path and
 * the shrunk counterexample, then exits 1.
 *
 *   npm run fuzz                      # 3 rounds × 500 sequences per path
 *   npm run fuzz -- --rounds 20 --runs 1000 --paths fast,generic,streaming
 *   npm run fuzz -- --seed 123456     # replay one round (add --path "…" to replay one case)
 */
import { parseArgs } from 'node:util';
import { startDynalite } from '../helpers/dynalite.ts';
import { openDuck } from '../helpers/e2e.ts';
import { FuzzStats, runLoad, runStreaming, streamingCuts, violations } from './harness.ts';
import { type FuzzLine, sequenceArb } from './json-shapes.ts';
import { assertFuzz } from './run-property.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    runs: { type: 'string', default: '500' },
    seed: { type: 'string' },
    path: { type: 'string' },
    paths: { type: 'string', default: 'fast,generic,streaming' },
    'wide-chance': { type: 'string', default: '0.05' },
  },
});
const paths = values.paths.split(',').map((p) => p.trim());
for (const p of paths)
  if (!['fast', 'generic', 'streaming'].includes(p)) throw new Error(`--paths: unknown path '${p}'`);
const rounds = values.seed === undefined ? Number(values.rounds) : 1;
const runs = Number(values.runs);
const arb = sequenceArb({ maxRecords: 12, maxDepth: 4, wideChance: Number(values['wide-chance']) });

const duck = await openDuck();
const dynamo = paths.includes('streaming') ? await startDynalite() : undefined;
let failed = false;
const started = Date.now();
try {
  for (let round = 0; round < rounds && !failed; round++) {
    const seed = values.seed !== undefined ? Number(values.seed) : (Date.now() ^ (round * 0x9e3779b1)) >>> 0;
    for (const path of paths) {
      const stats = new FuzzStats();
      let n = 0;
      const check = async (lines: FuzzLine[]) => {
        const out =
          path === 'streaming'
            ? await runStreaming(duck, dynamo!, lines, streamingCuts(lines), ++n)
            : await runLoad(duck, lines, path === 'fast');
        stats.add(lines, out);
        return violations(lines, out);
      };
      const t0 = Date.now();
      try {
        await assertFuzz(arb, check, {
          replay: (sd, p) => `npm run fuzz -- --paths ${path} --seed ${sd} --path "${p}"`,
          seed,
          numRuns: path === 'streaming' ? Math.ceil(runs / 4) : runs,
          ...(values.path ? { path: values.path } : {}),
        });
        console.log(
          `round ${round + 1}/${rounds} seed ${seed} ${path}: ok in ${((Date.now() - t0) / 1000).toFixed(1)} s — ${stats}`,
        );
      } catch (e) {
        failed = true;
        console.log(`round ${round + 1}/${rounds} seed ${seed} ${path}: FAILED\n${(e as Error).message}`);
        break;
      }
    }
  }
} finally {
  duck.close();
  await dynamo?.close();
}
console.log(`${failed ? 'FAILED' : 'passed'} after ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exit(failed ? 1 : 0);
