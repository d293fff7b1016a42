// The places paths.ts knows: where credentials live (a read is a credential read) and where a
// write runs code or changes settings (shell start-up files, ~/.ssh, /etc, finger's own home…).
// Home places are relative to a home directory (`~`, `/home/<u>`, `/Users/<u>`, `/root`).

import {
  MORE_HOME_SECRET_DIRS,
  MORE_HOME_SECRET_FILES,
  MORE_SECRET_HINTS,
  MORE_SYSTEM_SECRET_DIRS,
  MORE_SYSTEM_SECRET_FILES,
  SECRET_NAME_ANYWHERE,
  SYSTEM_SECRET_PATH,
  withoutBackupSuffix,
} from './credential-stores.js';

/** Directories under home that are sensitive to write (everything below them). */
export const HOME_SENSITIVE_DIRS: readonly string[] = [
  '.finger/config',
  '.finger/state',
  '.finger/audit',
  '.finger/backups',
  '.finger/events',
  '.ssh',
  '.aws',
  '.gnupg',
  '.kube',
  '.docker',
  '.azure',
  '.password-store',
  '.config/gh',
  '.config/git',
  '.config/gcloud',
  '.config/autostart',
  '.config/systemd',
  '.config/fish',
  '.local/bin',
  'Library/LaunchAgents',
  '.oh-my-zsh',
  // read at log-in or by editors and tools that run what they say
  '.config/environment.d',
  '.bashrc.d',
  '.zshrc.d',
  '.config/nvim',
  '.vim',
  'bin',
  '.cargo/bin',
  'go/bin',
  // more places whose files run at log-in, at a tool's start or on a later event
  '.local/share/systemd', // systemd user units
  '.config/plasma-workspace/env', // KDE log-in scripts
  '.config/plasma-workspace/shutdown',
  '.config/autostart-scripts',
  '.config/hypr', // exec-once
  '.config/i3', // exec
  '.config/sway',
  '.config/openbox', // autostart
  '.config/lxsession', // */autostart
  '.local/lib', // python3.X/site-packages: *.pth and usercustomize.py run at every python start
  '.ipython', // profile_*/startup/*.py
  '.emacs.d',
  '.config/emacs',
  '.config/zsh', // ZDOTDIR rc files
  '.config/powershell', // *profile*.ps1
  '.gradle/init.d',
  '.config/direnv', // direnv.toml whitelists directories
  '.config/Code/User', // terminal profiles, tasks
];

/** Files under home that are sensitive to write. */
export const HOME_SENSITIVE_FILES: ReadonlySet<string> = new Set([
  '.finger/token',
  '.finger/tokens.json',
  '.finger/daemon.json',
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.bash_aliases',
  '.profile',
  '.zshrc',
  '.zprofile',
  '.zshenv',
  '.zlogin',
  '.zlogout',
  '.kshrc',
  '.cshrc',
  '.tcshrc',
  '.inputrc',
  '.netrc',
  '.npmrc',
  '.pypirc',
  '.gitconfig',
  '.git-credentials',
  '.xinitrc',
  '.xprofile',
  '.xsession',
  '.pam_environment',
  '.config/fish/config.fish',
  '.vimrc',
  '.exrc',
  '.tmux.conf',
  '.config/tmux/tmux.conf',
  // more start-up files: desktop log-in, shells and tools that run commands they name
  '.xsessionrc',
  '.mkshrc',
  '.xonshrc',
  '.config/xonsh/rc.xsh',
  '.Rprofile',
  '.gdbinit',
  '.psqlrc',
  '.sqliterc',
  '.irbrc',
  '.pryrc',
  '.emacs',
  '.emacs.el',
  '.screenrc',
  '.mailcap',
  '.gradle/init.gradle',
  '.cargo/config',
  '.cargo/config.toml',
  '.curlrc', // `upload-file =`: every later curl sends a file
  '.wgetrc',
  '.forward', // `|cmd` runs on mail delivery
  '.rhosts', // remote-login trust
  '.shosts',
  '.k5login',
  '.k5users',
  '.yarnrc.yml', // yarnPath: the yarn that runs
  '.config/pip/pip.conf', // index-url: where packages come from
  '.pip/pip.conf',
]);

/** System directories sensitive to write (everything below them). */
export const SYSTEM_PREFIXES: readonly string[] = [
  '/etc',
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/boot',
  '/System',
  '/Library',
  '/private/etc',
  '/var/spool/cron',
  '/var/cron',
  '/var/at',
  '/run/systemd', // runtime units
  '/var/www', // web roots: a file there may be a web shell
  '/proc',
  '/sys',
  '/dev',
];

/** Credential stores under home: directories (everything below them). */
export const HOME_SECRET_DIRS: readonly string[] = [
  '.finger/config', // finger's own cluster and serve keys, policy
  '.finger/state',
  '.finger/audit', // what every call carried
  '.finger/backups', // earlier contents of every file a tool wrote
  '.finger/events',
  '.ssh',
  '.aws',
  '.gnupg',
  '.kube',
  '.azure',
  '.password-store',
  '.config/gh',
  '.config/gcloud',
  '.config/rclone',
  '.terraform.d',
  '.local/share/keyrings', // GNOME keyring
  ...MORE_HOME_SECRET_DIRS,
];

