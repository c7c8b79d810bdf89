import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

// scripts/check-layers.js guards the import graph in `npm run check`; here it is shown failing on
// trees built to break each of its rules (it runs on SQLite's project only: it needs no database).
describe('scripts/check-layers.js', () => {
  let root: string | undefined;

  afterEach(() => {
    if (root !== undefined) rmSync(root, { recursive: true, force: true });
  });

  function check(files: Record<string, string>): { status: number | null; output: string } {
    root = mkdtempSync(join(tmpdir(), 'layers-'));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    const result = spawnSync(process.execPath, ['scripts/check-layers.js', root], { encoding: 'utf8' });
    return { status: result.status, output: result.stdout + result.stderr };
  }

  it('passes a tree that imports only downwards', () => {
    const { status, output } = check({
      'posts/posts.service.ts': "import { Scope } from '../auth/principal.js';\n",
      'auth/principal.ts': "import { ProblemTypes } from '../http/problem/problem-types.js';\n",
      'http/problem/problem-types.ts': 'export const ProblemTypes = {};\n',
    });

    expect(output).toContain('imports only downwards');
    expect(status).toBe(0);
  });

  it('fails an import from a floor above', () => {
    const { status, output } = check({
      'http/body/json-body.guard.ts': "import { invalidRequest } from '../../auth/bearer-errors.js';\n",
      'auth/bearer-errors.ts': 'export function invalidRequest(): void {}\n',
    });

    expect(output).toContain('json-body.guard.ts: imports ../../auth/bearer-errors.js, from auth');
    expect(status).toBe(1);
  });

  it('fails a cycle between two folders of one floor', () => {
    const { status, output } = check({
      'rate-limit/rate-limit.guard.ts': "import { x } from '../idempotency/a.js';\n",
      'idempotency/a.ts': "import { y } from '../rate-limit/b.js';\nexport const x = 1;\n",
      'rate-limit/b.ts': 'export const y = 1;\n',
    });

    expect(output).toContain('a cycle between idempotency and rate-limit');
    expect(status).toBe(1);
  });

  it('fails a folder on no floor, and a long file that does not say why', () => {
    const { status, output } = check({
      'widgets/widget.ts': 'export const widget = 1;\n',
      'posts/long.ts': 'export const line = 1;\n'.repeat(260),
      'posts/long-with-reason.ts': '// Long file: a table of cases.\n' + 'export const line = 1;\n'.repeat(260),
    });

    expect(output).toContain('widgets is on no floor');
    expect(output).toContain('long.ts: 261 lines');
    expect(output).not.toContain('long-with-reason.ts');
    expect(status).toBe(1);
  });
});
