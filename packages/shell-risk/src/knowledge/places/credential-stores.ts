// More credential stores for sensitive-places.ts: tools' token files under home, system secrets,
// names that are credentials in any directory (project `.npmrc`, `terraform.tfstate`, keytabs…),
// raw disks and kernel memory (a read bypasses every file permission), and backup copies of all
// of these (`id_rsa.bak`, `shadow.orig`, `id_ed25519~`, vim's `.id_rsa.swp`).

/** Credential stores under home: directories (everything below them). */
export const MORE_HOME_SECRET_DIRS: readonly string[] = [
  '.config/glab-cli',
  '.config/github-copilot', // apps.json, hosts.json
  '.gemini', // oauth_creds.json
  '.kaggle',
  '.huggingface',
  '.cache/huggingface/stored_tokens',
  '.wrangler/config',
  '.config/.wrangler/config',
  '.fly',
  '.config/doctl',
  '.config/hcloud',
  '.ngrok2',
  '.config/ngrok',
  'Library/Application Support/ngrok',
  '.oci', // config and its API signing key
  '.snowflake',
  '.config/stripe',
  '.config/sops/age',
  'Library/Application Support/sops/age',
  '.local/share/kwalletd', // KDE wallet
  '.kde/share/apps/kwallet',
  '.kde4/share/apps/kwallet',
  '.config/Bitwarden CLI',
  'Library/Application Support/Bitwarden CLI',
  '.purple', // accounts.xml: chat passwords
];

/** Credential files under home. */
export const MORE_HOME_SECRET_FILES: readonly string[] = [
  '.yarnrc.yml',
  '.config/pip/pip.conf',
  '.pip/pip.conf',
  '.config/containers/auth.json',
  '.cache/huggingface/token',
  '.claude.json',
  '.terraformrc',
  '.databrickscfg',
  '.dbt/profiles.yml',
  '.sentryclirc',
  '.circleci/cli.yml',
  '.config/helm/repositories.yaml',
  '.nuget/NuGet/NuGet.Config',
  '.config/NuGet/NuGet.Config',
  '.ivy2/.credentials',
  '.sbt/.credentials',
  '.m2/settings-security.xml',
  '.android/adbkey',
  '.msmtprc',
  '.config/msmtp/config',
  '.muttrc',
  '.mutt/muttrc',
  '.fetchmailrc',
  '.config/filezilla/sitemanager.xml',
  '.config/filezilla/recentservers.xml',
  '.filezilla/sitemanager.xml',
  '.filezilla/recentservers.xml',
  '.lesshst', // histories not named *_history
  '.viminfo',
  '.gitlab-runner/config.toml',
];

/** System credential stores: directories. */
export const MORE_SYSTEM_SECRET_DIRS: readonly string[] = [
  '/etc/NetworkManager/system-connections', // Wi-Fi and VPN secrets
  '/etc/wpa_supplicant',
  '/var/lib/rancher/k3s/server/cred',
  '/var/lib/rancher/k3s/server/tls',
  '/var/lib/kubelet/pki',
  '/var/lib/jenkins/secrets',
  '/var/jenkins_home/secrets',
];

/** System credential files (also what a glob of these directories is compared with). */
export const MORE_SYSTEM_SECRET_FILES: readonly string[] = [
  '/etc/security/opasswd',
  '/etc/krb5.keytab',
  '/etc/mysql/debian.cnf',
  '/etc/ppp/chap-secrets',
  '/etc/ppp/pap-secrets',
  '/etc/ipsec.secrets',
  '/etc/rancher/k3s/k3s.yaml',
  '/var/lib/rancher/k3s/server/token',
  '/var/lib/rancher/k3s/server/node-token',
  '/var/lib/kubelet/kubeconfig',
  '/var/lib/jenkins/credentials.xml',
  '/var/jenkins_home/credentials.xml',
  '/etc/gitlab/gitlab-secrets.json',
  '/etc/gitlab-runner/config.toml',
  '/var/backups/shadow.bak',
  '/var/backups/gshadow.bak',
  '/var/backups/passwd.bak',
  '/dev/mem', // kernel and physical memory, a raw disk
  '/dev/kmem',
  '/dev/port',
  '/proc/kcore',
  '/dev/sda',
  '/dev/nvme0n1',
];

