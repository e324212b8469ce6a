/**
 * cdk-nag (v3) acknowledgments. cdk-nag 3 runs as a CDK policy-validation plugin
 * (`Validations.of(app).addPlugins(new AwsSolutionsChecks(app))`) and reads acknowledgments from
 * `Validations.of(construct).acknowledge(…)`; a finding of a rule that reports several (IAM5:
 * one per wildcard) is acknowledged by its full id, `AwsSolutions-IAM5[Resource::…]`, so each
 * wildcard carries its own reason.
 */
import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** Acknowledges one cdk-nag finding on `scope` (and everything under it), with the reason. */
export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  if (reason.trim().length < 20) throw new Error(`cdk-nag acknowledgment ${id} needs a real reason`);
  Validations.of(scope).acknowledge({ id, reason });
}
