// The agents' hook payloads (test/fixtures/hooks/, as each agent writes them) mapped to finger's
// tool vocabulary by the pure hook-map.ts: one whole mapped event per fixture.

import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { agentInputOf, applyPatch, HookInputError, parseHookEvent } from '../src/commands/hook-map.js';

const FIXTURES = path.resolve(import.meta.dirname, '../../../test/fixtures/hooks');
const fixture = (name: string): Record<string, any> =>
  JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8')) as Record<string, any>;

const CLAUDE_SESSION = '0b6a3c2e-6f1d-4c7e-9a55-3d1f7f2b9e10';
const CODEX_SESSION = '019a7c1e-2b8f-7d30-a1c4-5e9f0b6d2a11';
const CURSOR_SESSION = '8f0d2c4a-1b3e-4f5a-9c7d-2e6b8a0f1c3d';
const PROJ = '/home/user/proj';

describe('parseHookEvent: Claude Code', () => {
  it('Bash → shell.exec with the cwd', () => {
    const p = fixture('claude-pre-bash.json');
    expect(parseHookEvent('claude', p)).toEqual({
      phase: 'pre',
      agent_tool: 'Bash',
      input: p.tool_input,
      calls: [
        {
          agent: 'claude',
          tool: 'shell.exec',
          args: { command: 'ls', cwd: PROJ },
          session_id: CLAUDE_SESSION,
          cwd: PROJ,
          tool_use_id: 'toolu_01K9gqzSx1TnRYw3aV6pHcdE',
        },
      ],
    });
  });

  it('Write → fs.write of the path and content', () => {
    expect(parseHookEvent('claude', fixture('claude-pre-write.json')).calls).toEqual([
      {
        agent: 'claude',
        tool: 'fs.write',
        args: { path: `${PROJ}/notes.txt`, content: 'hello\n' },
        session_id: CLAUDE_SESSION,
        cwd: PROJ,
        tool_use_id: 'toolu_01Wq1b9fV4u2xGJc8mZrT5sL',
      },
    ]);
  });

  it('Edit → fs.patch with its search/replace pair; MultiEdit → every pair', () => {
    const p = fixture('claude-pre-edit.json');
    expect(parseHookEvent('claude', p).calls.map((c) => [c.tool, c.args])).toEqual([
      [
        'fs.patch',
        { path: `${PROJ}/src/app.ts`, edits: [{ search: 'const port = 3000;', replace: 'const port = 8080;' }] },
      ],
    ]);
    const multi = {
      ...p,
      tool_name: 'MultiEdit',
      tool_input: {
        file_path: 'src/app.ts',
        edits: [
          { old_string: 'a', new_string: 'b' },
          { old_string: 'c', new_string: '' },
        ],
      },
    };
    expect(parseHookEvent('claude', multi).calls[0]!.args).toEqual({
      path: `${PROJ}/src/app.ts`,
      edits: [
        { search: 'a', replace: 'b' },
        { search: 'c', replace: '' },
      ],
    });
  });

  it('mcp__srv__tool → mcp.srv.tool with the input as the arguments', () => {
    const p = fixture('claude-pre-mcp.json');
    const c = parseHookEvent('claude', p).calls;
    expect(c.map((x) => [x.tool, x.args])).toEqual([['mcp.memory.create_entities', p.tool_input]]);
    // a server name with dots or odd characters stays one segment
    expect(parseHookEvent('claude', { ...p, tool_name: 'mcp__my.srv__do it' }).calls[0]!.tool).toBe('mcp.my_srv.do_it');
  });

  it('a PostToolUse event reports the outcome; a non-zero exit code is a failure', () => {
    const post = parseHookEvent('claude', fixture('claude-post-bash.json'));
    expect(post).toMatchObject({ phase: 'post', ok: true, agent_tool: 'Bash' });
    expect(post.detail).toBeUndefined();
    const failed = { ...fixture('claude-post-bash.json'), tool_response: { exit_code: 3 } };
    expect(parseHookEvent('claude', failed)).toMatchObject({ phase: 'post', ok: false, detail: 'exit 3' });
  });

  it('a tool finger has no word for is judged as agent.<name>', () => {
    const p = { ...fixture('claude-pre-bash.json'), tool_name: 'Task', tool_input: { prompt: 'x' } };
    expect(parseHookEvent('claude', p).calls.map((c) => [c.tool, c.args])).toEqual([['agent.Task', { prompt: 'x' }]]);
  });
});

