import type { Logger } from '@finger/module-sdk';

// The Logger interface is @finger/module-sdk's (modules log through it); re-exported for the hub's files.
export type { Logger };

/** A logger that discards everything (tests, benches). */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};
