import fs from 'node:fs/promises';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import type { InProcessRuntime } from '@finger/hub';

import { loadShell, makeCtx, rejectionOf, tempWorkspace } from './helpers.js';

let dir: string;
let ws: string;
const runtimes: InProcessRuntime[] = [];

async function shell(
  runCode: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Promise<InProcessRuntime> {
  const rt = await loadShell({ workspace_roots: [ws], kill_grace_ms: 300, run_code: runCode, ...extra });
  runtimes.push(rt);
  return rt;
}

const run = (rt: InProcessRuntime, args: unknown) => rt.invoke('run_code', args, makeCtx()) as Promise<any>;

beforeEach(async () => {
  ({ dir, ws } = await tempWorkspace());
});

afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
  delete process.env.FAKE_API_TOKEN;
  await fs.rm(dir, { recursive: true, force: true });
});

describe('shell.run_code', () => {
  it('runs a python snippet in a fresh run dir and lists the files it wrote', async () => {
    const rt = await shell();
    const code = [
      'import os, sys',
      'print("hi", sys.stdin.read())',
      'open("out.txt", "w").write("abc")',
      'os.makedirs("d", exist_ok=True)',
      'open("d/x.bin", "wb").write(b"12345")',
    ].join('\n');
    const r = await run(rt, { language: 'python', code, stdin: 'there' });
    expect({ ...r, duration_ms: 0, dir: '' }).toEqual({
      language: 'python',
      dir: '',
      exit_code: 0,
      signal: null,
      timed_out: false,
      cancelled: false,
      stdout: 'hi there\n',
      stderr: '',
      stdout_bytes: 9,
      stderr_bytes: 0,
      truncated: { stdout: false, stderr: false },
      duration_ms: 0,
      files: [
        { path: 'd/x.bin', bytes: 5 },
        { path: 'out.txt', bytes: 3 },
      ],
      files_truncated: false,
    });
    expect(path.dirname(r.dir)).toBe(path.join(ws, '.finger', 'run'));
    expect(await fs.readFile(path.join(r.dir, 'main.py'), 'utf8')).toBe(code);
    expect(await fs.readFile(path.join(r.dir, 'out.txt'), 'utf8')).toBe('abc');
  });

  it('runs a node snippet (an ES module) with its heap limit', async () => {
    const rt = await shell();
    const code = [
      "import fs from 'node:fs';",
      "import v8 from 'node:v8';",
      "fs.writeFileSync('n.json', '{}');",
      // heap_size_limit is the old space (512 MiB here) plus the young generation: 560 MiB on Node 20,
      // 704 on Node 24; without the flag it is several GiB
      'console.log(1 + 1, Math.round(v8.getHeapStatistics().heap_size_limit / 1048576) <= 1024);',
    ].join('\n');
    const r = await run(rt, { language: 'node', code });
    expect([r.exit_code, r.signal, r.stdout, r.stderr, r.files]).toEqual([
      0,
      null,
      '2 true\n',
      '',
      [{ path: 'n.json', bytes: 2 }],
    ]);
    expect(path.basename(r.dir)).toMatch(/^[0-9A-Z]{26}$/);
  });

  it('kills a snippet past its CPU limit and reports the signal', async () => {
    const rt = await shell({ cpu_seconds: 1 });
    const r = await run(rt, {
      language: 'python',
      code: 'print("spinning", flush=True)\nwhile True: pass',
      timeout_ms: 20_000,
    });
    expect(['SIGXCPU', 'SIGKILL']).toContain(r.signal);
    expect([r.exit_code, r.timed_out, r.stdout]).toEqual([null, false, 'spinning\n']);
  });

  it('limits the address space (python MemoryError) and the file size', async () => {
    const rt = await shell({ max_file_bytes: 1000 });
    const mem = await run(rt, { language: 'python', code: 'x = bytearray(1024 * 1024 * 1024)' });
    expect(mem.exit_code).toBe(1);
    expect(mem.stderr).toContain('MemoryError');
    const big = await run(rt, { language: 'python', code: 'with open("big.txt", "w") as f:\n    f.write("x" * 5000)' });
    expect(big.exit_code).toBe(1);
    expect(big.stderr).toContain('File too large');
    expect(big.files).toEqual([{ path: 'big.txt', bytes: 1000 }]);
  });

  it('fails with E_TIMEOUT past the wall-clock timeout, with partial output and files in details', async () => {
    const rt = await shell();
    const err = await rejectionOf(
      run(rt, {
        language: 'python',
        code: 'import time\nopen("a","w").write("1")\nprint("started")\ntime.sleep(30)',
        timeout_ms: 1500,
      }),
    );
    expect(err.code).toBe('E_TIMEOUT');
    expect(err.details).toMatchObject({
      timed_out: true,
      stdout: 'started\n',
      stdout_bytes: 8,
      files: [{ path: 'a', bytes: 1 }],
      timeout_ms: 1500,
    });
  });

  it('scrubs secrets from the snippet environment', async () => {
    vi.stubEnv('FAKE_API_TOKEN', 'leak-me');
    const rt = await shell();
    const r = await run(rt, {
      language: 'python',
      code: 'import os\nprint(os.environ.get("FAKE_API_TOKEN"), "PATH" in os.environ)',
    });
    expect(r.stdout).toBe('None True\n');
  });

  it('keeps only the newest keep_runs run directories', async () => {
    const rt = await shell({ keep_runs: 2 });
    const dirs: string[] = [];
    for (let i = 0; i < 3; i++) dirs.push((await run(rt, { language: 'python', code: `print(${i})` })).dir);
    expect((await fs.readdir(path.join(ws, '.finger', 'run'))).sort()).toEqual(
      dirs
        .slice(1)
        .map((d) => path.basename(d))
        .sort(),
    );
  });

  it('refuses a .finger that leads outside the workspace (E_FORBIDDEN)', async () => {
    await fs.mkdir(path.join(dir, 'elsewhere'));
    await fs.symlink(path.join(dir, 'elsewhere'), path.join(ws, '.finger'));
    const rt = await shell();
    expect((await rejectionOf(run(rt, { language: 'python', code: 'print(1)' }))).code).toBe('E_FORBIDDEN');
    expect(await fs.readdir(path.join(dir, 'elsewhere'))).toEqual(['run']);
  });

  it('fails clearly when prlimit is missing (E_MODULE_ERROR naming the setting)', async () => {
    const rt = await shell({ prlimit: '/nonexistent/prlimit' });
    const err = await rejectionOf(run(rt, { language: 'python', code: 'print(1)' }));
    expect(err.code).toBe('E_MODULE_ERROR');
    expect(err.message).toContain('run_code.prlimit');
  });

  it('rejects bad arguments with E_INVALID_ARGS listing every problem', async () => {
    const rt = await shell();
    const err = await rejectionOf(run(rt, { language: 'ruby', code: 1 }));
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.details.issues).toEqual([
      { path: '$.language', message: 'must be "python" or "node"' },
      { path: '$.code', message: 'must be a string of at most 1000000 characters' },
    ]);
  });
});
