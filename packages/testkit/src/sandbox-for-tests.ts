import { probeSandbox } from '@finger/hub';

let announced = false;

/**
 * True when a bubblewrap sandbox can run here (bwrap on PATH and a trial run succeeds). When it
 * cannot, the sandbox tests are reported loudly as skipped (once per test process) and this
 * returns false (tests use `describe.skipIf(!sandboxForTests())`); with `FINGER_REQUIRE_SERVICES=1`
 * (CI, whose `.ci/run` installs bubblewrap) it throws instead, so a run without a sandbox fails.
 */
export function sandboxForTests(): boolean {
  const p = probeSandbox({ env: process.env });
  if (p.available) return true;
  const message = `no sandbox can run here: ${p.reason ?? 'unknown reason'}`;
  if (process.env.FINGER_REQUIRE_SERVICES === '1') throw new Error(`FINGER_REQUIRE_SERVICES=1 but ${message}`);
  if (!announced) {
    announced = true;
    const bar = '!'.repeat(78);
    console.warn(`\n${bar}\n!! SKIPPED: tests needing a bubblewrap sandbox — ${message}\n${bar}\n`);
  }
  return false;
}
