import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

// Vitest global setup of the e2e projects: the tests that run the compiled service or CLI as separate
// processes (graceful shutdown, apikey CLI, fleet start) share one build made before they start.
// Both projects name it; the second finds the build fresh and leaves it alone, so no test rebuilds
// dist/ while another runs it.
export default function buildOnce(): void {
  if (newestModification(['src', 'ormconfig.ts']) > modifiedAt('dist/src/main.js')) {
    execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  }
}

function newestModification(paths: string[]): number {
  return Math.max(
    0,
    ...paths.map((path) =>
      statSync(path).isDirectory()
        ? newestModification(readdirSync(path).map((name) => join(path, name)))
        : statSync(path).mtimeMs,
    ),
  );
}

function modifiedAt(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}
