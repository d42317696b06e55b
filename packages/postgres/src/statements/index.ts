// Every statement the store runs, built once per schema (as LangGraph's checkpoint-postgres
// sql.ts): one module per role, each statement a named `Sql` next to the type of its rows.
// The listing query (statements/listing.ts) and the window read (message-window.ts) are
// built per call from their options.
import { createHash } from 'node:crypto';
import { quoteIdent } from '../identifiers.js';
import { appendStatements } from './append.js';
import { commitStatements } from './commit.js';
import { eventStatements } from './events.js';
import { lineageStatements } from './lineage.js';
import { maintenanceStatements } from './maintenance.js';
import { routerStatements } from './router.js';
import { searchStatements } from './search.js';
import { sessionStatements } from './sessions.js';

/** The statements of one schema, by role. */
export interface Statements {
  /** The quoted schema name. */
  readonly s: string;
  /** The prepared-statement name of the window read (message-window.ts). */
  readonly windowName: string;
  /** The prepared-statement name of a listing query's text (list.ts), by its shape. */
  listName(text: string): string;
  readonly sessions: ReturnType<typeof sessionStatements>;
  readonly commit: ReturnType<typeof commitStatements>;
  readonly append: ReturnType<typeof appendStatements>;
  readonly lineage: ReturnType<typeof lineageStatements>;
  readonly router: ReturnType<typeof routerStatements>;
  readonly events: ReturnType<typeof eventStatements>;
  readonly maintenance: ReturnType<typeof maintenanceStatements>;
  readonly search: ReturnType<typeof searchStatements>;
}

/** The statements of `schema` (a checked schema name, see identifiers.ts). */
export function statementsFor(schema: string): Statements {
  const s = quoteIdent(schema);
  // Prepared-statement names must be unique per connection and ≤ 63 bytes: hash the schema.
  const tag = createHash('sha1').update(schema).digest('hex').slice(0, 12);
  return {
    s,
    windowName: `sk_load_window_${tag}`,
    listName: preparedNames(`sk_list_${tag}`),
    sessions: sessionStatements(s, {
      load: `sk_load_${tag}`,
      loadMessages: `sk_load_messages_${tag}`,
    }),
    commit: commitStatements(s, `sk_commit_${tag}`),
    append: appendStatements(s, tag),
    lineage: lineageStatements(s),
    router: routerStatements(s),
    events: eventStatements(s),
    maintenance: maintenanceStatements(s),
    search: searchStatements(s, tag),
  };
}

/**
 * Names for statements built whole whose text takes one of a bounded set of shapes (the
 * listing query: which filters, which order): `prefix` and a hash of the text, remembered
 * per text so that a call hashes nothing once its shape was seen.
 */
function preparedNames(prefix: string): (text: string) => string {
  const names = new Map<string, string>();
  return (text) => {
    let name = names.get(text);
    if (name === undefined) {
      name = `${prefix}_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
      names.set(text, name);
    }
    return name;
  };
}
