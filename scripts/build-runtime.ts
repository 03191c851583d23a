// `npm run build:runtime` (and before every `npm start`): bundles the stack's long-running Node programs
// into .build/ (stack/runtime-build.ts says why).
import { buildRuntime, BUILD_DIR } from '../stack/runtime-build.ts';

try {
  await buildRuntime();
} catch (error) {
  console.error(`Could not bundle the stack's programs into ${BUILD_DIR}: ${(error as Error).message}`);
  process.exit(1);
}
