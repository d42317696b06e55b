// The in-process reference store: no I/O, so no raw ceiling and no stored bytes.
import { MemoryStore } from '@sessionkit/memory';

export default {
  name: 'memory',
  ceiling: undefined,
  available: async () => true,
  async open() {
    const store = new MemoryStore();
    return { store, close: () => store.close() };
  },
};
