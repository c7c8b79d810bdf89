import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A server the benchmark started: a separate process with its own CPU time, stopped by the benchmark. */
export interface ChildServer {
  name: string;
  pid: number;
  baseUrl: string;
  logPath: string;
  /** SIGTERM, then SIGKILL after a grace period; resolves once the process has exited. */
  stop(): Promise<ExitStatus>;
}

/** How a child ended: `code` when it exited, `signal` when a signal ended it. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const STOP_TIMEOUT_MS = 15_000;
const READY_TIMEOUT_MS = 90_000;

// Every child still running; stopped on exit, on Ctrl-C and on errors, so none outlives the benchmark.
const running = new Set<ChildProcess>();

process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Stops every child still running (SIGTERM, then SIGKILL after a grace period). */
export async function stopAllChildren(): Promise<void> {
  await Promise.all([...running].map((child) => stopChild(child)));
}

export interface StartServerOptions {
  name: string;
  /** The JavaScript file to run with this Node.js binary. */
  script: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  port: number;
  /** Answers 200 once the server is ready. */
  readyPath: string;
  /** stdout and stderr go here (appended). */
  logPath: string;
  /** Options of the node binary itself, before the script (e.g. --cpu-prof). */
  nodeOptions?: string[];
}

/** Starts `node script` and resolves once it answers on readyPath; rejects with its log when it dies first. */
export async function startServer(options: StartServerOptions): Promise<ChildServer> {
  const log = openSync(options.logPath, 'a');
  const child = spawn(process.execPath, [...(options.nodeOptions ?? []), options.script], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  running.add(child);
  const exited = new Promise<never>((_, reject) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      reject(new Error(`${options.name} exited (${signal ?? `code ${code}`}) before it was ready`));
    });
    child.once('error', reject);
  });
  exited.catch(() => {});
  const baseUrl = `http://127.0.0.1:${options.port}`;
  try {
    await Promise.race([waitUntilReady(`${baseUrl}${options.readyPath}`), exited]);
  } catch (error) {
    await stopChild(child);
    throw new Error(`${(error as Error).message}; last lines of ${options.logPath}:\n${tail(options.logPath, 15)}`, {
      cause: error,
    });
  }
  return { name: options.name, pid: child.pid!, baseUrl, logPath: options.logPath, stop: () => stopChild(child) };
}

async function waitUntilReady(url: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${READY_TIMEOUT_MS / 1000} s`);
    await sleep(100);
  }
}

function stopChild(child: ChildProcess): Promise<ExitStatus> {
  if (child.exitCode !== null || child.signalCode !== null) {
    running.delete(child);
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, signal });
    });
    child.kill('SIGTERM');
  });
}

/** A TCP port nobody listens on right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('the OS gave no port')),
      );
    });
  });
}

/** Resident set size of a process, in bytes (Linux: VmRSS of /proc/<pid>/status). */
export function residentSetSize(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

// USER_HZ: the unit of the CPU times in /proc/<pid>/stat, 100 on every Linux architecture Node.js runs on.
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time (user + system) a process has used so far, in seconds (Linux: /proc/<pid>/stat). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may contain spaces: utime is the 14th
  // field of the line, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

export function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

function tail(path: string, lines: number): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
