/** Reading `floe.config.json` for CLI commands, with errors that name the file. */
import { promises as fs } from 'node:fs';
import { type FloeConfig, parseConfig } from '../config.ts';
import { ErrorKind, FloeError } from '../errors.ts';

export async function readConfigFile(path: string | undefined): Promise<FloeConfig> {
  if (path === undefined) return parseConfig({});
  let text: string;
  try {
    text = await fs.readFile(path, 'utf8');
  } catch (e) {
    throw new FloeError(ErrorKind.ConfigInvalid, `cannot read config file ${path}: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `config file ${path} is not valid JSON: ${(e as Error).message}`,
    );
  }
  return parseConfig(json);
}
