// scripts/: build, deployment and documentation helpers, which read every part and which nothing
// imports. It imports contract/, config/, db-client/, edge/, site/, writer/, stack/.
//
// `npm run build:runtime` (and before every `npm start`): bundles the stack's long-running Node programs
// into .build/ (stack/runtime-build.ts says why).
import { readCommandLine } from '../config/command-line.ts';
import { buildRuntime, BUILD_DIR } from '../stack/runtime-build.ts';

const USAGE = `Usage: npm run build:runtime
Bundles the stack's long-running programs (the supervisor with its writer, and the edge server) afresh
into .build/, as npm start does before it starts them.
  --help   print this help and bundle nothing`;
readCommandLine(USAGE, { options: {}, allowPositionals: false });
try {
  await buildRuntime();
} catch (error) {
  console.error(`Could not bundle the stack's programs into ${BUILD_DIR}: ${(error as Error).message}`);
  process.exit(1);
}
