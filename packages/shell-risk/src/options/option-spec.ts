// The shape of one program's option table (see options.ts for how argv is normalised with it).

/** How one program spells its options: each spelling maps to one canonical name. */
export interface CommandSpec {
  /** short letter → canonical name (no value) */
  short?: Record<string, string>;
  /** short letter → canonical name (takes a value: rest of the cluster or the next word) */
  shortArg?: Record<string, string>;
  /** short letters whose value is optional and attached (`sed -i.bak`) */
  shortOptArg?: Record<string, string>;
  /** long name → canonical name (no value, or an attached `=value`) */
  long?: Record<string, string>;
  /** long name → canonical name (takes a value: `=value` or the next word) */
  longArg?: Record<string, string>;
  /** a long option may be abbreviated to any unambiguous prefix (GNU getopt_long) */
  gnuPrefix?: boolean;
  /** decides whether a word starting with `-` is an option at all (chmod `-x` is a mode) */
  isOption?: (word: string) => boolean;
  /** every `-word` is one option named by the whole word (find primaries) */
  wholeWord?: boolean;
}

/**
 * `table[key]` when `key` is the table's own entry: a program or option named `constructor`,
 * `toString` or `__proto__` must not find Object.prototype's members.
 */
export function lookup<T>(table: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return table !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}

/** A table mapping each name to itself (`same('force', 'quiet')`). */
export const same = (...names: string[]): Record<string, string> => Object.fromEntries(names.map((n) => [n, n]));
