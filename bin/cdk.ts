/**
 * The CDK app (`cdk.json`: `node --import tsx bin/cdk.ts`):
 *
 *   npx cdk deploy -c appType=dynamic|dynamic-avro [-c catalogType=glue|s3tables] [-c tableFormatVersion=2|3]
 *
 * Every setting comes from context (`-c key=value`, or `cdk.json`'s `context`) and is validated
 * first (`lib/config.ts`): an invalid one stops synth with a message naming the key and value.
 * cdk-nag's AwsSolutions checks run on every synth; an unacknowledged finding fails it.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { isFloeError } from '../lambdas/src/errors.ts';
import { type FloeSettings, settingsFromContext } from '../lib/config.ts';
import { FloeStack } from '../lib/floe-stack.ts';

const app = new App();
let settings: FloeSettings;
try {
  settings = settingsFromContext(app.node);
} catch (e) {
  if (!isFloeError(e)) throw e;
  console.error(`Error: ${e.message}`);
  process.exit(1);
}
// Environment-agnostic: account and region are CloudFormation pseudo parameters, resolved by
// `cdk deploy` from the credentials in use; synth needs no lookups and no network.
new FloeStack(app, settings.stackName, { settings });
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
