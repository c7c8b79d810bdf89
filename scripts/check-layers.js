#!/usr/bin/env node
// npm run check:layers — the import graph of src/ goes one way, down the floors below, and no file
// grows past MAX_LINES without saying why in its head comment. Prints every violation; exit 1 if any.
//
//   node scripts/check-layers.js [dir]   (default: src)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';

// Bottom to top: a file may import from its own floor's folders (without a cycle between folders)
// and from the floors below, never from above. docs/architecture.md draws the same picture.
const FLOORS = [
  ['common'],
  ['config'],
  ['database'],
  ['http'],
  ['logging', 'openapi', 'rate-limit', 'idempotency'],
  ['auth'],
  ['events', 'webhooks', 'posts', 'health', 'metrics'],
  ['app.module.ts', 'app.setup.ts', 'main.ts', 'bin'],
];
const MAX_LINES = 250;
// A longer file says why near its top, e.g. `// Long file: one validated class per variable …`.
const LONG_FILE_REASON = /Long file: \S/;
const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'";]*?from\s*'(\.{1,2}\/[^']+)'|import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;

const root = process.argv[2] ?? 'src';
const floorOf = new Map(FLOORS.flatMap((names, floor) => names.map((name) => [name, floor])));

function* sourceFiles(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (name.endsWith('.ts')) yield path;
  }
}

/** The folder of src/ a file belongs to (or the file itself, for the files at the top). */
function unitOf(path) {
  return relative(root, path).split(sep)[0].replace(/\.js$/, '.ts');
}

const violations = [];
const folderEdges = new Map();
for (const file of sourceFiles(root)) {
  const text = readFileSync(file, 'utf8');
  const unit = unitOf(file);
  const floor = floorOf.get(unit);
  if (floor === undefined) {
    violations.push(`${file}: ${unit} is on no floor; add it to FLOORS in scripts/check-layers.js`);
    continue;
  }
  const lines = text.split('\n').length;
  if (lines > MAX_LINES && !LONG_FILE_REASON.test(text.split('\n').slice(0, 15).join('\n'))) {
    violations.push(`${file}: ${lines} lines (over ${MAX_LINES}) and no "Long file: <why>" in its head comment`);
  }
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[1] ?? match[2];
    const target = normalize(join(dirname(file), specifier));
    if (relative(root, target).startsWith('..')) {
      violations.push(`${file}: imports ${specifier}, outside ${root}/`);
      continue;
    }
    const targetUnit = unitOf(target);
    const targetFloor = floorOf.get(targetUnit);
    if (targetUnit === unit) continue;
    if (targetFloor === undefined || targetFloor > floor) {
      violations.push(`${file}: imports ${specifier}, from ${targetUnit} (a floor above ${unit})`);
    } else if (targetFloor === floor) {
      if (!folderEdges.has(unit)) folderEdges.set(unit, new Map());
      folderEdges.get(unit).set(targetUnit, `${file} → ${specifier}`);
    }
  }
}

// Folders on one floor may use each other one way only.
for (const [from, targets] of folderEdges) {
  for (const [to, example] of targets) {
    const back = folderEdges.get(to)?.get(from);
    if (back !== undefined && from < to) violations.push(`a cycle between ${from} and ${to}: ${example}; ${back}`);
  }
}

if (violations.length > 0) {
  process.stderr.write(`${violations.join('\n')}\n\n${violations.length} layering violation(s) in ${root}/\n`);
  process.exit(1);
}
process.stdout.write(`layers: ${root}/ imports only downwards; no file over ${MAX_LINES} lines without a reason\n`);