/** Credential files under home. */
export const HOME_SECRET_FILES: ReadonlySet<string> = new Set([
  '.finger', // finger's home as a whole (an archive of it, a cd into it), not what lies under workspace/
  '.finger/token', // finger's own admin token and token hashes
  '.finger/tokens.json',
  '.finger/daemon.json',
  '.netrc',
  '.git-credentials',
  '.docker/config.json',
  '.npmrc',
  '.pypirc',
  '.pgpass',
  '.vault-token',
  '.my.cnf',
  '.s3cfg',
  '.boto',
  '.config/hub',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.claude/.credentials.json', // coding agents' own logins
  '.codex/auth.json',
  '.m2/settings.xml', // build tools' repository passwords
  '.gradle/gradle.properties',
  '.composer/auth.json',
  '.config/composer/auth.json',
  '.zhistory', // shell histories not named *_history
  '.histfile',
  '.local/share/fish/fish_history',
  ...MORE_HOME_SECRET_FILES,
]);

/**
 * Well-known files inside the stores above: only what a path relative to an unknown directory is
 * compared with (`cd "$D" && cat credentials` may read ~/.aws/credentials).
 */
export const HOME_SECRET_INNER_FILES: readonly string[] = [
  '.aws/credentials',
  '.aws/config',
  '.ssh/id_rsa',
  '.ssh/id_ed25519',
  '.ssh/id_ecdsa',
  '.ssh/config',
  '.ssh/authorized_keys',
  '.kube/config',
  '.config/gh/hosts.yml',
  '.finger/config/admin-policy.json',
  '.finger/config/config.json',
];

/** System credential stores: directories. */
export const SYSTEM_SECRET_DIRS: readonly string[] = [
  '/run/secrets', // Docker and Kubernetes secrets, service-account tokens
  '/var/run/secrets',
  '/etc/kubernetes/pki',
  '/etc/ssl/private',
  '/etc/sudoers.d',
  ...MORE_SYSTEM_SECRET_DIRS,
];

/** System credential files. */
export const SYSTEM_SECRET_FILES: readonly string[] = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/sudoers',
  '/etc/master.passwd',
  '/etc/kubernetes/admin.conf',
  '/etc/kubernetes/super-admin.conf',
  '/etc/kubernetes/kubelet.conf',
  '/etc/kubernetes/controller-manager.conf',
  '/etc/kubernetes/scheduler.conf',
  // what a glob is compared with for /etc/ssh/ssh_host_*key (a literal path matches SSH_HOST_KEY)
  '/etc/ssh/ssh_host_rsa_key',
  '/etc/ssh/ssh_host_ecdsa_key',
  '/etc/ssh/ssh_host_ed25519_key',
  '/etc/ssh/ssh_host_dsa_key',
  ...MORE_SYSTEM_SECRET_FILES,
];

/** An SSH host's private key, by its literal path. */
export const SSH_HOST_KEY = /^\/etc\/ssh\/ssh_host_[^/]*key$/;

/** `.env`, `.env.local`… (not the `.example`, `.sample`, `.template` and `.dist` ones). */
export const DOTENV = /(?:^|\/)\.env(?:\.(?!example$|sample$|template$|dist$)[^/]+)?$/;

/** A test of a normalised path. */
export interface PathTest {
  test(n: string): boolean;
}

/**
 * Files that hold credentials wherever they are (credential-stores.ts): private keys, key stores,
 * credential and secret files, direnv files, project `.npmrc` / `.pypirc` / `.netrc`, Terraform
 * state, `.git/config`, browsers' saved logins, cookies and keys, shell histories; system paths
 * with a run-time component (`/run/user/<uid>/containers/auth.json`), raw disks and kernel memory;
 * and a backup copy of any credential file (`id_rsa.bak`, `/etc/shadow.orig`, `~/.netrc~`).
 */
export const SECRET_FILE_ANYWHERE: PathTest = {
  test(n: string): boolean {
    if (SECRET_NAME_ANYWHERE.test(n) || SYSTEM_SECRET_PATH.test(n)) return true;
    const b = withoutBackupSuffix(n);
    if (b === n) return false;
    if (SECRET_NAME_ANYWHERE.test(b) || SYSTEM_SECRET_PATH.test(b) || DOTENV.test(b)) return true;
    if (b.startsWith('~/')) return HOME_SECRET_FILES.has(b.slice(2)) || HOME_SECRET_INNER_FILES.includes(b.slice(2));
    return SYSTEM_SECRET_FILES.includes(b) || SSH_HOST_KEY.test(b);
  },
};

/** Cheap pre-check: a word that can name a credential store contains one of these. */
export const SECRET_HINT = new RegExp(
  `${/\.(?:ssh|aws|gnupg|kube|azure|password-store|netrc|git-credentials|docker|npmrc|pypirc|config|env|finger|terraform|pgpass|vault|my\.cnf|s3cfg|boto|cargo|gem|pem|key|p12|pfx|jks|keystore|htpasswd|claude|codex|m2|gradle|composer|local|zhistory|histfile|mozilla|[a-z]*_history)|FINGER_HOME|id_(?:rsa|dsa|ecdsa|ed25519)|credentials|secret|shadow|sudoers|master\.passwd|ssh_host_|kubernetes|ssl\/private|Login Data|logins\.json|key[34]\.db|[Cc]ookies|fish_history|\/proc\/|auth\.json/.source}|${MORE_SECRET_HINTS.source}`,
);

/**
 * finger's own home entries: `FINGER_SECRETS` hold credentials or what every call carried (reading
 * them is a credential read), `FINGER_GUARDED` are sensitive to write. Its `workspace/` is neither.
 */
export const FINGER_SECRETS: readonly string[] = [
  'token',
  'tokens.json',
  'config',
  'state',
  'audit',
  'backups',
  'events',
  'daemon.json',
];
export const FINGER_GUARDED: readonly string[] = FINGER_SECRETS;

/** Where a user's home directory is, as path prefixes (the user name is any one component). */
export const USER_HOME = /^(?:\/home\/[^/]+|\/Users\/[^/]+|\/root|\/var\/root)(?=\/|$)/;
