// The policy's warnings ("tool glob … matches no known tool"), logged when they appear rather
// than all again at every module change: a cluster whose remote modules come and go would
// otherwise repeat every standing warning each time.

/** One warning of the policy loader. */
export interface PolicyWarning {
  layer: string;
  rule?: string;
  message: string;
}

/**
 * Logs the warnings of each report that the report before did not have (a warning that went away
 * and came back is logged again). Returns the ones it logged.
 */
export class PolicyWarningLog {
  private standing = new Set<string>();

  constructor(private readonly log: (w: PolicyWarning) => void) {}

  report(warnings: readonly PolicyWarning[]): PolicyWarning[] {
    const now = new Set<string>();
    const fresh: PolicyWarning[] = [];
    for (const w of warnings) {
      const key = JSON.stringify([w.layer, w.rule ?? null, w.message]);
      now.add(key);
      if (!this.standing.has(key)) fresh.push(w);
    }
    this.standing = now;
    for (const w of fresh) this.log(w);
    return fresh;
  }
}
