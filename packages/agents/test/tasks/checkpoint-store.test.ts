import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { emptyContext } from '../../src/executor/context-window.js';
import { CheckpointStore } from '../../src/tasks/checkpoint-store.js';
import { emptyTally } from '../../src/tasks/cost.js';
import type { TaskState } from '../../src/tasks/task-state.js';
import type { TaskRecord } from '../../src/tasks/task-types.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'finger-ckpt-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function task(id: string, state: TaskState, created_at = '2026-01-01T00:00:00.000Z'): TaskRecord {
  return {
    id,
    text: 'patch the file',
    workspace: '/tmp/ws',
    state,
    owner: 'admin',
    session_id: `task-${id}`,
    correlation_id: `task-${id}`,
    created_at,
    updated_at: created_at,
    max_steps: 50,
    step: 2,
    plan: null,
    context: emptyContext(),
    steps: [],
    usage: emptyTally(),
  };
}

describe('CheckpointStore', () => {
  it('saves and loads the whole task; leaves no temp files', () => {
    const dir = tempDir();
    const s = new CheckpointStore(dir);
    const t = task('t1', 'RUNNING');
    s.save(t);
    expect(s.load('t1')).toEqual(t);
    expect(readdirSync(dir)).toEqual(['t1.json']);
  });

  it('E_NOT_FOUND for an unknown task, E_INVALID_ARGS for an id that is not a plain name', () => {
    const s = new CheckpointStore(tempDir());
    expect(() => s.load('nope')).toThrow(expect.objectContaining({ code: 'E_NOT_FOUND' }));
    expect(() => s.load('../etc/passwd')).toThrow(expect.objectContaining({ code: 'E_INVALID_ARGS' }));
  });

  it('lists newest first and names unreadable files instead of failing', () => {
    const dir = tempDir();
    const s = new CheckpointStore(dir);
    s.save(task('a', 'COMPLETED', '2026-01-01T00:00:00.000Z'));
    s.save(task('b', 'RUNNING', '2026-01-02T00:00:00.000Z'));
    writeFileSync(join(dir, 'c.json'), '{"torn');
    const { tasks, skipped } = s.list();
    expect(tasks.map((t) => t.id)).toEqual(['b', 'a']);
    expect(skipped).toEqual(['c.json']);
    expect(() => s.load('c')).toThrow(expect.objectContaining({ code: 'E_STORE_UNAVAILABLE' }));
  });

  it('marks live tasks INTERRUPTED at start and leaves the others', () => {
    const s = new CheckpointStore(tempDir());
    const states: TaskState[] = ['PENDING', 'RUNNING', 'WAITING_HUMAN', 'PAUSED', 'COMPLETED', 'STOPPED'];
    states.forEach((st, i) => s.save(task(`t${i}`, st)));
    expect(s.markInterrupted('2026-02-01T00:00:00.000Z').sort()).toEqual(['t0', 't1', 't2']);
    expect(states.map((_, i) => s.load(`t${i}`).state)).toEqual([
      'INTERRUPTED',
      'INTERRUPTED',
      'INTERRUPTED',
      'PAUSED',
      'COMPLETED',
      'STOPPED',
    ]);
    expect(s.load('t1').updated_at).toBe('2026-02-01T00:00:00.000Z');
    expect(s.load('t1').step).toBe(2);
  });

  it('E_STORE_UNAVAILABLE when the directory cannot be written', () => {
    const dir = join(tempDir(), 'tasks');
    const s = new CheckpointStore(dir);
    rmSync(dir, { recursive: true });
    writeFileSync(dir, 'not a directory');
    expect(() => s.save(task('t1', 'RUNNING'))).toThrow(expect.objectContaining({ code: 'E_STORE_UNAVAILABLE' }));
  });
});
