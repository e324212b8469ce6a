/** Reading `floe.config.json` for CLI commands, with errors that name the file. */
import { promises as fs } from 'node:fs';
import { type FloeConfig, parseConfig } from '../config.ts';
import { ErrorKind, FloeError } from '../errors.ts';

/** `defaults`: the configuration used when no file is given (e.g. the local stack's mixed stream). */
export async function readConfigFile(path: string | undefined, defaults: unknown = {}): Promise<FloeConfig> {
  if (path === undefined) return parseConfig(defaults);
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
