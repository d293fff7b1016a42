// Shared fixtures of the shell-risk tests: one RiskAssessor per test file (the grammar loads
// once) and temp dirs for the tests that follow symbolic links on disk.

import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { RiskAssessor } from '../src/risk-assessor.js';

let assessor: Promise<RiskAssessor> | undefined;
/** One RiskAssessor per test file, with default options. */
export function sharedAssessor(): Promise<RiskAssessor> {
  assessor ??= RiskAssessor.create();
  return assessor;
}

/** A fresh temp dir (real path) and its cleanup. */
export function tempDir(label: string): { dir: string; cleanup: () => void } {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), `finger-${label}-`)));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
