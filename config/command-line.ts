// A command's options, read strictly with Node's util.parseArgs, and the one answer every command
// gives: to --help its usage on stdout and exit 0, having done nothing; to an option it does not know
// the reason and the usage on stderr and exit 2, so that a mistyped command does nothing either.
import { parseArgs, type ParseArgsConfig } from 'node:util';

type WithHelp<T extends ParseArgsConfig> = T & { options: NonNullable<T['options']> & { help: { type: 'boolean' } }; strict: true };

/** The command's options and positionals; --help and unknown options end the process as above. */
export function readCommandLine<T extends ParseArgsConfig>(usage: string, config: T): ReturnType<typeof parseArgs<WithHelp<T>>> {
  const withHelp = { ...config, options: { ...config.options, help: { type: 'boolean' } }, strict: true } as WithHelp<T>;
  let parsed: ReturnType<typeof parseArgs<WithHelp<T>>>;
  try {
    parsed = parseArgs(withHelp);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${usage}\n`);
    process.exit(2);
  }
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  return parsed;
}
