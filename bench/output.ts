// The benchmark is a command-line program: its progress and results go to stdout, in order.

let muted = false;

export function print(line = ''): void {
  if (!muted) process.stdout.write(`${line}\n`);
}

/** After Ctrl-C: the runs cut short would still report (as failures); only printFinal() is heard. */
export function muteProgress(): void {
  muted = true;
}

export function printFinal(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Something that makes a measurement worthless or a result doubtful: impossible to miss in the output. */
export function printLoud(lines: string[]): void {
  const bar = '!'.repeat(78);
  print(bar);
  for (const line of lines) print(`!!! ${line}`);
  print(bar);
}

export function formatNumber(value: number, fractionDigits = 0): string {
  return value.toLocaleString('en-US', {
    minimumFractionDigits: fractionDigits,
    maximumFractionDigits: fractionDigits,
  });
}

export function formatSeconds(seconds: number): string {
  return seconds >= 120 ? `${formatNumber(seconds / 60, 1)} min` : `${formatNumber(seconds, 1)} s`;
}

export function formatMebibytes(bytes: number): string {
  return `${formatNumber(bytes / 1024 / 1024, 1)} MiB`;
}

/** Left-aligned text columns, padded to the widest cell of each. */
export function formatTable(header: string[], rows: string[][]): string[] {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)];
}
