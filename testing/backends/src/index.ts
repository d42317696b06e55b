/**
 * `@sessionkit/test-backends` (private): a fresh, empty sessionkit store on each backend
 * for the tests of packages built on stores (bindings, tools). It starts what a backend
 * needs and reuses each adapter's own test support for it.
 */
export type { BackendName, TestBackend } from './backend.js';
export { BACKEND_NAMES, testBackend } from './backends.js';
export { commitRejection } from './commit-probe.js';
export { withCommit } from './commit-wrapper.js';
export {
  type BackendSuite,
  type DescribeOnBackendsOptions,
  describeOnBackends,
} from './describe-on-backends.js';
export { type CommitMatch, type LostReplyStore, withLostReplies } from './lost-reply.js';
