import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { InProcessRuntime, silentLogger, type ToolCallContext } from '@finger/hub';
import { assertManifest, isFingerError, type ModuleManifest } from '@finger/protocol';
import { toolContext } from '@finger/testkit';

import { createScratchpadModule, EMPTY_SCRATCHPAD, replaceSection, type ScratchpadModule } from '../src/index.js';

const DIR = fileURLToPath(new URL('..', import.meta.url));
const MANIFEST = JSON.parse(await fs.readFile(path.join(DIR, 'module.json'), 'utf8')) as ModuleManifest;

let tmp: string;
let ws: string;
let pad: ScratchpadModule;
let file: string;

beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'finger-scratchpad-'));
  ws = path.join(tmp, 'workspace');
  await fs.mkdir(ws);
  pad = createScratchpadModule({ home: tmp, workspace_roots: [ws, path.join(tmp, 'other')] });
  file = path.join(ws, '.finger', 'scratchpad.md');
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

async function rejection(p: Promise<unknown>): Promise<{ code: string; message: string; details: any }> {
  try {
    await p;
  } catch (e) {
    if (isFingerError(e)) return { code: e.code, message: e.message, details: e.details as any };
    throw e;
  }
  throw new Error('expected a rejection');
}

describe('scratchpad.update', () => {
  it('answers exactly "OK" and writes <workspace>/.finger/scratchpad.md with both sections', async () => {
    expect(await pad.tools.update({ type: 'task', content: 'Fix the login bug\nsee issue 12' })).toBe('OK');
    expect(await pad.tools.update({ type: 'todo', content: '- [ ] reproduce\n- [x] read the code' })).toBe('OK');
    expect(await fs.readFile(file, 'utf8')).toBe(
      '# Current Task\nFix the login bug\nsee issue 12\n\n# Todo\n- [ ] reproduce\n- [x] read the code\n',
    );
    expect(pad.file).toBe(file);
  });

  it('a task of 11 lines → E_INVALID_ARGS "task section has 11 lines; the limit is 10", nothing written', async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `line ${i + 1}`).join('\n');
    const err = await rejection(pad.tools.update({ type: 'task', content: eleven }));
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.message).toBe('task section has 11 lines; the limit is 10');
    expect(err.details).toEqual({ rule: 'task_max_lines', lines: 11, limit: 10 });
    await expect(fs.access(file)).rejects.toThrow();
    const ten = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n');
    expect(await pad.tools.update({ type: 'task', content: `\n${ten}\n\n` })).toBe('OK');
  });

  it('a todo line without a checkbox → E_INVALID_ARGS naming the line', async () => {
    const err = await rejection(
      pad.tools.update({ type: 'todo', content: '- [ ] one\nbuy milk\n\n- [x] two\n* three' }),
    );
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.message).toBe(
      'todo line 2 "buy milk" is not a checkbox item; every todo line must start with "- [ ] " or "- [x] "',
    );
    expect(err.details).toEqual({
      rule: 'todo_checkbox',
      lines: [
        { line: 2, text: 'buy milk' },
        { line: 5, text: '* three' },
      ],
    });
    for (const bad of ['- [] x', '- [X] x', '-[ ] x', '- [ ]', '  - [ ] indented']) {
      expect((await rejection(pad.tools.update({ type: 'todo', content: bad }))).code).toBe('E_INVALID_ARGS');
    }
  });

  it('content that contains a section header line is refused', async () => {
    const err = await rejection(pad.tools.update({ type: 'task', content: 'a\n# Todo\n- [ ] sneaky' }));
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.details).toEqual({ rule: 'no_headers', line: 2, text: '# Todo' });
  });

  it('updating the task leaves the todo section byte-identical, and vice versa', async () => {
    await fs.mkdir(path.dirname(file));
    // Hand-edited file: odd spacing and trailing blanks that a rewrite would normalise.
    const original = 'intro kept\n# Current Task\nold task\n\n\n# Todo\n- [ ] a  \n\n- [x] b\n\n';
    await fs.writeFile(file, original);
    expect(await pad.tools.update({ type: 'task', content: 'new task' })).toBe('OK');
    const afterTask = await fs.readFile(file, 'utf8');
    expect(afterTask).toBe('intro kept\n# Current Task\nnew task\n\n# Todo\n- [ ] a  \n\n- [x] b\n\n');
    expect(afterTask.slice(afterTask.indexOf('# Todo'))).toBe(original.slice(original.indexOf('# Todo')));

    expect(await pad.tools.update({ type: 'todo', content: '- [x] a' })).toBe('OK');
    const afterTodo = await fs.readFile(file, 'utf8');
    expect(afterTodo).toBe('intro kept\n# Current Task\nnew task\n\n# Todo\n- [x] a\n');
    expect(afterTodo.slice(0, afterTodo.indexOf('# Todo'))).toBe(afterTask.slice(0, afterTask.indexOf('# Todo')));
  });

  it('an empty content clears one section only', async () => {
    await pad.tools.update({ type: 'task', content: 'x' });
    await pad.tools.update({ type: 'todo', content: '- [ ] y' });
    await pad.tools.update({ type: 'task', content: '' });
    expect(await pad.tools.read()).toBe('# Current Task\n\n# Todo\n- [ ] y\n');
  });

  it('concurrent updates of both sections keep both', async () => {
    await Promise.all([
      pad.tools.update({ type: 'task', content: 'task text' }),
      pad.tools.update({ type: 'todo', content: '- [ ] item' }),
    ]);
    expect(await pad.tools.read()).toBe('# Current Task\ntask text\n\n# Todo\n- [ ] item\n');
    expect((await fs.readdir(path.dirname(file))).sort()).toEqual(['scratchpad.md']);
  });

  it('bad type or content → E_INVALID_ARGS; oversize content names the limit', async () => {
    expect((await rejection(pad.tools.update({ type: 'notes' as 'task', content: 'x' }))).code).toBe('E_INVALID_ARGS');
    expect((await rejection(pad.tools.update({ type: 'task', content: 5 as unknown as string }))).code).toBe(
      'E_INVALID_ARGS',
    );
    const small = createScratchpadModule({ workspace: ws, max_bytes: 10 });
    const err = await rejection(small.tools.update({ type: 'task', content: 'x'.repeat(11) }));
    expect([err.code, err.message]).toEqual(['E_INVALID_ARGS', 'task content is 11 bytes; the limit is 10']);
  });

  it('refuses a .finger directory that is a symlink out of the workspace (E_FORBIDDEN)', async () => {
    const outside = path.join(tmp, 'outside');
    await fs.mkdir(outside);
    await fs.symlink(outside, path.join(ws, '.finger'));
    expect((await rejection(pad.tools.update({ type: 'task', content: 'x' }))).code).toBe('E_FORBIDDEN');
    expect((await rejection(pad.tools.read())).code).toBe('E_FORBIDDEN');
    expect(await fs.readdir(outside)).toEqual([]);
  });

  it('refuses a scratchpad.md that is a symlink (E_FORBIDDEN)', async () => {
    const target = path.join(tmp, 'secret.txt');
    await fs.writeFile(target, 'secret');
    await fs.mkdir(path.dirname(file));
    await fs.symlink(target, file);
    expect((await rejection(pad.tools.read())).code).toBe('E_FORBIDDEN');
    expect((await rejection(pad.tools.update({ type: 'task', content: 'x' }))).code).toBe('E_FORBIDDEN');
    expect(await fs.readFile(target, 'utf8')).toBe('secret');
  });
});

