// The writes of a session's own history: commit and save, by the kit's plans.
import type { CommitInput, CommitResult, Session } from '@sessionkit/core';
import { extendsHistory, planCommit, planSave, searchTextsOf } from '@sessionkit/core/adapter';
import { type MemoryBackend, type MemoryRecord, putRecord } from './backend.js';
import { errors, getRecord, stateOf } from './codec.js';

/** `commit` of validated input: `planCommit`, then the record changed in place. */
export function commitRecord(
  backend: MemoryBackend,
  id: string,
  input: CommitInput<unknown>,
): CommitResult {
  const record = getRecord(backend, id);
  const recorded = record.operations.find(input.operationId);
  const plan = planCommit(errors, stateOf(record), input, recorded);
  if (plan.replayed) return plan.result;
  const change = plan.messages;
  if (change.replace !== undefined) {
    record.messages = change.replace;
    record.searchTexts = searchTextsOf(change.replace);
  } else {
    // In place: the cost grows with what is dropped and appended, never with what is kept.
    record.messages.length = change.keep;
    record.searchTexts.length = change.keep;
    for (const message of change.append) record.messages.push(message);
    for (const text of searchTextsOf(change.append)) record.searchTexts.push(text);
  }
  record.header = plan.state.header;
  record.lineage = plan.state.lineage;
  record.operations.record(plan.operationId, plan.result);
  putRecord(backend, record);
  return plan.result;
}

/** `save` of a validated session: `planSave` over the record, which it returns. */
export function saveRecord(backend: MemoryBackend, session: Session<unknown>): MemoryRecord {
  const record = getRecord(backend, session.id);
  const messages = session.messages;
  const extended = extendsHistory(record.messages, messages);
  const next = planSave(errors, stateOf(record), session, extended);
  record.header = next.header;
  record.lineage = next.lineage;
  record.messages = messages;
  record.searchTexts = searchTextsOf(messages);
  putRecord(backend, record);
  return record;
}
