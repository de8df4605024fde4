import { promises as fs } from "node:fs";
import { spawnText } from "./spawn-text.js";

/**
 * The processes above this one, nearest first, each as `pid:start` (its start time, so a pid the
 * system gave again to another process is not taken for the first): the agent that ran a hook
 * (through its shell) or started the MCP server is among them. Process 1 and those above it are
 * left out: every process has them. Empty when the system does not say.
 */
export async function processAncestors(max = 8): Promise<string[]> {
  const fromProc = await ancestorsFromProc(max);
  return fromProc ?? (await ancestorsFromPs(max));
}

/** Linux: each process's `/proc/<pid>/stat` names its parent and its start time (field 22). */
export async function ancestorsFromProc(max: number): Promise<string[] | null> {
  const out: string[] = [];
  let pid = process.ppid;
  while (pid > 1 && out.length < max) {
    let stat: string;
    try {
      stat = await fs.readFile(`/proc/${pid}/stat`, "latin1");
    } catch {
      return out.length > 0 ? out : null; // no /proc here, or the parent exited meanwhile
    }
    // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const [parent, start] = [Number(fields[1]), fields[19]];
    if (!Number.isInteger(parent) || start === undefined) return null;
    out.push(`${pid}:${start}`);
    pid = parent;
  }
  return out;
}

/**
 * Elsewhere (macOS, the BSDs): one `ps` listing every process's parent and start time, in one
 * locale and time zone, so that the hook (often run with a bare environment) and the MCP server
 * spell a start time alike.
 */
export async function ancestorsFromPs(max: number): Promise<string[]> {
  const env = { PATH: process.env.PATH || "/usr/bin:/bin", LC_ALL: "C", TZ: "UTC" };
  const listing = await spawnText("ps", ["-A", "-o", "pid=,ppid=,lstart="], 2000, env);
  if (listing === null) return [];
  const rows = new Map<number, { parent: number; start: string }>();
  for (const line of listing.split("\n")) {
    const match = /^\s*(\d+)\s+(\d+)\s+(.+?)\s*$/.exec(line);
    if (match) rows.set(Number(match[1]), { parent: Number(match[2]), start: match[3].replace(/\s+/g, "-") });
  }
  const out: string[] = [];
  for (let pid = process.ppid; pid > 1 && out.length < max; ) {
    const row = rows.get(pid);
    if (!row) break;
    out.push(`${pid}:${row.start}`);
    pid = row.parent;
  }
  return out;
}
