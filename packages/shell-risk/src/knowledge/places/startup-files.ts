// Start-up files: the places whose contents something runs later without being asked — a shell
// at its start, ssh at a login, cron on a schedule, systemd, the desktop session, git, python —
// each with what runs it, for the reason a person reads ("writes the start-up file '~/.bashrc'
// (bash runs it at every interactive start)"). Which writes are dangerous is paths.ts's
// (sensitive places) and startup-hooks.ts's; this table only names the start-up ones.

import type { KnownHomes } from './known-homes.js';
import { normalizePath } from './paths.js';

/** [normalised path pattern, what runs it]; a pattern for a directory also matches what is under it. */
const STARTUP_FILES: readonly (readonly [RegExp, string])[] = [
  [/^~\/\.(?:bashrc|bash_profile|bash_login|profile)$/, 'bash runs it at every start'],
  [/^~\/\.bash_logout$/, 'bash runs it at every logout'],
  [/^~\/\.(?:zshrc|zprofile|zshenv|zlogin|zlogout)$/, 'zsh runs it at every start'],
  [/^~\/\.(?:kshrc|mkshrc|cshrc|tcshrc|login|yashrc)$/, 'the shell runs it at every start'],
  [/^~\/\.config\/fish(?:\/|$)/, 'fish runs it at every start'],
  [
    /^\/etc\/(?:profile|bash\.bashrc|bashrc|zshrc|zprofile|zshenv|zlogin|environment|csh\.cshrc|csh\.login)$/,
    'every login shell runs it',
  ],
  [/^\/etc\/(?:profile\.d|zsh)(?:\/|$)/, 'every login shell runs it'],
  [/^~\/\.ssh\/authorized_keys2?$/, 'whoever holds a key listed there logs in'],
  [/^(?:~\/\.ssh\/rc|\/etc\/ssh\/sshrc)$/, 'ssh runs it at every login'],
  [/^\/var\/spool\/cron(?:\/|$)|^\/etc\/(?:crontab|anacrontab|cron\.[a-z]+)(?:\/|$)/, 'cron runs it on a schedule'],
  [
    /^~\/\.config\/systemd(?:\/|$)|^\/(?:etc|usr\/lib|lib)\/systemd(?:\/|$)|^\/run\/user\/[^/]+\/systemd(?:\/|$)/,
    'systemd starts what is there',
  ],
  [/^~\/\.config\/autostart(?:\/|$)|^\/etc\/xdg\/autostart(?:\/|$)/, 'the desktop session starts it at login'],
  [/^~\/\.(?:xinitrc|xsession|xsessionrc|xprofile|Xsession)$/, 'the X session runs it at start'],
  [/^~\/\.config\/environment\.d(?:\/|$)|^~\/\.pam_environment$/, 'sets the environment of every session'],
  [/^\/etc\/(?:rc\.local|init\.d|init|rc\d\.d)(?:\/|$)/, 'runs at boot'],
  [/^\/etc\/ld\.so\.preload$/, 'loaded into every program'],
  [/(?:^|\/)\.git\/hooks(?:\/|$)|(?:^|\/)\.husky(?:\/|$)/, 'git runs it as a hook'],
  [/(?:^|\/)(?:site|dist)-packages\/[^/]+\.pth$|(?:^|\/)(?:user|site)customize\.py$/, 'python runs it at every start'],
];

/** What runs the start-up file `path` names (any spelling of home), or null when it is none. */
export function startupFile(path: string, homes: KnownHomes): string | null {
  const n = normalizePath(path, homes);
  if (n === null) return null;
  for (const [re, why] of STARTUP_FILES) if (re.test(n)) return why;
  return null;
}
