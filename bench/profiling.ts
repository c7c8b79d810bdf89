// --profile: one more run of a scenario's load on a service started under `node --cpu-prof`, after the
// measured rounds (the measured figures come from the service without the profiler), then where its
// CPU time went during that run. The analysis itself is in cpu-profile.ts.
import { existsSync, readFileSync } from 'node:fs';
import type autocannon from 'autocannon';
import { contender, measure, measureWindow } from './compare.js';
import {
  analyseCpuProfile,
  formatBreakdown,
  type CpuProfile,
  type ProfileBreakdown,
  type TimeWindow,
} from './cpu-profile.js';
import { loadProblems, type LoadResult } from './load.js';
import { print, printLoud } from './output.js';
import type { ChildServer, ExitStatus } from './processes.js';
import type { ScenarioContext } from './scenarios/scenario-context.js';

/** Starts another instance of the service under --cpu-prof; the profile is written to `profilePath` on exit. */
export type ProfiledServiceStarter = (scenario: string) => Promise<{ server: ChildServer; profilePath: string }>;

export type ProfileReport =
  | {
      /** The .cpuprofile file, kept after the run (open it in Chrome DevTools or speedscope). */
      file: string;
      exit: ExitStatus;
      /** The profiled run (not one of the measured rounds). */
      run: LoadResult;
      /** Microseconds of the monotonic clock. */
      window: TimeWindow;
      breakdown: ProfileBreakdown;
    }
  | { error: string };

/** Profiles the service under the scenario's load; a failure is reported, it does not fail the benchmark. */
export async function profileScenario(
  context: ScenarioContext,
  scenario: 'get' | 'create',
  requests: autocannon.Request[],
): Promise<ProfileReport | undefined> {
  const start = context.startProfiledService;
  if (start === undefined) return undefined;
  print(`  profile (${scenario}): the same load on another service process, under node --cpu-prof`);
  try {
    const { server, profilePath } = await start(scenario);
    print(`    ${server.name}: pid ${server.pid}, ${server.baseUrl}, log ${server.logPath}`);
    const profiled = contender('service', server, requests);
    let measured: Awaited<ReturnType<typeof measureWindow>>;
    let exit: ExitStatus;
    try {
      await measure(profiled, context.settings, context.settings.warmupSeconds, 'warm-up');
      measured = await measureWindow(profiled, context.settings, context.settings.durationSeconds, 'profiled');
    } finally {
      // SIGTERM: the service finishes, exits 0, and Node.js writes the profile on the way out.
      exit = await server.stop();
    }
    const problem = loadProblems(measured.result);
    if (problem !== undefined) printLoud([`profiled run of ${scenario}: ${problem}`]);
    if (!existsSync(profilePath)) {
      throw new Error(
        `no profile at ${profilePath} (the service ended with ${exit.signal ?? `exit code ${exit.code}`})`,
      );
    }
    const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as CpuProfile;
    const breakdown = analyseCpuProfile(profile, { window: measured.window });
    print(`    stopped with SIGTERM: ${exit.signal ?? `exit code ${exit.code}`}; CPU profile ${profilePath}`);
    for (const line of formatBreakdown(breakdown, measured.result.responses)) print(`    ${line}`);
    return { file: profilePath, exit, run: measured.result, window: measured.window, breakdown };
  } catch (error) {
    const message = `profile of ${scenario} failed: ${(error as Error).message}`;
    printLoud([message]);
    return { error: message };
  }
}
