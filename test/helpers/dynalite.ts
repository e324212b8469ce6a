/** dynalite (DynamoDB emulator) on 127.0.0.1 with a client pointed at it, for integration tests. */
import type { DynamoEmulator } from '../../lambdas/src/adapters/local/emulators.ts';

export { startDynalite } from '../../lambdas/src/adapters/local/emulators.ts';
export type LocalDynamo = DynamoEmulator;
