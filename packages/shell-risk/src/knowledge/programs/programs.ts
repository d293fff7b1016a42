// What the RiskAssessor knows about programs by name: shells and interpreters (and when they read
// their program from stdin), network fetchers and decoders (what must never be piped into a
// shell), privilege escalation, disk and power tools.

import type { SimpleCommand } from '../../command-model.js';
import { awkPrograms, awkRunsInput } from '../../wrappers/awk-code.js';

/** Shells: `-c` runs a string; without a script argument they read the script from stdin. */
export const SHELLS: ReadonlySet<string> = new Set([
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'ash',
  'mksh',
  'yash',
  'fish',
  'rbash',
  'busybox',
  'csh',
  'tcsh',
]);

const INTERPRETER_NAMES = new Set([
  'perl',
  'ruby',
  'node',
  'nodejs',
  'php',
  'lua',
  'luajit',
  'tclsh',
  'Rscript',
  'osascript',
  'pwsh',
  'powershell',
]);

/** Whether a program is a script interpreter (python3.12, node, perl…), shells excluded. */
export function isInterpreter(program: string): boolean {
  if (INTERPRETER_NAMES.has(program)) return true;
  return program.startsWith('py') && (/^python[0-9.]*$/.test(program) || /^pypy[0-9.]*$/.test(program));
}

/**
 * Programs that run with another user's (root's) or group's privileges: sudo and its look-alikes
 * (dzdo, pbrun, ksu), su and util-linux runuser / setpriv, capsh, sg (a group's rights).
 */
export const PRIVILEGED: ReadonlySet<string> = new Set([
  'sudo',
  'doas',
  'su',
  'pkexec',
  'run0',
  'runas',
  'sudoedit',
  'runuser',
  'setpriv',
  'capsh',
  'ksu',
  'dzdo',
  'pbrun',
  'sg',
]);

/** Programs whose output comes from the network. */
export const FETCHERS: ReadonlySet<string> = new Set([
  'curl',
  'wget',
  'fetch',
  'nc',
  'ncat',
  'netcat',
  'socat',
  'http',
  'https',
  'xh',
  'aria2c',
  'lwp-request',
  'lwp-download',
  'GET',
  'POST',
  'ftp',
  'tftp',
  'ssh',
  'telnet',
  'openssl',
]);

/** Programs that look at a path without reading the file's content. */
export const NO_CONTENT: ReadonlySet<string> = new Set([
  'cd',
  'pushd',
  'ls',
  'stat',
  'test',
  '[',
  'du',
  'tree',
  'file',
  'realpath',
  'readlink',
  'basename',
  'dirname',
  'mkdir',
  'touch',
]);

/** Formats, partitions or wipes disks. */
export const DISK_TOOLS: ReadonlySet<string> = new Set([
  'mkfs',
  'mke2fs',
  'mkswap',
  'fdisk',
  'sfdisk',
  'gdisk',
  'cfdisk',
  'sgdisk',
  'parted',
  'wipefs',
  'shred',
  'blkdiscard',
  'newfs',
]);

/**
 * Programs that change every operand they name: delete it, create it, or change its mode, owner
 * or attributes. Classify's writers and workspace confinement's operand changers both hold them.
 */
export const OPERAND_CHANGERS: readonly string[] = [
  'rm',
  'rmdir',
  'unlink',
  'shred',
  'truncate',
  'touch',
  'mkdir',
  'chmod',
  'chown',
  'chgrp',
  'chattr',
  'setfacl',
];

/** Stops or restarts the machine. */
export const POWER_TOOLS: ReadonlySet<string> = new Set(['shutdown', 'reboot', 'halt', 'poweroff', 'kexec', 'telinit']);

/**
 * Whether this segment decodes or de-obfuscates its input (base64 -d, xxd -r, openssl -d, gunzip,
 * rev, tr…): something that must not be piped into a shell either.
 */
export function isDecoder(seg: SimpleCommand): boolean {
  const p = seg.program;
  const args = seg.argv.slice(1);
  if (p === 'base64' || p === 'base32' || p === 'basenc') {
    return args.some((a) => a === '--decode' || (/^-[a-zA-Z]+$/.test(a) && /[dD]/.test(a)));
  }
  if (p === 'xxd') return args.some((a) => /^-[a-zA-Z]*r/.test(a) || a === '-revert');
  if (p === 'openssl') return args.includes('-d') || args.includes('-base64') || args.includes('base64');
  if (p === 'gzip' || p === 'xz' || p === 'bzip2' || p === 'zstd')
    return args.some((a) => /^-[a-zA-Z]*d/.test(a) || a === '--decompress');
  return ['uudecode', 'gunzip', 'zcat', 'bzcat', 'xzcat', 'zstdcat', 'rev', 'tr', 'gpg'].includes(p);
}

