/**
 * Shared by the CDK tests: synthesizes a Floe stack from context, in-process, with bundling
 * skipped (`aws:cdk:bundling-stacks: []`: the Lambda assets point at the project without running
 * esbuild, so a synth takes well under a second), and runs cdk-nag's AwsSolutions pack on it.
 * The app gets cdk.json's feature flags (its `@aws-cdk/…` context keys), as `cdk synth` does, so
 * the tests read the template that is deployed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { settingsFromContext } from '../../lib/config.ts';
import { FloeStack } from '../../lib/floe-stack.ts';
import { PROJECT_ROOT } from '../../lib/lambda.ts';

/** cdk.json's feature flags (context keys starting with `@`). */
export const FEATURE_FLAGS: Readonly<Record<string, unknown>> = Object.fromEntries(
  Object.entries(
    (JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> })
      .context,
  ).filter(([k]) => k.startsWith('@')),
);

export interface Synth {
  readonly app: App;
  readonly stack: FloeStack;
  readonly template: Template;
}

/** A FloeStack for `context`, bundling skipped unless `bundle` is set. */
export function synth(
  context: Record<string, unknown> = {},
  opts: { bundle?: boolean; outdir?: string } = {},
): Synth {
  const app = new App({
    context: { ...FEATURE_FLAGS, ...(opts.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }), ...context },
    ...(opts.outdir === undefined ? {} : { outdir: opts.outdir }),
  });
  const settings = settingsFromContext(app.node);
  const stack = new FloeStack(app, settings.stackName, { settings });
  return { app, stack, template: Template.fromStack(stack) };
}

export interface NagFinding {
  readonly rule: string;
  readonly severity: string;
  readonly paths: readonly string[];
}

/** cdk-nag AwsSolutions findings not acknowledged (errors and warnings alike). */
export function nagFindings(scope: IConstruct): NagFinding[] {
  return new AwsSolutionsChecks().validateScope(scope).violations.map((v) => ({
    rule: v.ruleName,
    severity: v.severity ?? 'error',
    paths: v.violatingResources.map(
      (r) => (r as { constructPath?: string }).constructPath ?? r.resourceLogicalId ?? '?',
    ),
  }));
}

/** Every finding, acknowledged or not (acknowledgments ignored), as `ruleId @ path`. */
export function allNagFindings(scope: IConstruct): string[] {
  const pack = new AwsSolutionsChecks();
  // cdk-nag consults this private method for every finding; ignoring acknowledgments shows what
  // they hide, so the test can check that none is stale.
  (pack as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
  return pack
    .validateScope(scope)
    .violations.flatMap((v) =>
      v.violatingResources.map((r) => `${v.ruleName} @ ${(r as { constructPath?: string }).constructPath}`),
    );
}

export interface Acknowledgment {
  readonly id: string;
  readonly reason: string;
  readonly path: string;
}

/** Every `Validations.of(x).acknowledge(…)` in the tree. */
export function acknowledgments(scope: IConstruct): Acknowledgment[] {
  const out: Acknowledgment[] = [];
  for (const c of scope.node.findAll()) {
    for (const m of c.node.metadata) {
      if (m.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY || !m.data) continue;
      for (const [id, reason] of Object.entries(m.data as Record<string, string>)) {
        out.push({ id: id.replace(/^annotation::/i, ''), reason, path: c.node.path });
      }
    }
  }
  return out;
}

/** The resources of one type: logical id → properties. */
export function resources(template: Template, type: string): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    Object.entries(template.findResources(type)).map(([id, r]) => [
      id,
      (r as { Properties?: Record<string, unknown> }).Properties ?? {},
    ]),
  );
}

/** The only resource of `type` matching `pred`. */
export function one(
  template: Template,
  type: string,
  pred: (props: Record<string, unknown>, id: string) => boolean = () => true,
): Record<string, unknown> {
  const found = Object.entries(resources(template, type)).filter(([id, p]) => pred(p, id));
  if (found.length !== 1) throw new Error(`expected one ${type}, found ${found.length}`);
  return found[0]![1];
}