describe('parseHookEvent: Codex', () => {
  it('apply_patch → one call per file (Update → fs.patch with the hunk, Add → fs.write of the added lines)', () => {
    const p = fixture('codex-pre-apply-patch.json');
    expect(parseHookEvent('codex', p)).toEqual({
      phase: 'pre',
      agent_tool: 'apply_patch',
      input: p.tool_input,
      calls: [
        {
          agent: 'codex',
          tool: 'fs.patch',
          args: { path: `${PROJ}/src/app.ts`, diff: '@@\n-const port = 3000;\n+const port = 8080;' },
          session_id: CODEX_SESSION,
          cwd: PROJ,
          tool_use_id: 'call_Pq7mN2bV5cX8zL1kJ4hG6fDs',
        },
        {
          agent: 'codex',
          tool: 'fs.write',
          args: { path: `${PROJ}/docs/port.md`, content: 'The server listens on 8080.\n' },
          session_id: CODEX_SESSION,
          cwd: PROJ,
          tool_use_id: 'call_Pq7mN2bV5cX8zL1kJ4hG6fDs',
        },
      ],
    });
  });

  it('a patch sent through Bash is the same patch', () => {
    const patch = fixture('codex-pre-apply-patch.json').tool_input.command as string;
    const p = { ...fixture('codex-pre-bash.json'), tool_input: { command: patch } };
    expect(parseHookEvent('codex', p).calls.map((c) => c.tool)).toEqual(['fs.patch', 'fs.write']);
  });

  it('applyPatch: Delete File → fs.delete, Move to → a write of the new path too; no file → HookInputError', () => {
    const text =
      '*** Begin Patch\n*** Delete File: old.txt\n*** Update File: a.ts\n*** Move to: b.ts\n@@\n-x\n+y\n*** End Patch';
    expect(applyPatch(text, '/w')).toEqual([
      { tool: 'fs.delete', args: { path: '/w/old.txt' } },
      { tool: 'fs.write', args: { path: '/w/b.ts', content: '' } },
      { tool: 'fs.patch', args: { path: '/w/a.ts', diff: '@@\n-x\n+y' } },
    ]);
    expect(() => applyPatch('*** Begin Patch\n*** End Patch', '/w')).toThrow(HookInputError);
  });

  it('Bash → shell.exec', () => {
    expect(parseHookEvent('codex', fixture('codex-pre-bash.json')).calls[0]).toEqual({
      agent: 'codex',
      tool: 'shell.exec',
      args: { command: 'ls', cwd: PROJ },
      session_id: CODEX_SESSION,
      cwd: PROJ,
      tool_use_id: 'call_Xb2k9QwE7rT1yU4iO0pA3sDf',
    });
  });
});

describe('parseHookEvent: Cursor', () => {
  it('Shell → shell.exec in its cwd; the conversation is the session', () => {
    expect(parseHookEvent('cursor', fixture('cursor-pre-shell.json')).calls).toEqual([
      {
        agent: 'cursor',
        tool: 'shell.exec',
        args: { command: 'ls', cwd: PROJ },
        session_id: CURSOR_SESSION,
        cwd: PROJ,
        tool_use_id: 'tool_7a1c9e3b5d',
      },
    ]);
  });

  it('Read → fs.read (cwd from the first workspace root)', () => {
    expect(parseHookEvent('cursor', fixture('cursor-pre-read.json')).calls).toEqual([
      {
        agent: 'cursor',
        tool: 'fs.read',
        args: { path: `${PROJ}/README.md` },
        session_id: CURSOR_SESSION,
        cwd: PROJ,
        tool_use_id: 'tool_2b4d6f8a0c',
      },
    ]);
  });

  it('Write of a relative path → fs.write under the workspace root', () => {
    expect(parseHookEvent('cursor', fixture('cursor-pre-write.json')).calls.map((c) => [c.tool, c.args])).toEqual([
      ['fs.write', { path: `${PROJ}/notes/todo.md`, content: '- ship it\n' }],
    ]);
  });

  it('MCP:<tool> → mcp.cursor.<tool> (Cursor does not name the server)', () => {
    const p = fixture('cursor-pre-mcp.json');
    expect(parseHookEvent('cursor', p).calls.map((c) => [c.tool, c.args])).toEqual([
      ['mcp.cursor.create_entities', p.tool_input],
    ]);
  });
});

