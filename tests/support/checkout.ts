// A copy of this checkout in a fresh directory, for tests that need the checkout somewhere else: the
// tracked and untracked-but-not-ignored files, and node_modules hard-linked when it can be.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT_DIR } from '../../config/checkout.ts';

/** `home` is made with `mode` (mkdtemp's own is 0700); the copy is `home`/app. */
export function copyCheckout(mode = 0o700): { home: string; app: string } {
  const home = mkdtempSync(path.join(tmpdir(), 'checkout-copy-'));
  chmodSync(home, mode);
  const app = path.join(home, 'app');
  // The working tree as it is: a tracked file deleted but not yet staged is listed by --cached, and left out.
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT_DIR, encoding: 'utf8' })
    .split('\0').filter((file) => file && existsSync(path.join(ROOT_DIR, file)));
  mkdirSync(app);
  execFileSync('cp', ['--parents', '-t', app, ...files], { cwd: ROOT_DIR });
  try {
    execFileSync('cp', ['-al', 'node_modules', app], { cwd: ROOT_DIR });
  } catch {
    execFileSync('cp', ['-a', 'node_modules', app], { cwd: ROOT_DIR });
  }
  return { home, app };
}
