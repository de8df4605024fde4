import { z } from "zod";

/**
 * Output schemas of the MCP tools: the CLI's `--json` documents. Lists are wrapped as `{items}`
 * because structured content must be an object. Objects stay open (`looseObject`) so a field
 * added to a report later does not fail validation of the server's own answers.
 */

const id = z.string().describe("snapshot id (40 hex digits)");
const skipped = z.array(
  z.looseObject({
    path: z.string(),
    reason: z.enum(["permission", "io", "excluded", "not-captured"]),
    errno: z.string().optional(),
  }),
);

const summary = {
  id,
  createdAt: z.string(),
  message: z.string(),
  kind: z.enum(["snapshot", "safety", "turn-before", "turn-after"]),
  session: z.string().optional(),
  turn: z.string().optional(),
};

export const snapshotOutput = z.looseObject({
  ...summary,
  parent: z.string().nullable(),
  fileCount: z.number(),
  excluded: z.array(
    z.looseObject({
      path: z.string(),
      reason: z.string(),
      bytes: z.number().optional(),
      files: z.number().optional(),
    }),
  ),
});

export const listOutput = z.object({ items: z.array(z.looseObject(summary)) });

export const diffOutput = z.object({
  items: z.array(
    z.looseObject({
      path: z.string(),
      status: z.enum(["added", "modified", "deleted", "type-changed"]),
      oldMode: z.string().optional(),
      newMode: z.string().optional(),
    }),
  ),
});

const outcome = {
  written: z.array(z.string()),
  deleted: z.array(z.string()),
  skipped,
  dryRun: z.boolean().optional(),
};

export const restoreOutput = z.looseObject({ ...outcome, safety: id.nullable() });

export const sessionsOutput = z.object({
  items: z.array(z.looseObject({ session: z.string(), turns: z.number(), updatedAt: z.string() })),
});

export const logOutput = z.looseObject({
  session: z.string(),
  items: z.array(
    z.looseObject({
      turn: z.string(),
      prompt: z.string(),
      before: id,
      after: id.nullable(),
      changed: z.array(z.string()),
      state: z.enum(["open", "done", "rewound"]),
      startedAt: z.string(),
      endedAt: z.string().optional(),
      abandonedAt: z.string().optional(),
    }),
  ),
});

export const rewindOutput = z.looseObject({
  session: z.string(),
  to: z.string(),
  rewoundTurns: z.array(z.string()),
  ...outcome,
  safety: id.nullable(),
});

export const redoOutput = z.looseObject({
  session: z.string(),
  restoredTurns: z.array(z.string()),
  ...outcome,
  safety: id.nullable().optional(),
});
