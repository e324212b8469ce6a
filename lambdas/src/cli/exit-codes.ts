/**
 * The exit codes of every `floe` command, one table so a script can branch on them (README "Exit
 * codes"). Worse outcomes get higher numbers, so when several apply the highest one is returned.
 */
export const ExitCode = {
  /** Everything landed (or there was nothing new to do, e.g. every file was already loaded). */
  Ok: 0,
  /** An error stopped the command: bad input or config, a missing warehouse, I/O, a crash. */
  Error: 1,
  /** The command line itself is wrong: unknown command or option, a missing argument. */
  Usage: 2,
  /** Done, but some lines did not land: dead-lettered (`load`) or skipped (`send`). */
  Partial: 3,
  /** At least one table's commit failed: its records are not loaded (the others are). */
  TableFailed: 4,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The `--help` text that lists them. */
export const EXIT_CODES_HELP = `Exit codes (every command):
  ${ExitCode.Ok}  everything landed (or nothing new to do)
  ${ExitCode.Error}  error: bad input, config or warehouse, I/O failure
  ${ExitCode.Usage}  usage: unknown command or option, missing argument
  ${ExitCode.Partial}  partial: some lines dead-lettered (load) or skipped (send); the rest landed
  ${ExitCode.TableFailed}  a table's commit failed: its records are not loaded, the other tables are`;
