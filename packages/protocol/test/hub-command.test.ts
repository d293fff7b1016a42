import { describe, expect, it } from 'vitest';

import { parseHubCommand } from '@finger/protocol';

function codeOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return { code: (e as { code: string }).code, details: (e as { details: unknown }).details };
  }
  return undefined;
}

describe('parseHubCommand', () => {
  it('parses target, blocking and payload', () => {
    expect(parseHubCommand('/hub target=echo blocking=false {"text":"hi"}')).toEqual({
      target: 'echo',
      blocking: false,
      payload: { text: 'hi' },
    });
  });
  it('defaults to blocking with an empty payload', () => {
    expect(parseHubCommand('  /hub target=echo.say timeout=500')).toEqual({
      target: 'echo.say',
      blocking: true,
      timeout_ms: 500,
      payload: {},
    });
  });
  it('names the position of a broken JSON payload', () => {
    expect(codeOf(() => parseHubCommand('/hub target=echo {"a":'))).toEqual({
      code: 'E_BAD_HUB_SYNTAX',
      details: { position: 22, expected: 'a valid JSON payload', found: 'end of input' },
    });
  });
  it('names the position of a bad option value', () => {
    expect(codeOf(() => parseHubCommand('/hub target=echo blocking=maybe'))).toEqual({
      code: 'E_BAD_HUB_SYNTAX',
      details: { position: 26, expected: 'true or false', found: '"maybe"' },
    });
  });
  it('requires a target', () => {
    expect(codeOf(() => parseHubCommand('/hub {}'))).toMatchObject({
      code: 'E_BAD_HUB_SYNTAX',
      details: { position: 5 },
    });
  });
  it('refuses unknown and repeated options', () => {
    expect(codeOf(() => parseHubCommand('/hub target=a color=red'))).toMatchObject({
      code: 'E_BAD_HUB_SYNTAX',
      details: { position: 14 },
    });
    expect(codeOf(() => parseHubCommand('/hub target=a target=b'))).toMatchObject({
      code: 'E_BAD_HUB_SYNTAX',
      details: { position: 14 },
    });
  });

  it('separates words by exactly what /\\s/ matches, every UTF-16 code unit tried', () => {
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c);
      const text = `/hub${ch}target=echo${ch}{}`;
      if (/\s/.test(ch)) expect(parseHubCommand(text)).toEqual({ target: 'echo', blocking: true, payload: {} });
      else expect(() => parseHubCommand(text)).toThrow(expect.objectContaining({ code: 'E_BAD_HUB_SYNTAX' }));
    }
  });
});
