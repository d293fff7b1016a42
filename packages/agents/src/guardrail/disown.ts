/**
 * The prose around the decision read: a model that refuses the request, calls its JSON an example
 * or a wrong answer, or takes it back after writing it ("Actually, let me reconsider") did not give
 * it as its final decision. Such an answer is never acted on (docs/contracts.md §14, step 3).
 */
import { visibleAnswer } from './extract.js';
import { jsonRanges } from './json-spans.js';
import { clip } from './snippet.js';

/** Prose after the decision that withdraws it. */
const RETRACTS = new RegExp(
  [
    String.raw`(?:^|[\n.!?:;(])\s{0,8}(?:wait|hmm+|hold on|oops)\b`,
    String.raw`\bactually,?\s+(?:no\b|not\b|wait\b|let me\b|i (?:should|need|meant|think|will)\b)`,
    String.raw`\bon (?:second|further) thought`,
    String.raw`\bscratch that`,
    String.raw`\bcorrect(?:ion|ed (?:version|decision|answer|json))\s*:`,
    String.raw`\blet me (?:reconsider|rethink|re-?evaluate|correct|revise|redo|fix|try again|start over)`,
    String.raw`\b(?:that|this|the above|it)(?:'s| is| was| would be) (?:wrong|incorrect|not (?:right|correct)|a mistake|an error)`,
    String.raw`\b(?:ignore|disregard) (?:that|this|the above|the previous|my previous|it)\b`,
    String.raw`\bnever ?mind\b`,
    String.raw`\b(?:i made a|my) mistake`,
    String.raw`\b(?:do not|don't) (?:use|run|execute|dispatch|send|act on) (?:that|this|it|the above)\b`,
    String.raw`\bnot (?:my|the) final\b`,
    String.raw`\bbut (?:i )?(?:rejected|discarded|dropped) (?:it|this|that)\b`,
    String.raw`\b(?:only|just) an? (?:example|illustration|sample)\b`,
  ].join('|'),
  'i',
);

/** The words just before the decision that present it as an example or a wrong answer. */
const FRAMES = new RegExp(
  [
    String.raw`\bfor (?:example|instance|reference|illustration)\b`,
    String.raw`\be\.g\.`,
    String.raw`\ban? (?:example|sample|illustration)\b`,
    String.raw`\bexample(?: \w+)?\s*:`,
    String.raw`\b(?:would|might|could) (?:look|be) like\b`,
    String.raw`\blooks? like this\b`,
    String.raw`\b(?:the|this) (?:format|schema|template) (?:is|looks)\b`,
    String.raw`\b(?:would|will|is|was) (?:be )?(?:wrong|incorrect|a mistake)\b`,
    String.raw`\b(?:wrong|incorrect|bad|invalid|rejected|draft)(?: \w+)?\s*:`,
    String.raw`\b(?:do not|don't) (?:do|use|send|output|write)\b`,
    String.raw`\bi considered\b`,
  ].join('|'),
  'gi',
);

/** Stands for a JSON span in the prose: a frame followed by one introduces that span, not the decision. */
const SPAN = '\u0001';

/** A refusal of the request, anywhere in the prose (not "I can't do it myself, so …"). */
const REFUSES = new RegExp(
  [
    String.raw`\bi(?:'m| am) sorry,? but i (?:can't|cannot|won't|will not|am unable|'m unable|am not able)`,
    String.raw`\bi (?:can't|cannot|won't|will not|am unable to|'m unable to|am not able to) (?:help|assist|comply|do that|do this|fulfil+|perform (?:that|this)|proceed)\b(?![^.!?\n]{0,40}\b(?:directly|myself|on my own|alone|but|so|however)\b)`,
    String.raw`\bi (?:must|have to|need to) (?:decline|refuse)\b`,
    String.raw`\bi (?:refuse|decline) to\b`,
  ].join('|'),
  'i',
);

/** `text` with each JSON span replaced by {@link SPAN}, apostrophes made ASCII. */
function prose(text: string): string {
  const r = jsonRanges(text);
  let out = '';
  let at = 0;
  for (let k = 0; k < r.length; k += 2) {
    out += text.slice(at, r[k]) + SPAN;
    at = r[k + 1]!;
  }
  return (out + text.slice(at)).replace(/[\u2018\u2019\u02bc]/g, "'");
}

/** The last line of prose before the decision that is not a fence or a tag alone. */
function lastLine(before: string): string {
  const lines = before
    .split('\n')
    .map((l) => l.replace(/`{3,}[\w+.#-]*|~{3,}|<\/?[\w|-]+>/g, '').trim())
    .filter((l) => l !== '');
  return lines[lines.length - 1] ?? '';
}

/**
 * Why the prose of `text` disowns the decision read from `source` (the fragment's text), or null.
 * The decision is placed by its first and last occurrence in the answer; when it cannot be placed
 * (it came out of a JSON string) only a refusal is looked for.
 */
export function disowned(text: string, source: string): string | null {
  const t = visibleAnswer(text);
  const all = prose(t);
  const refusal = REFUSES.exec(all);
  if (refusal) return `the answer refuses the request ("${clip(refusal[0])}") yet holds a decision; it is not acted on`;
  const first = source === '' ? -1 : t.indexOf(source);
  if (first < 0) return null;
  const line = lastLine(prose(t.slice(0, first)));
  const frame = [...line.matchAll(FRAMES)].find((m) => {
    const tail = line.slice(m.index + m[0].length);
    return tail.length <= 60 && !tail.includes(SPAN);
  });
  if (frame)
    return `the answer presents the decision as an example or a wrong one ("${clip(frame[0])}"); give one final decision`;
  const retract = RETRACTS.exec(prose(t.slice(t.lastIndexOf(source) + source.length)));
  if (retract)
    return `the answer takes the decision back after it ("${clip(retract[0].trim())}"); give one final decision`;
  return null;
}