/**
 * Whether this segment runs a program it reads from stdin: a shell without `-c` and without a
 * script file (or with `-s`, `-`, `/dev/stdin`), `xargs sh -c` (the string is what xargs reads), an
 * interpreter without a script or `-c`/`-e` or whose inline code executes its input
 * (`python3 -c 'exec(sys.stdin.read())'`), awk running its input lines (`{system($0)}`),
 * `source /dev/stdin`.
 */
export function readsScriptFromStdin(seg: SimpleCommand): boolean {
  if (seg.wrapper || seg.unknown_program) return false;
  const p = seg.program;
  const argv = seg.argv;
  if (SHELLS.has(p)) {
    let j = 1;
    if (p === 'busybox') {
      if (!SHELLS.has(argv[1] ?? '') || argv[1] === 'busybox') return false;
      j = 2;
    }
    for (; j < argv.length; j++) {
      const w = argv[j] as string;
      if (w === '--') return j + 1 >= argv.length || isStdinPath(argv[j + 1] as string);
      if (w === '-o' || w === '+o' || w === '-O' || w === '+O' || w === '--rcfile' || w === '--init-file') {
        j++;
        continue;
      }
      if (w.startsWith('-') && !w.startsWith('--') && w.length > 1) {
        if (w.includes('s')) return true;
        // `xargs sh -c`: the string -c runs is what xargs reads
        if (w.includes('c')) return seg.unknown_tail && argv.slice(j + 1).every((a) => a.startsWith('-'));
        continue;
      }
      if (w.startsWith('-') || w.startsWith('+')) continue;
      return isStdinPath(w);
    }
    return true;
  }
  if (isInterpreter(p)) {
    for (let j = 1; j < argv.length; j++) {
      const w = argv[j] as string;
      if (w === '-') return true;
      if (/^-[a-zA-Z]*[ceEmr]/.test(w) || w === '--eval' || w === '--print' || w === '--command')
        return (
          /^-[a-zA-Z]*[ceEr]$|^--eval$/.test(w) &&
          runsStdin(argv[j + 1] ?? '', (p === 'perl' || p === 'ruby') && /^-[a-zA-Z]*[np]/.test(w))
        );
      if (!w.startsWith('-')) return isStdinPath(w);
    }
    return true;
  }
  if (AWKS.has(p)) {
    const a = awkPrograms(argv.map((text) => ({ text, dynamic: false })));
    return a.files.every((f) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(f) || isStdinPath(f)) && awkRunsInput(a);
  }
  if (p === 'source' || p === '.') return argv.length < 2 || isStdinPath(argv[1] as string);
  return false;
}

const AWKS: ReadonlySet<string> = new Set(['awk', 'gawk', 'mawk', 'nawk']);
/** Code that runs what it reads on stdin: python `exec(sys.stdin.read())`, perl `eval <STDIN>`, node `eval(fs.readFileSync(0))`. */
const EXEC_CALL =
  /\b(?:exec|eval|compile|system|popen|execSync|spawnSync|Function|runInThisContext|runInNewContext|instance_eval|class_eval)\b/;
const STDIN_READ =
  /\bsys\.stdin\b|\bstdin\b|\bSTDIN\b|<>|\binput\s*\(|readFileSync\(\s*(?:0|['"]\/dev\/stdin['"])|\/dev\/stdin|\$stdin|\bARGF\b|\bgets\b|php:\/\/stdin|readLines?\(\s*\)/;

/** Whether inline interpreter code executes what it reads on stdin (`perl -ne`: every line read is `$_`). */
function runsStdin(code: string, loops: boolean): boolean {
  return EXEC_CALL.test(code) && (loops || STDIN_READ.test(code));
}

function isStdinPath(w: string): boolean {
  return w === '-' || w === '/dev/stdin' || w === '/dev/fd/0' || w === '/proc/self/fd/0';
}

/**
 * git configuration keys that make git run a program (pager, editor, ssh command, hooks path,
 * aliases with `!`, filters, credential helpers, a template directory whose hooks every later
 * clone and init installs, the ext:: transport's permission…).
 */
export function isGitExecKey(key: string): boolean {
  const k = key.toLowerCase();
  return (
    /^core\.(pager|sshcommand|editor|fsmonitor|hookspath|gitproxy|askpass|alternaterefscommand)$/.test(k) ||
    /^(sequence\.editor|diff\.external|gpg\.program|gpg\.[^.]+\.program|credential\.helper|credential\..+\.helper|include\.path|includeif\..+\.path|uploadpack\.packobjectshook|receive\.procreceiverefs|ssh\.variant|init\.templatedir|protocol\.allow|protocol\.ext\.allow|sendemail\.smtpserver|web\.browser|browser\..+\.cmd|man\..+\.cmd|instaweb\.httpd)$/.test(
      k,
    ) ||
    (/^(alias|pager|filter|diff|merge|difftool|mergetool|remote)\..+/.test(k) &&
      /\.(command|cmd|textconv|driver|clean|smudge|process|tool|path|proxy|uploadpack|receivepack|vcs)$|^alias\.|^pager\./.test(
        k,
      ))
  );
}
