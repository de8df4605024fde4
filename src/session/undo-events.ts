import type { StoreContext } from "../store/context.js";
import { displayPath } from "../paths.js";
import { Journal } from "./journal.js";
import type { UndoEvent } from "../types.js";
import type { JournalRecord } from "./model.js";
import { journalRecords } from "./journal.js";
import { receivedRecords } from "./remote-sessions.js";

/**
 * The session's rewinds and redos since its last turn began, oldest first. The next prompt tells
 * the model about them; the turn it begins makes them old news, so each is told once.
 */
export async function undoneSinceLastBegin(engine: StoreContext, session: string): Promise<UndoEvent[]> {
  const journal = new Journal(engine.paths.sessionsDir, session);
  const records = journalRecords(journal.file)?.records ?? []; // none yet: nothing undone
  let start = 0;
  for (let i = records.length - 1; i >= 0; i--) {
    if (records[i].e === "begin") {
      start = i + 1;
      break;
    }
  }
  const rewinds = new Map<string, Extract<JournalRecord, { e: "rewind" }>>();
  const events: UndoEvent[] = [];
  const eventOf = new Map<string, number>();
  // Another machine's rewinds and redos (a fetch brought them) changed that machine's files.
  const received = start < records.length ? await receivedRecords(engine, session) : [];
  const elsewhere = (index: number) => received.some(([from, to]) => index >= from && index < to);
  records.forEach((record, index) => {
    if (record.e === "rewind") {
      rewinds.set(record.id, record);
      if (index < start || elsewhere(index)) return;
      // A rewind records its plan first and its outcome after (the same id): one event, the outcome.
      const told = eventOf.get(record.id);
      if (told === undefined) eventOf.set(record.id, events.push(undoEvent("rewind", record)) - 1);
      else events[told] = undoEvent("rewind", record);
    } else if (record.e === "redo" && index >= start && !elsewhere(index)) {
      const undone = rewinds.get(record.rewind);
      if (undone) events.push(undoEvent("redo", undone, record.deleted));
    }
  });
  return events;
}

/** A redo changes exactly the paths its rewind wrote or deleted, each back to its state before it. */
function undoEvent(
  kind: UndoEvent["kind"],
  rewind: Extract<JournalRecord, { e: "rewind" }>,
  redoDeleted: readonly string[] = [],
): UndoEvent {
  const files = [...rewind.written.map(([p]) => p), ...rewind.deleted].map(displayPath).sort();
  const deleted = (kind === "rewind" ? rewind.deleted : redoDeleted).map(displayPath).sort();
  const event: UndoEvent = { kind, turns: rewind.turns, files, deleted };
  // Only its plan is recorded (killed, or files it could not write): the files are half-way.
  if (kind === "rewind" && rewind.pending) event.unfinished = true;
  return event;
}
