// System tools some tests need (chromium, promtool) come from Debian. On a fresh machine they are
// installed here, once, when the tests run as root; otherwise the test fails with a message saying what to install.
// A test never skips itself because a tool is missing.
import { execFileSync } from 'node:child_process';

const installed = new Set<string>();

function onPath(binary: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${binary}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Ensures `binary` is on PATH, installing Debian's `debianPackage` when missing (as root).
 * Several test files may ask at once: apt waits for the dpkg lock instead of failing.
 */
export function ensureSystemTool(binary: string, debianPackage: string): string {
  if (installed.has(binary) || onPath(binary)) {
    installed.add(binary);
    return binary;
  }
  if (process.getuid?.() !== 0) {
    throw new Error(
      `'${binary}' is missing and the tests are not running as root: install it with 'apt-get install -y ${debianPackage}'`,
    );
  }
  const apt = ['-o', 'DPkg::Lock::Timeout=600', '-o', 'Acquire::Retries=3'];
  try {
    execFileSync('apt-get', [...apt, 'update'], { stdio: 'ignore', timeout: 600_000 });
    execFileSync('apt-get', [...apt, 'install', '-y', debianPackage], {
      stdio: 'ignore',
      timeout: 900_000,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (error) {
    throw new Error(
      `'${binary}' is missing and 'apt-get install -y ${debianPackage}' failed: ${(error as Error).message}`,
    );
  }
  if (!onPath(binary))
    throw new Error(`'apt-get install -y ${debianPackage}' ran but '${binary}' is still not on PATH`);
  installed.add(binary);
  return binary;
}
