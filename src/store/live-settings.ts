import { statSync } from "node:fs";
import { loadSettings, type Settings, settingsFiles } from "../config.js";

/**
 * A workspace's settings, read again when one of their files changed since: a Workspace kept open
 * (a library user's, a server's) sees `"enabled": false` written after it was opened. A check
 * costs a stat per file, the files are read only when one changed.
 */
export class LiveSettings {
  private readonly files: string[];
  private stamp: string;
  private current: Settings;

  constructor(
    private readonly workspaceRoot: string,
    private readonly overrides: Partial<Settings>,
    private readonly repositoryRoot?: string,
  ) {
    this.files = settingsFiles(workspaceRoot, repositoryRoot);
    // Stamped before reading: a file changed in between is read again at the next check.
    this.stamp = stampOf(this.files);
    this.current = this.read();
  }

  /** The settings as last read. */
  get value(): Settings {
    return this.current;
  }

  /** The settings as their files say now. */
  refresh(): Settings {
    const stamp = stampOf(this.files);
    if (stamp === this.stamp) return this.current;
    this.current = this.read(); // a damaged file throws here, and is read again at the next check
    this.stamp = stamp;
    return this.current;
  }

  private read(): Settings {
    return loadSettings(this.workspaceRoot, this.overrides, this.repositoryRoot);
  }
}

/** What tells a file changed: its inode (a file replaced by a rename), size and times; "-" when absent. */
function stampOf(files: string[]): string {
  return files
    .map((file) => {
      try {
        const st = statSync(file, { bigint: true });
        return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
      } catch {
        return "-"; // absent or unreadable: reading it says which
      }
    })
    .join("|");
}
