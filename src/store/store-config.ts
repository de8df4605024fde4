/**
 * Config of the private git directory. It wins over the user's global config, so nothing the
 * user set there (autocrlf, fsmonitor, file mode, renames, hooks, signing) changes a snapshot.
 */
export const STORE_CONFIG = `[core]
\trepositoryformatversion = 0
\tbare = false
\tfilemode = true
\tsymlinks = true
\tignorecase = false
\tprecomposeunicode = false
\tautocrlf = false
\teol = lf
\tsafecrlf = false
\tfsmonitor = false
\tuntrackedCache = false
\tsplitIndex = false
\tsharedRepository = 0600
\tsparseCheckout = false
\tquotepath = false
\tlogAllRefUpdates = false
\thooksPath = /nonexistent/ghostcommit-no-hooks
\tcheckStat = default
\ttrustctime = true
[index]
\tsparse = false
[feature]
\tmanyFiles = false
[gc]
\tauto = 0
\tautoDetach = false
\tpruneExpire = never
[maintenance]
\tauto = false
[status]
\tshowUntrackedFiles = all
\trenames = false
\tsubmoduleSummary = false
\trelativePaths = false
\tbranch = false
\tshowStash = false
\taheadBehind = false
[diff]
\trenames = false
\tnoprefix = false
\tmnemonicPrefix = false
\trelative = false
\tignoreSubmodules = all
\texternal =
[submodule]
\trecurse = false
[color]
\tui = false
[commit]
\tgpgSign = false
[pack]
\twriteBitmaps = false
[repack]
\twriteBitmaps = false
`;

/** Attributes that switch off every content conversion, so hashes are of the raw bytes. */
export const STORE_ATTRIBUTES = "* -text -crlf -filter -ident -working-tree-encoding\n";
