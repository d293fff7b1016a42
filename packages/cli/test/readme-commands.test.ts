import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

// The command list of packages/cli/README.md is the built CLI's: every command and subcommand
// `myfinger --help` (and each command's own --help, recursively) lists has a line in the README's
// Commands block, and the README lists none that the CLI lacks. A command added without docs fails here.

const BIN = fileURLToPath(new URL('../bin/myfinger.js', import.meta.url));
const README = fileURLToPath(new URL('../README.md', import.meta.url));

const run = promisify(execFile);

/** `myfinger <path…> --help` of the built CLI (bounded: a stuck child is killed after 20 s). */
async function help(path: readonly string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [BIN, ...path, '--help'], {
    timeout: 20_000,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1', COLUMNS: '80' },
  });
  return stdout;
}

/** The command names of a help text's `Commands:` section (commander's own `help` left out). */
export function helpCommands(text: string): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l === 'Commands:');
  if (start < 0) return [];
  const names: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '' || !line.startsWith(' ')) break;
    // an entry starts two spaces in; wrapped descriptions are indented further
    const m = /^ {2}([a-z][a-z0-9-]*)(?=\s|$)/.exec(line);
    if (m && m[1] !== 'help') names.push(m[1]!);
  }
  return names;
}

// One node process walks the built program (dist/main.js's buildProgram, the one bin/myfinger.js
// runs) and prints each command's help text, exactly what `myfinger <path…> --help` shows above
// the global epilogue: a process per command would be some 75 node start-ups.
const WALK = `
import { buildProgram } from ${JSON.stringify(new URL('../dist/main.js', import.meta.url).href)};
const io = { stdout: process.stdout, stderr: process.stderr, env: {}, pollIntervalMs: 250 };
const program = await buildProgram({ io, exitCode: 0, cleanups: [] });
const out = {};
const walk = (cmd, path) => {
  out[path.join(' ')] = cmd.helpInformation();
  for (const sub of cmd.commands) walk(sub, [...path, sub.name()]);
};
walk(program, []);
process.stdout.write(JSON.stringify(out));
`;

/**
 * Every command path of the built CLI ("daemon", "daemon start", "approvals standing list", …),
 * following the `Commands:` section of each help text from the top.
 */
async function cliPaths(): Promise<string[]> {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', WALK], {
    timeout: 20_000,
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', COLUMNS: '80' },
    maxBuffer: 4 * 1024 * 1024,
  });
  const helps = JSON.parse(stdout) as Record<string, string>;
  const paths: string[] = [];
  const visit = (path: string[]): void => {
    const text = helps[path.join(' ')];
    if (text === undefined) throw new Error(`no help for "${path.join(' ')}"`);
    for (const sub of helpCommands(text)) {
      paths.push([...path, sub].join(' '));
      visit([...path, sub]);
    }
  };
  visit([]);
  return paths.sort();
}

/**
 * The command paths the README's Commands block names: each `myfinger …` line's leading words
 * that look like command names, and every prefix of them (`myfinger approvals standing list`
 * names "approvals", "approvals standing" and "approvals standing list").
 */
export function readmePaths(markdown: string): string[] {
  const section = /^## Commands\n([\s\S]*?)^## /m.exec(markdown)?.[1];
  if (section === undefined) throw new Error('README has no "## Commands" section');
  const block = /^```\n([\s\S]*?)^```$/m.exec(section)?.[1];
  if (block === undefined) throw new Error('the Commands section has no code block');
  const paths = new Set<string>();
  for (const line of block.split('\n')) {
    const words = line.trim().split(/\s+/);
    if (words[0] !== 'myfinger') continue;
    const path: string[] = [];
    for (const w of words.slice(1)) {
      if (!/^[a-z][a-z0-9-]*$/.test(w)) break;
      path.push(w);
      paths.add(path.join(' '));
    }
  }
  return [...paths].sort();
}

describe('packages/cli/README.md', () => {
  it('reads command names from help texts and README lines', () => {
    expect(
      helpCommands(
        'Usage: x\n\nCommands:\n  list           list them\n  show <id>      show one\n' +
          '                 wrapped words\n  help [command]  display help\n\nExit codes: …\n',
      ),
    ).toEqual(['list', 'show']);
    expect(helpCommands('Usage: x\n\nOptions:\n  -h, --help  display help\n')).toEqual([]);
    expect(
      readmePaths(
        '## Commands\n\n```\nmyfinger approvals standing revoke <id>\nmyfinger undo [id] --list\n' +
          'myfinger send "text"\n```\n\n## Next\n',
      ),
    ).toEqual(['approvals', 'approvals standing', 'approvals standing revoke', 'send', 'undo']);
  });

  // the built CLI (npm test builds first; unbuilt, the shim says so and this fails)
  it('lists exactly the commands and subcommands of the built myfinger --help', async () => {
    const [top, cli] = await Promise.all([help([]), cliPaths()]);
    const readme = readmePaths(readFileSync(README, 'utf8'));
    // the walk saw the same top-level commands as `myfinger --help` itself
    expect(cli.filter((p) => !p.includes(' '))).toEqual(helpCommands(top).sort());
    // the walk itself reached the groups: a broken parser cannot make both sides empty and equal
    expect(cli).toEqual(
      expect.arrayContaining(['daemon start', 'approvals standing list', 'hook install', 'mcp config']),
    );
    expect({
      missing_from_readme: cli.filter((p) => !readme.includes(p)),
      not_in_cli: readme.filter((p) => !cli.includes(p)),
    }).toEqual({
      missing_from_readme: [],
      not_in_cli: [],
    });
  }, 60_000);
});
