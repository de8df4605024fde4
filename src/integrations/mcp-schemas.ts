import { z } from "zod";

/**
 * Output schemas of the MCP tools: the CLI's `--json` documents. Lists are wrapped as `{items}`
 * because structured content must be an object. Objects stay open (`looseObject`) so a field
 * added to a report later does not fail validation of the server's own answers.
 */

const id = z.string().describe("snapshot id (40 hex digits)");

/** Said by an answer whose longest lists were cut to fit the model's context (see mcp-answer.ts). */
export const truncated = z
  .object({
    leftOut: z.number().describe("entries left out, over all the lists cut"),
    lists: z.array(z.object({ list: z.string(), shown: z.number(), total: z.number() })),
    rest: z.string().describe("how to get what was left out"),
  })
  .optional();
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
  truncated,
});

export const listOutput = z.object({ items: z.array(z.looseObject(summary)), truncated });

export const diffOutput = z.object({
  items: z.array(
    z.looseObject({
      path: z.string(),
      status: z.enum(["added", "modified", "deleted", "type-changed"]),
      oldMode: z.string().optional(),
      newMode: z.string().optional(),
    }),
  ),
  truncated,
});

const outcome = {
  written: z.array(z.string()),
  deleted: z.array(z.string()),
  skipped,
  dryRun: z.boolean().optional(),
  truncated,
  head: z
    .object({
      atCapture: id,
      now: id.nullable(),
      branch: z.string().nullable(),
      branchesThere: z.array(z.string()),
    })
    .optional(),
};

export const restoreOutput = z.looseObject({ ...outcome, safety: id.nullable() });

export const sessionsOutput = z.object({
  items: z.array(z.looseObject({ session: z.string(), turns: z.number(), updatedAt: z.string() })),
  truncated,
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
  truncated,
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
