/** A chain that keeps a ZeroMQ socket's sends one at a time (it allows no more). */
export function sendChain(send: (frames: Buffer[]) => Promise<void>): (frames: Buffer[]) => Promise<void> {
  let chain: Promise<void> = Promise.resolve();
  return (frames) => {
    const next = chain.then(() => send(frames));
    chain = next.catch(() => undefined);
    return next;
  };
}
