/**
 * What a script can rely on, run as the real command (`node bin/floe.mjs …`): the exit codes of
 * cli/exit-codes.ts, one-line errors for inputs and folders that cannot be used, quiet output into
 * a closed pipe, and the load report's namespaces, template dead letters and replay hint.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/e2e.ts';
import { BIN, ROOT, runNode } from '../helpers/run-node.ts';

const tmp = tempDir('floe-e2e-exit-codes-');
afterAll(() => tmp.cleanup());

const floe = (...args: string[]) => runNode([BIN, ...args], { FLOE_WAREHOUSE: undefined });
const at = (...parts: string[]) => join(tmp.dir, ...parts);
const ORDER = '{"event_type":"ORDER","event_id":"o1","amount":1.5}';
const USER = '{"event_type":"USER","event_id":"u1","name":"ann"}';

function write(name: string, lines: readonly string[]): string {
  const path = at(name);
  writeFileSync(path, lines.length === 0 ? '' : `${lines.join('\n')}\n`);
  return path;
}

/** `floe ARGS…` whose stdout reader is gone before the command writes (as `| head` leaves it). */
function floeIntoClosedPipe(...args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('exit codes', () => {
  it('load: 0 everything landed, 3 lines dead-lettered, 4 a table failed, 1 an error, 2 usage', async () => {
    const clean = write('clean.ndjson', [ORDER, USER]);
    expect((await floe('load', clean, '-w', at('wh-ok'), '-q')).code).toBe(0);

    const partial = await floe(
      'load',
      write('partial.ndjson', [ORDER, '{"event_type":', USER]),
      '-w',
      at('wh-3'),
      '-q',
    );
    expect(partial.code).toBe(3);
    expect(partial.stdout).toContain('2 rows committed to 2 table(s), 1 rejected');

    // A table whose metadata is not JSON: its commit fails, the other table lands.
    const broken = at('wh-4', 'default', 'user_events', 'metadata');
    mkdirSync(broken, { recursive: true });
    writeFileSync(join(broken, 'v1.metadata.json'), '{ not metadata');
    writeFileSync(join(broken, 'version-hint.text'), '1');
    // With a dead letter too: the higher code wins.
    const failed = await floe(
      'load',
      write('mixed.ndjson', [ORDER, USER, 'not json']),
      '-w',
      at('wh-4'),
      '-q',
    );
    expect(failed.code).toBe(4);
    expect(failed.stdout).toContain('table default.user_events: NOT LOADED (1 records)');
    expect(failed.stdout).toContain('1 rejected');
    expect(failed.stdout).toMatch(/^default\s+order_events\s+1\s/m);

    const missing = await floe('load', at('nope.ndjson'), '-w', at('wh-1'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`floe: input file ${at('nope.ndjson')} does not exist [NotFound]\n`);

    for (const usage of [['load'], ['nope'], ['load', clean, '--nope'], []]) {
      expect((await floe(...usage)).code, usage.join(' ')).toBe(2);
    }
  });

  it('--help lists them, for every command and for load', async () => {
    const main = await floe('--help');
    expect(main.code).toBe(0);
    expect(main.stdout).toContain('Exit codes (every command):');
    for (const line of [
      /^ {2}0 {2}everything landed/m,
      /^ {2}2 {2}usage/m,
      /^ {2}3 {2}partial/m,
      /^ {2}4 {2}a table's commit failed/m,
    ])
      expect(main.stdout).toMatch(line);
    const load = await floe('load', '--help');
    expect(load.stdout).toMatch(
      /Exit codes: 0 everything landed[\s\S]*3 some lines were\s+dead-lettered[\s\S]*4 a table's commit failed/,
    );
    expect(load.stdout).toContain('--force');
  });
});

describe('one-line errors and warnings', () => {
  const oneLine = (stderr: string) => {
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr).not.toMatch(/^\s+at /m);
  };

  it('a directory given as an input file', async () => {
    const dir = at('a-folder');
    mkdirSync(dir, { recursive: true });
    const r = await floe('load', dir, '-w', at('wh-dir'));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `floe: ${dir} is a directory, not an NDJSON file (to load the files in it: floe load ${dir}/*.ndjson) [DataInvalid]\n`,
    );
  });

  it('an empty input file is a warning (also with -q), not an error; the other files load', async () => {
    const empty = write('empty.ndjson', []);
    const r = await floe('load', empty, write('one.ndjson', [ORDER]), '-w', at('wh-empty'), '-q');
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`floe: warning: ${empty} is empty: nothing to load from it\n`);
    expect(r.stdout).toMatch(/^default\s+order_events\s+1\s/m);
  });

  describe('read commands pointed at a folder that is no warehouse', () => {
    const READS = [
      ['tables'],
      ['describe', 'order_events'],
      ['snapshots', 'order_events'],
      ['query', 'SELECT 1'],
      ['dead-letters', 'list'],
      ['dead-letters', 'show', 'x-0000000000000000/0000000001'],
      ['dead-letters', 'replay'],
    ];
    const notWarehouse = at('src-folder');
    const fresh = at('fresh-warehouse');
    const loadedNothing = at('loaded-nothing');

    beforeAll(async () => {
      mkdirSync(notWarehouse, { recursive: true });
      writeFileSync(join(notWarehouse, 'notes.txt'), 'not a table');
      // As `floe local up` leaves a new warehouse: its marker folder only.
      mkdirSync(join(fresh, '_floe'), { recursive: true });
      expect((await floe('load', write('nothing.ndjson', []), '-w', loadedNothing, '-q')).code).toBe(0);
    });

    it.each(READS.map((cmd) => [cmd.join(' '), cmd] as const))('%s names the folder', async (_name, cmd) => {
      const r = await floe(...cmd, '-w', notWarehouse);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        new RegExp(
          `^floe: ${notWarehouse} is not a warehouse: it holds no _floe/ folder and no Iceberg table`,
        ),
      );
      oneLine(r.stderr);
      const gone = await floe(...cmd, '-w', at('no-such-folder'));
      expect(gone.code).toBe(1);
      expect(gone.stderr).toMatch(
        new RegExp(`^floe: no warehouse at ${at('no-such-folder')}: the folder does not exist`),
      );
      oneLine(gone.stderr);
    });

    it('an empty warehouse (new from floe local up, or a load with no tables) is still one', async () => {
      for (const wh of [fresh, loadedNothing]) {
        const tables = await floe('tables', '-w', wh);
        expect(tables.code, tables.stderr).toBe(0);
        expect(tables.stdout).toBe(`no tables in ${wh}\n`);
        expect((await floe('dead-letters', 'list', '-w', wh)).code).toBe(0);
      }
    });
  });

  it('output into a pipe whose reader left (`floe tables | head -1`) ends quietly, without an EPIPE trace', async () => {
    const wh = at('wh-pipe');
    expect((await floe('load', write('pipe.ndjson', [ORDER, USER]), '-w', wh, '-q')).code).toBe(0);
    for (const args of [['tables'], ['query', 'SELECT * FROM range(20000)'], ['--help']]) {
      const r = await floeIntoClosedPipe(...args, ...(args[0] === '--help' ? [] : ['-w', wh]));
      expect(r.stderr, args.join(' ')).toBe('');
      expect(r.code, args.join(' ')).toBe(0);
    }
  });
});

