/**
 * echo: the smallest finger module. One tool, `echo`, returns its arguments unchanged, so the bare
 * module id `echo` reaches it. Used by tests and benchmarks as a zero-cost target: it allocates
 * nothing and never awaits.
 */

/** The in-process module shape (structurally `InProcessModule` of `@finger/module-sdk`). */
export interface EchoModule {
  tools: { echo: (args: unknown) => unknown };
}

/** Returns `args` as given (the same object). */
function echo(args: unknown): unknown {
  return args;
}

/** The module object the in-process runtime loads (default export). */
const echoModule: EchoModule = { tools: { echo } };

export default echoModule;
