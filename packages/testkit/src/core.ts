// `@finger/testkit/core`: the helpers that load no workspace package (no daemon, no hub runtime),
// for unit tests of the lower packages, where importing the whole testkit would cost seconds a file.
export { ManualClock } from './manual-clock.js';
export { thrownBy } from './thrown.js';
export { waitFor, waitUntil } from './wait-for.js';
