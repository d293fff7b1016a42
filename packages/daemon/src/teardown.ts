// The daemon's shutdown, registered part by part as `build` makes them, so that what is built is
// exactly what is closed — on `close()` and when the start fails half-way — and nothing is closed
// twice or forgotten. Shutdown has phases, because the hub is made early (every part plugs into
// it) but must drain in the middle: first the front stops taking work and answers what waits for
// a person (`front`), then in-flight calls drain (`drain`), then callers of what outlived the
// drain are answered (`answer`), then connections end and the state is written and closed
// (`state`). Within a phase, parts close in the reverse order of their construction (the last
// made, the first closed).

/** The phases of shutdown, in the order they run. */
export const TEARDOWN_PHASES = ['front', 'drain', 'answer', 'state'] as const;
export type TeardownPhase = (typeof TEARDOWN_PHASES)[number];

interface Step {
  name: string;
  run: () => unknown;
}

/** Registered shutdown steps; {@link run} runs them once. */
export class Teardown {
  readonly #steps = new Map<TeardownPhase, Step[]>(TEARDOWN_PHASES.map((p) => [p, []]));
  #ran: Promise<void> | undefined;

  constructor(private readonly onError: (name: string, err: unknown) => void) {}

  /** Registers the shutdown of a part just built. `run` may be async; a failure is reported, never thrown. */
  add(phase: TeardownPhase, name: string, run: () => unknown): void {
    if (this.#ran !== undefined) throw new Error(`teardown already ran: cannot add ${name}`);
    this.#steps.get(phase)!.push({ name, run });
  }

  /** The steps in the order {@link run} takes them (for tests and logs). */
  order(): string[] {
    return TEARDOWN_PHASES.flatMap((p) => [...this.#steps.get(p)!].reverse().map((s) => `${p}: ${s.name}`));
  }

  /** Runs every step, phase by phase, the last registered first; each awaited, failures reported. Once. */
  run(): Promise<void> {
    this.#ran ??= (async () => {
      for (const phase of TEARDOWN_PHASES)
        for (const step of [...this.#steps.get(phase)!].reverse()) {
          try {
            await step.run();
          } catch (e) {
            this.onError(step.name, e);
          }
        }
    })();
    return this.#ran;
  }
}
