// Starts a worker thread's TypeScript script from the sources (tests, `tsx`), where no bundle was
// built: registers tsx's loader in this thread, then imports the script named in `workerData`.
// (Worker threads do not take `--import` in execArgv.) The bundled CLI never uses this file.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.script);
