/**
 * Runs html-to-text in a worker thread for large documents: converting 2 MiB of HTML takes about
 * two seconds of CPU, which in the hub's own thread would stall every other call. The worker is
 * terminated when the call's deadline or cancellation fires, so a slow conversion is bounded too.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const LIB = createRequire(import.meta.url).resolve('html-to-text');

// An eval worker is a CommonJS script; it loads the library by its resolved path.
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { convert } = require(workerData.lib);
parentPort.postMessage(convert(workerData.html, workerData.options));
`;

/**
 * `convert(html, options)` of html-to-text in a one-shot worker. Rejects with `signal.reason` when
 * the signal aborts (the worker is terminated), or with the worker's error.
 */
export function convertInWorker(html: string, options: Record<string, unknown>, signal: AbortSignal): Promise<string> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    let settled = false;
    const worker = new Worker(SOURCE, { eval: true, workerData: { lib: LIB, html, options } });
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = () => {
      settle(() => reject(signal.reason));
      void worker.terminate();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (text: unknown) => settle(() => resolve(String(text))));
    worker.once('error', (e) => settle(() => reject(e)));
    worker.once('exit', (code) => settle(() => reject(new Error(`html conversion worker exited with code ${code}`))));
  });
}
