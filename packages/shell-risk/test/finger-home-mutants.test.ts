// Mutation survivors of the "finger's own home and API" rules (forbidden.ts, finger-home-text.ts):
// exact forbidden reasons from RiskAssessor.assess for the edges the other tests leave open —
// quoting of long words, de-duplication, program paths and subcommand words, here-document
// delimiters, the loop label, a path at the very start or end of the command's text.

import { beforeAll, describe, expect, it } from 'vitest';

import { FORBIDDEN_REASON } from '../src/knowledge/finger/forbidden.js';
import { RiskAssessor } from '../src/risk-assessor.js';

const HOME = '/srv/fh';
const WS = '/srv/ws';
let a: RiskAssessor;
beforeAll(async () => {
  a = await RiskAssessor.create({
    finger_home: HOME,
    guarded_paths: ['/etc/finger/admin.token'],
    workspace_roots: ['/srv/fh/ws'],
    daemon: { ports: [7770], pid: 4242 },
  });
});

const forbidden = (command: string, cwd = WS): readonly string[] => a.assess(command, { cwd }).forbidden ?? [];
const text = (shown: string, place = HOME): string =>
  `the command's text names finger's own files: '${shown}' (${place})`;
const word = (w: string, to = w): string => `segment 1: '${w}' reaches finger's own files (${HOME}: ${to})`;

describe('forbidden.ts survivors', () => {
  it('the reason every finding is shown with is spelled out', () => {
    expect(FORBIDDEN_REASON).toBe("finger's own API/home: an agent must not govern its own firewall");
  });

  it('a word longer than 80 characters is quoted as its first 77 and an ellipsis; 80 is shown whole', () => {
    const long = `${HOME}/${'a'.repeat(90)}`;
    expect(forbidden(`cat ${long}`)).toEqual([
      `segment 1: '${long.slice(0, 77)}…' reaches finger's own files (${HOME}: ${long})`,
    ]);
    const eighty = `${HOME}/${'c'.repeat(80 - HOME.length - 1)}`;
    expect(eighty).toHaveLength(80);
    expect(forbidden(`cat ${eighty}`)).toEqual([word(eighty)]);
    const eightyOne = `${eighty}d`;
    expect(forbidden(`cat ${eightyOne}`)).toEqual([
      `segment 1: '${eightyOne.slice(0, 77)}…' reaches finger's own files (${HOME}: ${eightyOne})`,
    ]);
  });

  it('the same finding is reported once', () => {
    expect(forbidden(`cat ${HOME}/token ${HOME}/token`)).toEqual([word(`${HOME}/token`)]);
  });

  it('a program run by path is a path word; a subcommand word is not (the text rule names it instead)', () => {
    expect(forbidden(`${HOME}/bin/tool`)).toEqual([word(`${HOME}/bin/tool`)]);
    expect(forbidden(`git ${HOME}/x`)).toEqual([text(`${HOME}/x`)]);
  });

  it('a here-document delimiter or here-string is no path, even where it would name a file in the home', () => {
    for (const c of ['cat <<token\nhi\ntoken', 'cat <<-token\nhi\ntoken', 'cat <<<token'])
      expect(forbidden(c, HOME)).toEqual([]);
    // a real redirection from the same place is one
    expect(forbidden('cat < token', HOME)).toEqual([word('token', `${HOME}/token`)]);
  });

  it('a loop variable’s words are named by the loop', () => {
    expect(forbidden(`for f in ${HOME}/token; do cat "$f"; done`)).toEqual([
      `the loop over '$f': '${HOME}/token' reaches finger's own files (${HOME}: ${HOME}/token)`,
    ]);
  });
});

describe('finger-home-text.ts survivors', () => {
  it('a home named at the very end of the text is found', () => {
    expect(forbidden(`true # ${HOME}`)).toEqual([text(HOME)]);
    expect(forbidden(`python3 -c "x" #${HOME}/token`)).toEqual([text(`${HOME}/token`)]);
  });

  it('a home named at the very start of the text is found', () => {
    expect(forbidden('/.finger/token')).toEqual([text('/.finger/token', '~/.finger')]);
  });

  it('a workspace root inside the home is not named', () => {
    expect(forbidden(`python3 -c "open('${HOME}/ws/x')"`)).toEqual([]);
  });

  it('the same path named twice is one finding', () => {
    expect(forbidden(`python3 -c "open('${HOME}/token'); open('${HOME}/token')"`)).toEqual([text(`${HOME}/token`)]);
  });

  it('a path longer than 80 characters is shown as its first 77 and an ellipsis; 80 is shown whole', () => {
    const long = `${HOME}/${'b'.repeat(90)}`;
    expect(forbidden(`python3 -c "open('${long}')"`)).toEqual([text(`${long.slice(0, 77)}…`)]);
    const eighty = `${HOME}/${'c'.repeat(80 - HOME.length - 1)}`;
    expect(forbidden(`python3 -c "open('${eighty}')"`)).toEqual([text(eighty)]);
    expect(forbidden(`python3 -c "open('${eighty}d')"`)).toEqual([text(`${eighty.slice(0, 77)}…`)]);
  });
});
