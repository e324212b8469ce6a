/**
 * `floe local up` started in-process for an end-to-end test: emulators on free ports, the Kinesis
 * endpoint it prints, its output lines, and a stop that waits for it to end.
 */
import { localUpCommand } from '../../lambdas/src/cli/local-command.ts';

export interface LocalUp {
  readonly endpoint: string;
  /** Everything it printed so far. */
  readonly lines: string[];
  /** Stops it and waits until it has. */
  stop(): Promise<void>;
}

export async function startLocalUp(warehouse: string, commitInterval = '1'): Promise<LocalUp> {
  const lines: string[] = [];
  let stopped!: () => void;
  const until = new Promise<void>((r) => {
    stopped = r;
  });
  const running = localUpCommand(
    { warehouse, kinesisPort: '0', dynamoPort: '0', commitInterval },
    (s) => lines.push(s),
    until,
  );
  const stop = async () => {
    stopped();
    await running;
  };
  let endpoint: string | undefined;
  for (let i = 0; i < 200 && !endpoint; i++) {
    endpoint = /Kinesis\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(lines.join('\n'))?.[1];
    if (!endpoint) await new Promise((r) => setTimeout(r, 25));
  }
  if (!endpoint) {
    await stop();
    throw new Error(`floe local up printed no Kinesis endpoint:\n${lines.join('\n')}`);
  }
  return { endpoint, lines, stop };
}
