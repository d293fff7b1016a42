// A held call's preview, coloured by a hand-rolled tokeniser (no highlighter library): unified
// diffs by line kind, shell commands by operators, redirections, options and quoted strings.

import type { Preview } from '../types.ts';

function diffClass(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---')) return 'd-file';
  if (line.startsWith('@@')) return 'd-hunk';
  if (line.startsWith('+')) return 'd-add';
  if (line.startsWith('-')) return 'd-del';
  return 'd-ctx';
}

const SHELL_TOKEN =
  /(\s+|&&|\|\||[|;&]|[0-9]?>>?|<|"(?:[^"\\]|\\.)*"|'[^']*'|\$\([^)]*\)|\$\{?\w+\}?|[^\s|;&<>"'$]+|.)/g;

function shellClass(tok: string, first: boolean): string | undefined {
  if (/^\s+$/.test(tok)) return undefined;
  if (/^(&&|\|\||[|;&])$/.test(tok)) return 'c-op';
  if (/^[0-9]?>>?$|^<$/.test(tok)) return 'c-redir';
  if (/^["']/.test(tok)) return 'c-str';
  if (tok.startsWith('$')) return 'c-var';
  if (tok.startsWith('-')) return 'c-opt';
  return first ? 'c-prog' : undefined;
}

function ShellLine({ line }: { line: string }) {
  const parts = line.match(SHELL_TOKEN) ?? [line];
  let first = true;
  return (
    <>
      {parts.map((tok, i) => {
        const cls = shellClass(tok, first);
        if (cls === 'c-op') first = true;
        else if (cls !== undefined || !/^\s+$/.test(tok)) first = false;
        return cls ? (
          <span key={i} class={cls}>
            {tok}
          </span>
        ) : (
          tok
        );
      })}
    </>
  );
}

/** The preview of a held call: a diff, a command or the pretty arguments. */
export function CodeView({ preview, label }: { preview: Preview; label: string }) {
  const lines = preview.text.split('\n');
  return (
    <pre class={`code code-${preview.kind}`} aria-label={label} tabIndex={0}>
      {lines.map((line, i) =>
        preview.kind === 'diff' ? (
          <span key={i} class={`line ${diffClass(line)}`}>
            {line}
            {'\n'}
          </span>
        ) : preview.kind === 'command' && line.startsWith('$ ') ? (
          <span key={i} class="line">
            <span class="c-prompt">$ </span>
            <ShellLine line={line.slice(2)} />
            {'\n'}
          </span>
        ) : (
          <span key={i} class="line">
            {line}
            {'\n'}
          </span>
        ),
      )}
    </pre>
  );
}