describe('the load report', () => {
  it('shows each table with its namespace', async () => {
    const cfg = at('tenants.json');
    writeFileSync(cfg, JSON.stringify({ routing: { template: '{tenant}.orders' } }));
    const input = write('tenants.ndjson', [
      '{"tenant":"acme","id":1}',
      '{"tenant":"globex","id":2}',
      '{"tenant":"acme","id":3}',
    ]);
    const r = await floe('load', input, '-w', at('wh-ns'), '-c', cfg, '-q');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^namespace\s+table\s+rows\s/m);
    expect(r.stdout).toMatch(/^acme\s+orders\s+2\s/m);
    expect(r.stdout).toMatch(/^globex\s+orders\s+1\s/m);
  });

  it("a dead letter from a template route names the template's missing field", async () => {
    const cfg = at('template.json');
    writeFileSync(
      cfg,
      JSON.stringify({ routing: { template: '{source}_{payload.kind}_events', defaultTable: null } }),
    );
    const input = write('template.ndjson', [
      '{"source":"web","payload":{"kind":"login"}}',
      '{"source":"web","payload":{}}',
    ]);
    const wh = at('wh-template');
    const r = await floe('load', input, '-w', wh, '-c', cfg, '-q');
    expect(r.code).toBe(3);
    const detail = "template '{source}_{payload.kind}_events': field {payload.kind} is missing";
    expect(r.stdout).toContain(`${input}:2  [no-route] ${detail}`);
    const listed = await floe('dead-letters', 'list', '-w', wh, '--json');
    expect((JSON.parse(listed.stdout.trim()) as { detail: string }).detail).toMatch(
      new RegExp(`^${detail.replace(/[{}.]/g, '\\$&')}`),
    );
  });

  it('suggests -c in the replay hint only with the config that was given', async () => {
    const input = write('hint.ndjson', [ORDER, 'not json']);
    const wh = at('wh-hint');
    const without = await floe('load', input, '-w', wh, '-q');
    expect(without.code).toBe(3);
    const hint = without.stdout.split('\n').find((l) => l.startsWith('replay them'));
    expect(hint).toBe(
      `replay them after fixing the input or writing a config (then add -c CONFIG): floe dead-letters replay -w ${wh}`,
    );
    const cfg = at('hint.json');
    writeFileSync(cfg, '{}');
    const withConfig = await floe('load', input, '-w', wh, '-c', cfg, '-q', '--force');
    expect(withConfig.stdout.split('\n').find((l) => l.startsWith('replay them'))).toBe(
      `replay them (after fixing the config): floe dead-letters replay -w ${wh} -c ${cfg}`,
    );
  });
});
