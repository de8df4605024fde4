/**
 * The environment of every git process ghostcommit starts. Apart from exec.ts so the command-line
 * loader can start a status before the bundle is loaded (see capture/status-ahead.ts) with exactly
 * the environment the bundle would give it.
 */

/** Environment variables that would make git act on another repository or run user programs. */
const DROPPED_ENV =
  /^GIT_(DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|COMMON_DIR|PREFIX|NAMESPACE|CONFIG|CONFIG_PARAMETERS|CONFIG_COUNT|CONFIG_KEY_\d+|CONFIG_VALUE_\d+|EXTERNAL_DIFF|DIFF_OPTS|EDITOR|SEQUENCE_EDITOR|PAGER|SSH|SSH_COMMAND|ASKPASS|QUARANTINE_PATH|REPLACE_REF_BASE|GRAFT_FILE|SHALLOW_FILE|NO_REPLACE_OBJECTS|ICASE_PATHSPECS|GLOB_PATHSPECS|NOGLOB_PATHSPECS|LITERAL_PATHSPECS|DEFAULT_HASH|AUTHOR_\w+|COMMITTER_\w+|REFLOG_ACTION|INTERNAL_\w+|ATTR_\w+)$/;

/** Whether an environment variable of the user's reaches the git processes ghostcommit runs. */
export function gitSeesEnv(name: string): boolean {
  return !DROPPED_ENV.test(name);
}

let baseEnvCache: NodeJS.ProcessEnv | undefined;

/**
 * For a git process that writes thousands of loose objects (a plain directory's first
 * `update-index --add`, its `write-tree`): glibc hands each object's compression buffers back to
 * the system on free and takes them again for the next, and every page taken again faults anew.
 * Measured on 49,000 files: `update-index` 42 → 18 s, `write-tree` 1.5 → 0.6 s. Ignored where the
 * C library is not glibc. Not for status and the like, which it only made fault more.
 */
export const MANY_OBJECTS_ENV = {
  MALLOC_TRIM_THRESHOLD_: String(128 * 1024 * 1024),
  MALLOC_TOP_PAD_: String(16 * 1024 * 1024),
};

/**
 * glibc's malloc asks for transparent huge pages (`madvise`), which the kernel gives where THP is
 * "madvise" or "always". git's first touch of its cache entries and buffers is most of its page
 * faults, and a page fault is dear on virtual machines: on the 100k-file tree status's faults fell
 * from ~10,200 to ~3,000 and its CPU time by a third. A tunable the user set wins; glibc before
 * 2.35, other C libraries and kernels without THP ignore it.
 */
function withHugePages(tunables: string | undefined): string {
  if (!tunables) return "glibc.malloc.hugetlb=1";
  return /(^|:)glibc\.malloc\.hugetlb=/.test(tunables) ? tunables : `${tunables}:glibc.malloc.hugetlb=1`;
}

/**
 * Configuration every git process gets (above the user's files; a `-c` on a command line wins):
 * the user's `core.fsmonitor` hook never runs for ghostcommit, in whatever repository or index
 * git reads (a slow one held a restore's `check-ignore` for as long as it ran). A snapshot's
 * status that asks Watchman names its own hook with `-c`.
 */
const FORCED_CONFIG: [string, string][] = [["core.fsmonitor", "false"]];

/** `GIT_CONFIG_COUNT` and its keys and values: the forced configuration, then `pairs`. */
export function configEnv(pairs: [string, string][] = []): NodeJS.ProcessEnv {
  const all = [...FORCED_CONFIG, ...pairs];
  const env: NodeJS.ProcessEnv = { GIT_CONFIG_COUNT: String(all.length) };
  all.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/** The environment every git process starts from: the user's, minus anything that redirects git. */
export function baseGitEnv(): NodeJS.ProcessEnv {
  if (baseEnvCache) return baseEnvCache;
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!DROPPED_ENV.test(key)) env[key] = value;
  }
  Object.assign(env, {
    LC_ALL: "C",
    LANGUAGE: "C",
    GIT_PAGER: "cat",
    PAGER: "cat",
    GIT_TERMINAL_PROMPT: "0",
    GIT_LITERAL_PATHSPECS: "1",
    GIT_ADVICE: "0",
    GIT_AUTHOR_NAME: "ghostcommit",
    GIT_AUTHOR_EMAIL: "ghostcommit@localhost",
    GIT_COMMITTER_NAME: "ghostcommit",
    GIT_COMMITTER_EMAIL: "ghostcommit@localhost",
    GLIBC_TUNABLES: withHugePages(env.GLIBC_TUNABLES),
    ...configEnv(),
  });
  baseEnvCache = env;
  return env;
}
