/**
 * `work`'s value once `first` has also settled: neither is left running when this returns or
 * throws. A failure of `first` (a flush to disk, say) wins over one of `work`.
 */
export async function settledWith<T>(first: Promise<void>, work: Promise<T>): Promise<T> {
  const [a, b] = await Promise.allSettled([first, work]);
  if (a.status === "rejected") throw a.reason;
  if (b.status === "rejected") throw b.reason;
  return b.value;
}

/** A promise and the function that resolves it (Node 20 has no `Promise.withResolvers`). */
export function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
