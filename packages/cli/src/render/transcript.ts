// A session rendered for people: a header, then each message with its role, text, tool
// calls and tool results, and a marker where each branch leaves the transcript.
import type { Session, SessionSummary } from '@sessionkit/core';
import { oneLine, paint, type Style, shortDate } from '../runtime/output.js';

const ROLE_STYLE: Record<string, Style> = {
  user: 'green',
  assistant: 'blue',
  system: 'yellow',
  tool: 'magenta',
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The readable text of a message's `content` (a string or content parts). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === undefined ? '' : JSON.stringify(content);
  return content
    .map((part) => {
      if (!isObject(part)) return JSON.stringify(part);
      if (part.type === 'text' && typeof part.text === 'string') return part.text;
      const label = [part.type, part.mediaType, part.name].filter((x) => typeof x === 'string');
      return `[${label.join(' ')}]`;
    })
    .join('\n');
}

/** The header lines: title, id, folder, model, counters, dates, tree position. */
export function renderHeader(session: Session<unknown>, color: boolean): string[] {
  const title = session.title === '' ? '(untitled)' : session.title;
  const facts = [
    session.folder && `folder ${session.folder}`,
    session.model && `model ${session.model}${session.provider ? ` (${session.provider})` : ''}`,
    `status ${session.status}`,
    session.mode && `mode ${session.mode}`,
    `${session.messages.length} messages`,
    `${session.turnCount} turns`,
    `${session.tokenCount} tokens`,
    `$${session.costUsd.toFixed(4)}`,
  ].filter((f) => typeof f === 'string' && f !== '');
  const lines = [
    `${paint(color, 'bold', title)}  ${paint(color, 'cyan', session.id)}`,
    facts.join(' · '),
    paint(
      color,
      'dim',
      `created ${shortDate(session.createdAt)} · updated ${shortDate(session.updatedAt)} · revision ${session.revision}${session.archivedAt ? ` · archived ${shortDate(session.archivedAt)}` : ''}`,
    ),
  ];
  if (session.parentId) {
    lines.push(
      `branch of ${paint(color, 'cyan', session.parentId)}${session.branchedAtTurn !== undefined ? ` at message ${session.branchedAtTurn}` : ''}`,
    );
  }
  const meta = Object.entries(session.metadata);
  if (meta.length > 0) {
    lines.push(
      paint(color, 'dim', `metadata ${meta.map(([k, v]) => `${k}=${oneLine(v, 40)}`).join(' ')}`),
    );
  }
  return lines;
}

/** One message: a rule with its number and role, its text, its tool calls. */
export function renderMessage(message: unknown, index: number, color: boolean): string[] {
  if (!isObject(message) || typeof message.role !== 'string') {
    return [paint(color, 'dim', `── #${index + 1} ──`), JSON.stringify(message)];
  }
  const role = message.role;
  const extra = [
    typeof message.name === 'string' ? message.name : '',
    typeof message.toolCallId === 'string' ? `answers ${message.toolCallId}` : '',
  ].filter((x) => x !== '');
  const title = `── #${index + 1} ${role}${extra.length ? ` (${extra.join(', ')})` : ''} `;
  const lines = [paint(color, ROLE_STYLE[role] ?? 'bold', title.padEnd(48, '─'))];
  const text = contentText(message.content);
  if (text !== '') lines.push(text);
  if (Array.isArray(message.toolCalls)) {
    for (const call of message.toolCalls) {
      if (!isObject(call)) continue;
      const args = oneLine(JSON.stringify(call.arguments ?? null), 160);
      lines.push(
        paint(color, 'magenta', `  → ${String(call.name)}(${args})`) +
          paint(color, 'dim', typeof call.id === 'string' ? `  [${call.id}]` : ''),
      );
    }
  }
  return lines;
}

/**
 * The whole transcript: header, messages from `offset` on, and after message `k` a marker
 * for each branch that starts there (`branchedAtTurn = k`).
 */
export function renderTranscript(
  session: Session<unknown>,
  branches: readonly SessionSummary[],
  color: boolean,
  offset = 0,
): string {
  const lines = renderHeader(session, color);
  const at = new Map<number, SessionSummary[]>();
  for (const b of branches) {
    const k = b.branchedAtTurn ?? session.messages.length;
    at.set(k, [...(at.get(k) ?? []), b]);
  }
  const marker = (k: number) => {
    for (const b of at.get(k) ?? []) {
      lines.push(
        paint(color, 'magenta', `   ⎇ branch ${b.id}`) +
          ` ${b.title ? `"${oneLine(b.title, 50)}" ` : ''}continues from here (${b.messageCount} messages)`,
      );
    }
  };
  if (offset > 0)
    lines.push('', paint(color, 'dim', `… ${offset} earlier messages (omit --last to see them)`));
  else marker(0);
  session.messages.forEach((message, i) => {
    if (i < offset) return;
    lines.push('', ...renderMessage(message, i, color));
    marker(i + 1);
  });
  if (session.messages.length === 0) lines.push('', paint(color, 'dim', '(no messages)'));
  return `${lines.join('\n')}\n`;
}
