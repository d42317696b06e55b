/**
 * Groups an async sequence into arrays of `size` (the last may be shorter), so that a
 * batch can be worked on concurrently while memory stays bounded by the batch.
 */
export async function* inBatches<T>(items: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const item of items) {
    batch.push(item);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * Runs `work` on every item at once and waits for all of them, also when one fails (so
 * nothing is still writing when the caller reports the failure), then throws the first
 * failure or returns the results in order.
 */
export async function settleAll<T, R>(
  items: readonly T[],
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const settled = await Promise.allSettled(items.map(work));
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return settled.map((s) => (s as PromiseFulfilledResult<R>).value);
}
