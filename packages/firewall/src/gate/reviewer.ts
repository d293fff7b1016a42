// The external reviewer (§3.8 HumanGate): a command that gets the PendingApproval as JSON on
// stdin and prints one JSON decision `{"decision":"approve"|"reject","reason"?:…}` on stdout.
// Fail safe: a start failure, a timeout, a non-zero exit, too much output or anything but that
// one JSON object is a rejection.

import { spawn } from 'node:child_process';

import type { GateClock, ReviewerConfig } from './gate-types.js';

/** Default time a reviewer has to answer. */
export const DEFAULT_REVIEWER_TIMEOUT_MS = 30_000;

/** Most stdout bytes read from a reviewer; more is bad output. */
export const MAX_REVIEWER_OUTPUT = 64 * 1024;

/** What a reviewer run ended with. `failed`: it did not answer properly (the decision is then `reject`). */
export interface ReviewerVerdict {
  decision: 'approve' | 'reject';
  reason: string;
  failed: boolean;
}

/** A running reviewer: its verdict, and `cancel()` to kill it (a person answered first). */
export interface ReviewerRun {
  result: Promise<ReviewerVerdict>;
  cancel(): void;
}

const MAX_REASON = 2000;

/** Parses the reviewer's stdout: exactly one JSON object with a valid `decision`. */
export function parseReviewerOutput(stdout: string): ReviewerVerdict {
  const text = stdout.trim();
  const bad = (why: string): ReviewerVerdict => ({
    decision: 'reject',
    reason: `reviewer output is not a JSON decision (${why}): ${JSON.stringify(text.slice(0, 120))}`,
    failed: true,
  });
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return bad('not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return bad('not an object');
  const { decision, reason } = v as { decision?: unknown; reason?: unknown };
  if (decision !== 'approve' && decision !== 'reject') return bad('decision must be "approve" or "reject"');
  if (reason !== undefined && typeof reason !== 'string') return bad('reason must be a string');
  const r = (reason ?? '').slice(0, MAX_REASON);
  return { decision, reason: r || `reviewer ${decision === 'approve' ? 'approved' : 'rejected'}`, failed: false };
}

/**
 * Starts the reviewer with `input` (JSON) on stdin. The verdict promise never rejects: every
 * failure is a `{decision:'reject', failed:true}` naming what went wrong.
 */
export function runReviewer(config: ReviewerConfig, input: unknown, clock: GateClock): ReviewerRun {
  const timeoutMs = config.timeout_ms ?? DEFAULT_REVIEWER_TIMEOUT_MS;
  let settle!: (v: ReviewerVerdict) => void;
  const result = new Promise<ReviewerVerdict>((resolve) => (settle = resolve));
  const [cmd, ...argv] = config.command;
  if (cmd === undefined || cmd === '') {
    settle({ decision: 'reject', reason: 'reviewer command is empty', failed: true });
    return { result, cancel: () => {} };
  }
  let done = false;
  const child = spawn(cmd, argv, {
    stdio: ['pipe', 'pipe', 'ignore'],
    ...(config.cwd !== undefined ? { cwd: config.cwd } : {}),
    ...(config.env !== undefined ? { env: config.env } : {}),
  });
  const finish = (v: ReviewerVerdict): void => {
    if (done) return;
    done = true;
    clock.clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    settle(v);
  };
  const fail = (reason: string): void => finish({ decision: 'reject', reason, failed: true });
  const timer = clock.setTimeout(() => fail(`reviewer did not answer within ${timeoutMs} ms`), timeoutMs);

  const chunks: Buffer[] = [];
  let bytes = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > MAX_REVIEWER_OUTPUT) fail(`reviewer wrote more than ${MAX_REVIEWER_OUTPUT} bytes`);
    else chunks.push(chunk);
  });
  child.on('error', (e) => fail(`reviewer could not run: ${e.message}`));
  // 'close' waits for stdout to end, so the whole output is there.
  child.on('close', (code, signal) => {
    if (done) return;
    if (code !== 0) return fail(`reviewer exited with ${code === null ? `signal ${signal}` : `code ${code}`}`);
    finish(parseReviewerOutput(Buffer.concat(chunks).toString('utf8')));
  });
  child.stdin.on('error', () => {
    // EPIPE: the reviewer exited without reading; its exit decides.
  });
  child.stdin.end(`${JSON.stringify(input)}\n`);
  return { result, cancel: () => fail('cancelled: a person answered first') };
}