/** File names (regular-expression sources, one component) that are credentials in any directory. */
const SECRET_NAMES: readonly string[] = [
  'id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?',
  '[^/]+\\.(?:pem|key|p12|pfx|jks|keystore|keytab|kdbx)',
  '\\.credentials', // ivy's and sbt's
  '\\.?credentials\\.(?:json|xml)',
  'secrets?\\.(?:ya?ml|json|toml|env)',
  '\\.htpasswd',
  '\\.pgpass',
  '\\.vault-token',
  '\\.envrc',
  '\\.npmrc', // project-level tokens (`_authToken`)
  '\\.pypirc',
  '_?\\.?netrc',
  '\\.authinfo(?:\\.gpg)?',
  '\\.git-credentials',
  '[^/]*\\.tfstate(?:\\.backup)?', // Terraform state: every secret of every resource
  'gitlab-secrets\\.json',
  'kubeconfig(?:\\.ya?ml)?',
  'wpa_supplicant[^/]*\\.conf',
  'g?shadow-?',
  'opasswd',
  'Login Data',
  'Web Data', // browsers' autofill and cards
  'Local State', // the key Chrome encrypts cookies and passwords with
  'logins\\.json',
  'key[34]\\.db',
  'Cookies',
  'cookies\\.sqlite',
  '[^/]+\\.binarycookies',
  '[^/]+\\.keychain(?:-db)?', // macOS keychains (~/Library/Keychains, not a store here: `~/*/*` is no read of it)
  'keychain-2\\.db',
  '\\.[a-z][a-z_]*_history', // .bash_history, .node_repl_history, .python_history, .psql_history…
  '\\.zhistory',
  '\\.histfile',
  'fish_history',
];

/** Path tails (regular-expression sources, several components) that are credentials anywhere. */
const SECRET_TAILS: readonly string[] = [
  '\\.git/config', // actions/checkout leaves `AUTHORIZATION: basic <token>` there
];

/** Directory names (regular-expression sources) whose contents are credentials anywhere. */
const SECRET_COMPONENTS: readonly string[] = [
  'Local Storage', // Electron apps' session tokens (Discord, Slack…)
];

/** Absolute system paths (regular-expression sources) that hold credentials. */
const SYSTEM_SECRET_PATTERNS: readonly string[] = [
  '/run/user/[^/]+/containers/auth\\.json', // podman / buildah registry logins
  '/var/lib/docker/containers/[^/]+/config\\.v2\\.json', // a container's environment
  '/var/backups/[^/]*(?:shadow|passwd)[^/]*',
  // raw disks: a read bypasses every file permission (as a prefix, so `/dev/sd*` counts too)
  '/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|dm-|md|loop|mapper/|disk/).*',
];

/**
 * Devices and kernel files a read of which is dangerous, not only a credential read: physical and
 * kernel memory, keyboards and other input (a key logger), cameras, microphones, the screen.
 */
export const DANGEROUS_DEVICE_READ =
  /^\/(?:dev\/(?:mem|kmem|port|input\/.*|video[^/]*|snd\/.*|hidraw[^/]*|fb\d*|vcsa?\d*)|proc\/kcore)$/;

const anchoredAt = (sources: readonly string[]): string => `(?:${sources.join('|')})`;

/** A credential name (with an optional leading dot: vim's `.id_rsa.swp`) or tail at the end of a path, or a store's directory in it. */
export const SECRET_NAME_ANYWHERE = new RegExp(
  `(?:^|/)(?:\\.?${anchoredAt(SECRET_NAMES)}|${anchoredAt(SECRET_TAILS)})$|(?:^|/)${anchoredAt(SECRET_COMPONENTS)}(?:/|$)`,
);

/** A system path holding credentials, a raw disk, or a device read as dangerous. */
export const SYSTEM_SECRET_PATH = new RegExp(`^${anchoredAt(SYSTEM_SECRET_PATTERNS)}$|${DANGEROUS_DEVICE_READ.source}`);

/** Words that may name one of the places above (the cheap pre-check of sensitive-places.ts). */
export const MORE_SECRET_HINTS =
  /\/dev\/|\/var\/|\/run\/|\.git(?:\/|$)|\.(?:yarnrc|terraformrc|sentryclirc|msmtprc|muttrc|fetchmailrc|lesshst|viminfo|authinfo|claude|gemini|huggingface|kaggle|wrangler|fly|ngrok2|oci|dbt|snowflake|circleci|nuget|ivy2|sbt|android|purple|filezilla|pip|cache|kde4?|mutt|gitlab-runner|databrickscfg)|Library\/|Web Data|Local St|Bitwarden|adbkey|keytab|kdbx|tfstate|kubeconfig|k3s|kcore|opasswd|wpa_supplicant|gitlab|NetworkManager|ipsec|-secrets|debian\.cnf|_history|netrc|~$|\.(?:bak|old|orig|save|backup|bkp|bk|tmp|temp|swp|swo|prev|copy|\d{1,3})$/;

const BACKUP_TAIL = /^(?:bak|old|orig|save|backup|bkp|bk|tmp|temp|swp|swo|prev|copy|\d{1,3})$/i;

/**
 * The path without backup suffixes (`.bak`, `.old`, `.orig`, `.save`, `.swp`, `~`, `.1`…; up to
 * four), or the path itself. A leading dot of a file name is not a suffix.
 */
export function withoutBackupSuffix(n: string): string {
  let s = n;
  for (let k = 0; k < 4; k++) {
    const slash = s.lastIndexOf('/');
    if (s.endsWith('~') && s.length - slash > 2) {
      s = s.slice(0, -1);
      continue;
    }
    const dot = s.lastIndexOf('.');
    if (dot <= slash + 1 || s.length - dot > 8 || !BACKUP_TAIL.test(s.slice(dot + 1))) break;
    s = s.slice(0, dot);
  }
  return s;
}
