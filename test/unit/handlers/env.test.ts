import { describe, expect, it } from 'vitest';
import { ErrorKind, FloeError } from '../../../lambdas/src/errors.ts';
import { type Env, readSettings } from '../../../lambdas/src/handlers/env.ts';

const GLUE: Env = {
  WAREHOUSE_URI: 's3://lake-bucket/warehouse/',
  STAGING_URI: 's3://staging-bucket/floe',
  DEAD_LETTER_URI: 's3://lake-bucket/dead-letters',
  LEDGER_TABLE: 'floe-ledger',
  AWS_REGION: 'eu-west-1',
};

function failure(env: Env): FloeError {
  try {
    readSettings(env);
  } catch (e) {
    if (e instanceof FloeError) return e;
    throw e;
  }
  throw new Error('expected a FloeError');
}

describe('readSettings', () => {
  it('applies the defaults: glue catalog, config {}, cache 30 s, concurrency 4, lease 120 s', () => {
    const s = readSettings(GLUE);
    expect(s.catalog).toEqual({ type: 'glue', warehouseUri: 's3://lake-bucket/warehouse' });
    expect(s.stagingUri).toBe('s3://staging-bucket/floe');
    expect(s.deadLetterUri).toBe('s3://lake-bucket/dead-letters');
    expect(s.ledgerTable).toBe('floe-ledger');
    expect(s.region).toBe('eu-west-1');
    expect(s.tableCacheRefreshMs).toBe(30_000);
    expect(s.commitConcurrency).toBe(8);
    expect(s.leaseMs).toBe(120_000);
    expect(s.config.format).toBe('json');
    expect(s.config.namespace).toBe('default');
    expect(s.schemaRegistryName).toBeUndefined();
  });

  it('reads FLOE_CONFIG, S3 Tables, the numbers and the registry for avro-gsr', () => {
    const s = readSettings({
      FLOE_CONFIG: JSON.stringify({ format: 'avro-gsr', namespace: 'events' }),
      CATALOG_TYPE: 's3tables',
      TABLE_BUCKET_ARN: 'arn:aws:s3tables:eu-west-1:123456789012:bucket/floe-tables',
      STAGING_URI: 's3://staging-bucket',
      DEAD_LETTER_URI: 's3://dl-bucket/x',
      LEDGER_TABLE: 'floe.ledger_1',
      SCHEMA_REGISTRY_NAME: 'floe-registry',
      TABLE_CACHE_REFRESH_MS: '0',
      COMMIT_CONCURRENCY: '8',
      LEASE_MS: '60000',
      AWS_REGION: 'us-gov-west-1',
    });
    expect(s.config.format).toBe('avro-gsr');
    expect(s.config.namespace).toBe('events');
    expect(s.catalog).toEqual({
      type: 's3tables',
      tableBucketArn: 'arn:aws:s3tables:eu-west-1:123456789012:bucket/floe-tables',
    });
    expect(s.schemaRegistryName).toBe('floe-registry');
    expect([s.tableCacheRefreshMs, s.commitConcurrency, s.leaseMs]).toEqual([0, 8, 60_000]);
    expect(s.region).toBe('us-gov-west-1');
  });

  it('falls back to AWS_DEFAULT_REGION; empty variables count as unset', () => {
    const { AWS_REGION: _, ...rest } = GLUE;
    expect(readSettings({ ...rest, AWS_REGION: '', AWS_DEFAULT_REGION: 'ap-southeast-2' }).region).toBe(
      'ap-southeast-2',
    );
    expect(readSettings({ ...GLUE, COMMIT_CONCURRENCY: '  ' }).commitConcurrency).toBe(8);
  });

  it('names every missing required variable in one ConfigInvalid error', () => {
    const e = failure({});
    expect(e.kind).toBe(ErrorKind.ConfigInvalid);
    expect(e.context.variables).toEqual([
      'WAREHOUSE_URI',
      'STAGING_URI',
      'DEAD_LETTER_URI',
      'LEDGER_TABLE',
      'AWS_REGION',
    ]);
    for (const v of ['WAREHOUSE_URI', 'STAGING_URI', 'DEAD_LETTER_URI', 'LEDGER_TABLE', 'AWS_REGION'])
      expect(e.message).toContain(`${v} is required`);
  });

  it.each([
    ['CATALOG_TYPE', 'hive', 'CATALOG_TYPE="hive" is not one of glue, s3tables'],
    ['WAREHOUSE_URI', 'lake-bucket/warehouse', 'WAREHOUSE_URI="lake-bucket/warehouse" is not an s3://'],
    ['STAGING_URI', 'file:///tmp/staging', 'STAGING_URI="file:///tmp/staging" is not an s3://'],
    ['DEAD_LETTER_URI', 's3://B/x', 'DEAD_LETTER_URI="s3://B/x" is not an s3://'],
    ['LEDGER_TABLE', 'a b', 'LEDGER_TABLE="a b" is not a DynamoDB table name'],
    ['TABLE_CACHE_REFRESH_MS', '30s', 'TABLE_CACHE_REFRESH_MS="30s" is not an integer'],
    ['COMMIT_CONCURRENCY', '0', 'COMMIT_CONCURRENCY="0" is not an integer between 1 and 64'],
    ['LEASE_MS', '-5', 'LEASE_MS="-5" is not an integer'],
    ['LEASE_MS', '1e5', 'LEASE_MS="1e5" is not an integer'],
    ['AWS_REGION', 'Europe', 'AWS_REGION="Europe" is not an AWS region'],
  ])('%s=%s is rejected naming the variable and the value', (variable, value, expected) => {
    const e = failure({ ...GLUE, [variable]: value });
    expect(e.kind).toBe(ErrorKind.ConfigInvalid);
    expect(e.context.variables).toEqual([variable]);
    expect(e.message).toContain(expected);
  });

  it('s3tables needs TABLE_BUCKET_ARN (a valid one), not WAREHOUSE_URI', () => {
    const { WAREHOUSE_URI: _, ...noWarehouse } = GLUE;
    const missing = failure({ ...noWarehouse, CATALOG_TYPE: 's3tables' });
    expect(missing.context.variables).toEqual(['TABLE_BUCKET_ARN']);
    expect(missing.message).toContain('TABLE_BUCKET_ARN is required when CATALOG_TYPE=s3tables');
    const bad = failure({
      ...noWarehouse,
      CATALOG_TYPE: 's3tables',
      TABLE_BUCKET_ARN: 'arn:aws:s3:::bucket',
    });
    expect(bad.message).toContain('TABLE_BUCKET_ARN="arn:aws:s3:::bucket"');
  });

  it('FLOE_CONFIG: bad JSON and an invalid config both name the variable (and the config key)', () => {
    const json = failure({ ...GLUE, FLOE_CONFIG: '{"namespace":' });
    expect(json.context.variables).toEqual(['FLOE_CONFIG']);
    expect(json.message).toContain('FLOE_CONFIG="{\\"namespace\\":" is not JSON');
    const cfg = failure({ ...GLUE, FLOE_CONFIG: '{"namespace": "Bad-Name"}' });
    expect(cfg.context.variables).toEqual(['FLOE_CONFIG']);
    expect(cfg.message).toContain('FLOE_CONFIG: ');
    expect(cfg.message).toContain('namespace');
    expect(cfg.message).toContain('Bad-Name');
    const typo = failure({ ...GLUE, FLOE_CONFIG: '{"nameSpace": "x"}' });
    expect(typo.message).toContain('nameSpace');
  });

  it('a long FLOE_CONFIG is cut in the message', () => {
    const text = `{"namespace": "${'x'.repeat(5000)}`;
    const e = failure({ ...GLUE, FLOE_CONFIG: text });
    expect(e.message.length).toBeLessThan(600);
    expect(e.message).toContain('…');
  });

  it('SCHEMA_REGISTRY_NAME is required only for avro-gsr', () => {
    const e = failure({ ...GLUE, FLOE_CONFIG: '{"format": "avro-gsr"}' });
    expect(e.context.variables).toEqual(['SCHEMA_REGISTRY_NAME']);
    expect(e.message).toContain("SCHEMA_REGISTRY_NAME is required when the config's format is avro-gsr");
    expect(readSettings({ ...GLUE, SCHEMA_REGISTRY_NAME: 'ignored' }).schemaRegistryName).toBeUndefined();
    const bad = failure({ ...GLUE, FLOE_CONFIG: '{"format": "avro-gsr"}', SCHEMA_REGISTRY_NAME: 'a/b' });
    expect(bad.message).toContain('SCHEMA_REGISTRY_NAME="a/b"');
  });

  it('reports several problems at once', () => {
    const e = failure({ ...GLUE, LEDGER_TABLE: undefined, LEASE_MS: 'soon', CATALOG_TYPE: 'GLUE' });
    expect(e.context.variables).toEqual(['CATALOG_TYPE', 'LEDGER_TABLE', 'LEASE_MS']);
  });
});

describe('metricsNamespace', () => {
  it('is Floe unless POWERTOOLS_METRICS_NAMESPACE names another', async () => {
    const { metricsNamespace } = await import('../../../lambdas/src/handlers/ingest.ts');
    expect(metricsNamespace({})).toBe('Floe');
    expect(metricsNamespace({ POWERTOOLS_METRICS_NAMESPACE: ' ' })).toBe('Floe');
    expect(metricsNamespace({ POWERTOOLS_METRICS_NAMESPACE: 'Floe/prod' })).toBe('Floe/prod');
  });
});
