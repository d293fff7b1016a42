import { describe, expect, it } from 'vitest';

import { runGuardrail } from '../../src/guardrail/json-guardrail.js';
import { clean, cleanText, registry } from './registry.js';

const ok = (repairs: unknown[]) => ({ outcome: 'ok', decision: clean, repairs });

describe('guardrail step 1: extract', () => {
  it('drops a leading BOM', () => {
    expect(runGuardrail(`\uFEFF${cleanText}`, registry)).toEqual(ok([{ kind: 'bom' }]));
  });

  it('drops a closed <think> block, even one holding JSON', () => {
    const text = `<think>maybe {"decision":"reject","confidence":1}? no.</think>\n${cleanText}`;
    expect(runGuardrail(text, registry)).toEqual(
      ok([{ kind: 'think_block', before: '<think>maybe {"decision":"reject","confidence":1}? no.</think>' }]),
    );
  });

  it('lets an unclosed <think> swallow the rest of the answer', () => {
    expect(runGuardrail(`<think>I will answer ${cleanText}`, registry)).toEqual({
      outcome: 'ask_human',
      reason_code: 'no_json',
      retryable: true,
      errors: ['the answer holds no JSON object'],
      repairs: [
        {
          kind: 'think_block',
          detail: 'unclosed: rest of the answer dropped',
          before: `<think>I will answer ${cleanText}`,
        },
      ],
    });
  });

  it('drops everything before a closing </think> whose opening tag the chat template sent', () => {
    const text = `the user wants {"decision":"reject"}</think>${cleanText}`;
    expect(runGuardrail(text, registry)).toEqual(
      ok([
        { kind: 'think_block', detail: 'unopened closing tag', before: 'the user wants {"decision":"reject"}</think>' },
      ]),
    );
  });

  it('reads a ```json fence with prose before and after', () => {
    const text = `Sure! Here is my routing decision:\n\n\`\`\`json\n${cleanText}\n\`\`\`\n\nLet me know if you need anything else.`;
    expect(runGuardrail(text, registry)).toEqual(ok([{ kind: 'fence', detail: '1 fenced block(s)' }]));
  });

  it('reads a ~~~ fence with any tag, and a fence never closed', () => {
    expect(runGuardrail(`~~~jsonc\n${cleanText}\n~~~`, registry)).toEqual(
      ok([{ kind: 'fence', detail: '1 fenced block(s)' }]),
    );
    expect(runGuardrail(`\`\`\`\n${cleanText}\n`, registry)).toEqual(
      ok([{ kind: 'fence', detail: '1 fenced block(s)' }]),
    );
  });

  it('reads a fence opened mid-line and closed before trailing text', () => {
    const text = `Sure: \`\`\`json\n${cleanText}\`\`\` hope this helps`;
    expect(runGuardrail(text, registry)).toEqual(ok([{ kind: 'fence', detail: '1 fenced block(s)' }]));
  });

  it('does not take a fence mentioned inside a JSON string for a block', () => {
    const d = { ...clean, reason: 'wrap code in ``` fences' };
    const text = JSON.stringify(d, null, 2);
    expect(runGuardrail(text, registry)).toEqual({ outcome: 'ok', decision: d, repairs: [] });
  });

  it('prefers the fenced block over JSON-looking prose outside it', () => {
    const text = `The schema is {"decision": "…"} as usual.\n\`\`\`json\n${cleanText}\n\`\`\``;
    expect(runGuardrail(text, registry)).toEqual(ok([{ kind: 'fence', detail: '1 fenced block(s)' }]));
  });

  it('falls back to the prose when the fences hold no decision (a code sample)', () => {
    const text = `\`\`\`python\nd = {'a': 1}\n\`\`\`\n${cleanText}`;
    expect(runGuardrail(text, registry)).toEqual(ok([]));
  });

  it.each(['json', 'output', 'answer', 'decision', 'response', 'result', 'tool_call'])('reads a <%s> tag', (tag) => {
    const text = `I routed it.\n<${tag}>\n${cleanText}\n</${tag}>\nDone.`;
    expect(runGuardrail(text, registry)).toEqual(ok([{ kind: 'xml_tag', detail: '1 tagged block(s)' }]));
  });

  it('reads a tag with attributes, CDATA inside and no closing tag', () => {
    const text = `<tool_call name="route"><![CDATA[${cleanText}]]>`;
    expect(runGuardrail(text, registry)).toEqual(ok([{ kind: 'xml_tag', detail: '1 tagged block(s)' }]));
  });

  it('finds the object in prose, ignoring braces inside its strings', () => {
    const d = { ...clean, reason: 'the user typed "}{" and said hi' };
    const text = `Okay. My answer: ${JSON.stringify(d)} — hope that helps {:`;
    expect(runGuardrail(text, registry)).toEqual({ outcome: 'ok', decision: d, repairs: [] });
  });

  it('finds no JSON in plain prose', () => {
    expect(runGuardrail('I think this should go to the echo module.', registry)).toEqual({
      outcome: 'ask_human',
      reason_code: 'no_json',
      retryable: true,
      errors: ['the answer holds no JSON object'],
      repairs: [],
    });
  });
});
