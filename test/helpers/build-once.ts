import { execFileSync } from 'node:child_process';

// Vitest global setup of the e2e-sqlite project: the tests that run the compiled service or CLI as
// separate processes (graceful shutdown, apikey CLI) share one build made before any of them starts,
// so no test rebuilds dist/ while another runs it.
export default function buildOnce(): void {
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
}
