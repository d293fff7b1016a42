// The conformance suite's `test_*` tools as finger modules — test-only, wired by run.mjs alone
// (FINGER_MODULE_PATHS of the daemon it starts), never by a normal daemon. Each tool is its own
// in-process module whose id is the tool's name, so the suite's bare name (`test_simple_text`)
// reaches it through the hub and the firewall like any call of an agent (the module's only tool
// is reachable by the bare module id; tools/list shows it as `<id>.<id>`). What each returns is
// what the suite's scenario sources (@modelcontextprotocol/conformance 0.1.16) check.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** A 44-byte WAV header of an empty 8 kHz mono 8-bit stream. */
function wav() {
  const b = Buffer.alloc(44);
  b.write('RIFF', 0, 'ascii');
  b.writeUInt32LE(36, 4);
  b.write('WAVEfmt ', 8, 'ascii');
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22); // mono
  b.writeUInt32LE(8000, 24);
  b.writeUInt32LE(8000, 28);
  b.writeUInt16LE(1, 32);
  b.writeUInt16LE(8, 34);
  b.write('data', 36, 'ascii');
  b.writeUInt32LE(0, 40);
  return b.toString('base64');
}

/** name → what the tool does (its result is a CallToolResult, which the gateway passes through). */
export const FIXTURE_TOOLS = {
  test_simple_text: () => ({ content: [{ type: 'text', text: 'This is a simple text response for testing.' }] }),
  test_image_content: () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }),
  test_audio_content: () => ({ content: [{ type: 'audio', data: wav(), mimeType: 'audio/wav' }] }),
  test_embedded_resource: () => ({
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  }),
  test_multiple_content_types: () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: '{"test":"data","value":123}',
        },
      },
    ],
  }),
  // module progress reaches the MCP client as notifications/progress (the gateway relays it)
  test_tool_with_progress: (_args, ctx) => {
    ctx.progress('started', 0);
    ctx.progress('half way', 0.5);
    ctx.progress('done', 1);
    return { content: [{ type: 'text', text: 'Progress test completed' }] };
  },
  // a tool failure becomes an isError result carrying the code and the message
  test_error_handling: () => {
    throw new Error('This tool intentionally returns an error for testing');
  },
  // finger does not relay a module's log lines as notifications/message: the scenario stays listed
  test_tool_with_logging: () => ({ content: [{ type: 'text', text: 'Logging test completed' }] }),
};

/** The in-process entry: the module's one tool, picked by its manifest's id. */
export default function createModule({ manifest }) {
  const fn = FIXTURE_TOOLS[manifest.id];
  if (fn === undefined) throw new Error(`no conformance fixture tool ${manifest.id}`);
  return { tools: { [manifest.id]: fn } };
}

/** Writes one module folder per fixture tool under `dir` (a FINGER_MODULE_PATHS directory). */
export function writeFixtureModules(dir) {
  const entry = fileURLToPath(import.meta.url);
  for (const name of Object.keys(FIXTURE_TOOLS)) {
    const folder = join(dir, name);
    mkdirSync(folder, { recursive: true });
    const manifest = {
      id: name,
      name: `conformance fixture ${name}`,
      version: '0.1.0',
      description: 'Test-only: a tool the MCP conformance suite calls (conformance/fixture.mjs).',
      kind: 'tool',
      runtime: { type: 'inprocess', entry },
      tools: [
        {
          name,
          description: `The conformance suite's ${name}.`,
          input_schema: { type: 'object' },
          risk_level: 'low',
          capability_level: 'L0',
          side_effects: false,
          idempotent: true,
          timeout_ms: 5000,
        },
      ],
      grants: ['executor'],
    };
    writeFileSync(join(folder, 'module.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  }
}
