/** Where the foreign-engine Iceberg fixture tables live: inside the repository (test/fixtures/iceberg, see its README). */
import { fileURLToPath } from 'node:url';

export const FIXTURES_ROOT = fileURLToPath(new URL('../fixtures/iceberg', import.meta.url));
