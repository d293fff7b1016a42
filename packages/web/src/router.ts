// A path router in a few lines: the app's routes are plain paths under /ui (the daemon answers
// index.html for each), links push history entries, and components read the current path.

import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();
addEventListener('popstate', () => listeners.forEach((fn) => fn()));

/** Goes to `path` (a /ui/… path), adding a history entry unless `replace`. */
export function navigate(path: string, replace = false): void {
  if (path === location.pathname) return;
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  listeners.forEach((fn) => fn());
}

/** The current path; re-renders the caller when it changes. */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const fn = () => setPath(location.pathname);
    listeners.add(fn);
    return () => listeners.delete(fn);
  }, []);
  return path;
}

/** Click handler of in-app links: plain left clicks navigate without a reload. */
export function linkClick(e: MouseEvent): void {
  const a = e.currentTarget as HTMLAnchorElement;
  if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(a.pathname);
}
