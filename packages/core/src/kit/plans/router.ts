// The router's keys: one encoding of a binding's and a follow target's identity, so every
// adapter tells tuples apart the same way (no separator can be forged inside a key part).

/** The key of the binding `(channel, chatKey, thread)`: its JSON array text. Pure. */
export function bindingKey(channel: string, chatKey: string, thread: string): string {
  return JSON.stringify([channel, chatKey, thread]);
}

/** The key of the follow target of `(channel, chatKey)`: its JSON array text. Pure. */
export function followKey(channel: string, chatKey: string): string {
  return JSON.stringify([channel, chatKey]);
}