describe('scratchpad.read', () => {
  it('returns the empty template when there is no file (or no workspace yet)', async () => {
    expect(await pad.tools.read()).toBe(EMPTY_SCRATCHPAD);
    expect(EMPTY_SCRATCHPAD).toBe('# Current Task\n\n# Todo\n');
    const none = createScratchpadModule({ workspace: path.join(tmp, 'does-not-exist') });
    expect(await none.tools.read()).toBe(EMPTY_SCRATCHPAD);
  });

  it('returns the file exactly as stored', async () => {
    await fs.mkdir(path.dirname(file));
    await fs.writeFile(file, '# Current Task\nhand written\n');
    expect(await pad.tools.read()).toBe('# Current Task\nhand written\n');
  });

  it('settings.workspace overrides workspace_roots; no workspace at all fails the start', () => {
    expect(createScratchpadModule({ workspace: '/w', workspace_roots: ['/x'] }).file).toBe('/w/.finger/scratchpad.md');
    expect(() => createScratchpadModule({})).toThrow(/workspace_roots/);
    expect(() => createScratchpadModule({ workspace: 'relative' })).toThrow(/workspace must be an absolute path/);
  });
});

describe('the reader exposed to the daemon (setting expose_reader)', () => {
  const readerOf = (settings: Record<string, unknown>) => {
    let read: ((workspace: string) => Promise<string | undefined>) | undefined;
    createScratchpadModule({ ...settings, expose_reader: (r: typeof read) => (read = r) });
    if (read === undefined) throw new Error('no reader exposed');
    return read;
  };

  it("reads a task workspace's scratchpad through the store: the text, or undefined when nothing was written", async () => {
    const read = readerOf({ workspace_roots: [ws] });
    const task = path.join(tmp, 'task-ws');
    await fs.mkdir(path.join(task, '.finger'), { recursive: true });
    expect(await read(task)).toBeUndefined();
    await fs.writeFile(path.join(task, '.finger', 'scratchpad.md'), '# Current Task\nfix it\n');
    expect(await read(task)).toBe('# Current Task\nfix it\n');
    await fs.writeFile(path.join(task, '.finger', 'scratchpad.md'), EMPTY_SCRATCHPAD);
    expect(await read(task)).toBeUndefined();
  });

  it('refuses a .finger directory that is a symlink out of the workspace (E_FORBIDDEN), as the tool does', async () => {
    const read = readerOf({ workspace_roots: [ws] });
    const outside = path.join(tmp, 'outside');
    await fs.mkdir(outside);
    await fs.writeFile(path.join(outside, 'scratchpad.md'), 'secret');
    await fs.symlink(outside, path.join(ws, '.finger'));
    expect((await rejection(read(ws))).code).toBe('E_FORBIDDEN');
  });
});

