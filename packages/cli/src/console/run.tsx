/**
 * Starts the console on the terminal: the alternate screen, the Ink app, the store's connection;
 * resolves once the person quits (q, Ctrl-C) with everything closed and the screen restored.
 * Ink draws nothing until exit when `CI` is set (its is-in-ci check): the console refuses to
 * start then instead of showing a blank screen.
 */
import { render } from 'ink';

import type { DaemonClient, Env } from '../client.js';
import { ConsoleApp } from './app.js';
import { ConsoleStore } from './store.js';
import { ColorContext } from './ui.js';

/** Options of {@link runConsole}. */
export interface ConsoleOptions {
  client: DaemonClient;
  env: Env;
  /** Ring the terminal bell when a call is held. */
  bell: boolean;
  color: boolean;
}

const ALT_SCREEN_ON = '\u001b[?1049h';
const ALT_SCREEN_OFF = '\u001b[?1049l';

/** Runs the console until the person quits. */
export async function runConsole(o: ConsoleOptions): Promise<void> {
  const stdout = process.stdout;
  const store = new ConsoleStore({ client: o.client, bell: o.bell, ring: () => void stdout.write('\u0007') });
  stdout.write(ALT_SCREEN_ON);
  const instance = render(
    <ColorContext.Provider value={o.color}>
      <ConsoleApp store={store} env={o.env} url={o.client.url} />
    </ColorContext.Provider>,
    { exitOnCtrlC: true, patchConsole: true },
  );
  store.start();
  try {
    await instance.waitUntilExit();
  } finally {
    store.stop();
    instance.cleanup();
    stdout.write(ALT_SCREEN_OFF);
  }
}