describe('parseHookEvent: Copilot CLI', () => {
  it('its own shape: toolArgs is JSON text; no session id', () => {
    const p = fixture('copilot-pre-bash.json');
    expect(parseHookEvent('copilot', p)).toEqual({
      phase: 'pre',
      agent_tool: 'bash',
      input: { command: 'ls', description: 'List files in the project' },
      calls: [{ agent: 'copilot', tool: 'shell.exec', args: { command: 'ls', cwd: PROJ }, session_id: '', cwd: PROJ }],
    });
  });

  it('the Claude-shaped input maps the same', () => {
    expect(parseHookEvent('copilot', fixture('copilot-pre-bash-claude-shaped.json')).calls).toEqual([
      {
        agent: 'copilot',
        tool: 'shell.exec',
        args: { command: 'ls', cwd: PROJ },
        session_id: '5d2e8f1a-0c3b-4a6d-9e7f-1b4c8d2a6e0f',
        cwd: PROJ,
      },
    ]);
  });

  it('edit (path, old_str, new_str) → fs.patch', () => {
    expect(parseHookEvent('copilot', fixture('copilot-pre-edit.json')).calls.map((c) => [c.tool, c.args])).toEqual([
      [
        'fs.patch',
        { path: `${PROJ}/src/app.ts`, edits: [{ search: 'const port = 3000;', replace: 'const port = 8080;' }] },
      ],
    ]);
  });

  it('a post event with toolResult failure is a failed run (no event name needed)', () => {
    expect(parseHookEvent('copilot', fixture('copilot-post-bash.json'))).toMatchObject({
      phase: 'post',
      ok: false,
      calls: [{ tool: 'shell.exec', args: { command: 'false', cwd: PROJ } }],
    });
  });
});

describe('parseHookEvent: payloads it refuses (the hook then denies)', () => {
  it.each([
    ['not an object', []],
    ['no tool name', { hook_event_name: 'PreToolUse' }],
    ['toolArgs not JSON', { toolName: 'bash', toolArgs: '{nope' }],
    ['tool input not an object', { tool_name: 'Bash', tool_input: 3 }],
    ['Bash without a command', { tool_name: 'Bash', tool_input: {} }],
    ['Write without a path', { tool_name: 'Write', tool_input: { content: 'x' } }],
    ['Edit without old_string', { tool_name: 'Edit', tool_input: { file_path: '/a', new_string: 'x' } }],
  ])('%s → HookInputError', (_what, payload) => {
    expect(() => parseHookEvent('claude', payload)).toThrow(HookInputError);
  });
});

describe('agentInputOf: a person’s edit said in the agent’s own terms', () => {
  it('shell.exec → the command; fs.write of a Write → path and content; anything else → undefined', () => {
    const bash = parseHookEvent('claude', fixture('claude-pre-bash.json'));
    expect(agentInputOf(bash, 'shell.exec', { command: 'ls -a' })).toEqual({ ...bash.input, command: 'ls -a' });
    const write = parseHookEvent('claude', fixture('claude-pre-write.json'));
    expect(agentInputOf(write, 'fs.write', { path: '/home/user/proj/other.txt', content: 'bye' })).toEqual({
      file_path: '/home/user/proj/other.txt',
      content: 'bye',
    });
    const edit = parseHookEvent('claude', fixture('claude-pre-edit.json'));
    expect(agentInputOf(edit, 'fs.patch', { path: '/x', edits: [] })).toBeUndefined();
  });
});
