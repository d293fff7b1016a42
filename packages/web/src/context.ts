// What every page reads: the signed-in session (roles decide what the page shows; the daemon
// enforces them) and the live store.

import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';

import type { Session } from './api.ts';
import type { ConsoleState, ConsoleStore } from './store.ts';

export interface AppContext {
  session: Session;
  store: ConsoleStore;
  /** Shows a short message in the page's live status line. */
  notify: (message: string) => void;
}

export const Ctx = createContext<AppContext | null>(null);

export function useApp(): AppContext {
  const c = useContext(Ctx);
  if (!c) throw new Error('no app context');
  return c;
}

/** The store's state; re-renders on every change. */
export function useConsole(): ConsoleState {
  const { store } = useApp();
  const [state, setState] = useState(store.state);
  useEffect(() => {
    setState(store.state);
    return store.subscribe(() => setState(store.state));
  }, [store]);
  return state;
}

/** The current time, ticking every second (waiting times, deadlines). */
export function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  return now;
}

/** May answer approvals and manage standing approvals. */
export function canAnswer(s: Session): boolean {
  return s.roles.includes('operator') || s.roles.includes('admin');
}

/** May halt, unlock and edit policy. */
export function isAdmin(s: Session): boolean {
  return s.roles.includes('admin');
}