describe('replaceSection', () => {
  it('adds a missing section without touching the other', () => {
    expect(replaceSection('# Todo\n- [ ] a\n', 'task', ['t'])).toBe('# Current Task\nt\n\n# Todo\n- [ ] a\n');
    expect(replaceSection('# Current Task\nt\n', 'todo', ['- [ ] a'])).toBe('# Current Task\nt\n\n# Todo\n- [ ] a\n');
    expect(replaceSection('', 'todo', [])).toBe('# Todo\n');
    expect(replaceSection('# Todo\n- [ ] a\n# Current Task\nold\n', 'task', ['new'])).toBe(
      '# Todo\n- [ ] a\n# Current Task\nnew\n',
    );
  });
});

describe('scratchpad module', () => {
  const ctx = (): ToolCallContext => toolContext(5000);

  it('has a valid manifest and runs through the in-process runtime with the daemon settings', async () => {
    expect(() => assertManifest(MANIFEST)).not.toThrow();
    // only executors get the whole module; supervisor and reviewer get scratchpad.read from the grant profile
    expect(MANIFEST.grants).toEqual(['executor']);
    expect(MANIFEST.tools.map((t) => [t.name, t.risk_level, t.capability_level, t.side_effects, t.idempotent])).toEqual(
      [
        ['update', 'low', 'L1', true, true],
        ['read', 'low', 'L0', false, true],
      ],
    );
    const rt = new InProcessRuntime({
      manifest: { ...MANIFEST, runtime: { type: 'inprocess', entry: './src/index.ts' } },
      baseDir: DIR,
      logger: silentLogger,
      settings: { home: tmp, workspace_roots: [ws], backups_dir: path.join(tmp, 'backups') },
    });
    await rt.start();
    try {
      expect(await rt.invoke('update', { type: 'todo', content: '- [ ] ship it' }, ctx())).toBe('OK');
      expect(await rt.invoke('read', {}, ctx())).toBe('# Current Task\n\n# Todo\n- [ ] ship it\n');
      const err = await rejection(rt.invoke('update', { type: 'todo', content: 'ship it' }, ctx()));
      expect(err.code).toBe('E_INVALID_ARGS');
    } finally {
      await rt.close();
    }
  });

  it("a supervised task's calls use its own workspace; other callers and look-alike principals the configured one", async () => {
    const taskWs = path.join(tmp, 'project');
    await fs.mkdir(taskWs);
    const task = Object.freeze({ kind: 'agent' as const, id: 'executor-t1', roles: ['agent:executor'] });
    const own = createScratchpadModule({
      home: tmp,
      workspace_roots: [ws],
      workspace_for: (p: unknown) => (p === task ? taskWs : undefined),
    });
    expect(await own.tools.update({ type: 'task', content: 'fix the parser' }, { source: task })).toBe('OK');
    expect(await fs.readFile(path.join(taskWs, '.finger', 'scratchpad.md'), 'utf8')).toBe(
      '# Current Task\nfix the parser\n\n# Todo\n',
    );
    // the same id in another object (a token named like the task) is not the task
    const lookAlike = { ...task };
    expect(await own.tools.read({}, { source: lookAlike })).toBe(EMPTY_SCRATCHPAD);
    expect(await own.tools.read({}, { source: task })).toBe('# Current Task\nfix the parser\n\n# Todo\n');
    await expect(fs.access(path.join(ws, '.finger', 'scratchpad.md'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
