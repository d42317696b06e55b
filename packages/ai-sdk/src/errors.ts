// The binding's errors: sessionkit errors whose messages start with `[sessionkit/ai-sdk]`,
// so a caller branches on `code` as with any store.
import { errorsFor } from '@sessionkit/core/adapter';

export const errors = errorsFor('ai-sdk');
