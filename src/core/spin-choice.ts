/** Epochs of a mode that its cost is taken from. */
const HISTORY = 3;
/** The longest wait between tries in epochs (the time cap comes long before). */
const MAX_EXPLORE_EVERY = 1 << 20;

/** The median of a few numbers (NaN of none; the lower middle of an even count). */
function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  if (xs.length === 1) return xs[0]!;
  const s = [...xs].sort((a, b) => a - b);
  return s[(s.length - 1) >> 1]!;
}

/**
 * Whether two threads that hand each other work should spin for each other
 * or sleep, chosen by what each costs where it runs. Spinning answers in a
 * few µs when each thread has a core; on a machine whose cores are taken by
 * other work, a spinning thread only takes CPU from the one it waits for,
 * and sleeping (a wake-up of tens of µs) is faster. So calls are timed in
 * epochs of `epoch` calls, each epoch in one mode. The mode whose recent
 * epochs cost less is kept (the median of its last three epochs' means, so
 * that one epoch hit by a collection or a preemption does not flip the
 * choice), spinning only when it is clearly faster (it costs CPU), and now
 * and then an epoch tries the other mode, so that a change of load is
 * noticed.
 *
 * A try costs what the worse mode costs, so tries back off while they keep
 * confirming the mode in force: the first comes `exploreEvery` epochs after
 * a choice, and each try that confirms it doubles the wait; a new choice
 * starts over at `exploreEvery`. The wait is capped in time, not in calls:
 * a try comes at the latest once the mode in force has run `maxExploreUs`
 * of calls since the last. So tries cost about the same share of the time
 * whichever mode is held (counted in epochs, a cap suited to sleeping's
 * slow calls had spinning try sleep every few milliseconds, and those tries
 * took a tenth of its time). A
 * try's epoch stands for its mode on its own: what that mode cost the try
 * before may be long out of date. (A load that makes the mode in force
 * slower is seen by its own epochs at once; only one that makes the other
 * mode faster waits for a try.)
 */
export class SpinChoice {
  /** The mode for the next calls. */
  spinning = true;
  /** Each mode's last epochs' mean call times, µs, oldest first (at most HISTORY). */
  private readonly recent: Record<'spin' | 'sleep', number[]> = { spin: [], sleep: [] };
  private calls = 0;
  private sum = 0;
  /** Epochs since the last try of the other mode (or since the mode changed). */
  private since = 0;
  /** The time the held mode's calls took since then, µs. */
  private sinceUs = 0;
  /** Epochs from one try to the next, now. */
  private every: number;
  /** Whether the epoch in progress tries the other mode. */
  private trying = false;

  constructor(
    private readonly epoch = 64,
    private readonly exploreEvery = 8,
    /** Spinning is kept only when its mean is below this share of sleeping's. */
    private readonly spinWorth = 0.8,
    /** The most time the held mode's calls take from one try to the next, µs. */
    private readonly maxExploreUs = 100_000,
  ) {
    this.every = exploreEvery;
  }

  /** One call took `us` (in the mode `spinning` said when it was made). */
  record(us: number): void {
    this.sum += us;
    if (++this.calls < this.epoch) return;
    const m = this.sum / this.calls;
    if (!this.trying) this.sinceUs += this.sum;
    this.sum = 0;
    this.calls = 0;
    const k = this.spinning ? 'spin' : 'sleep';
    // A try's epoch stands alone for its mode: what that mode cost when last tried may be long out of date.
    const r = this.recent[k];
    if (this.trying) r.length = 0;
    r.push(m);
    if (r.length > HISTORY) r.shift();
    const spin = median(this.recent.spin);
    const sleep = median(this.recent.sleep);
    if (Number.isNaN(spin) || Number.isNaN(sleep)) {
      // The first epochs try each mode in turn: the wait for tries starts once both are known.
      this.sinceUs = 0;
      this.spinning = Number.isNaN(spin);
      return;
    }
    const best = spin < sleep * this.spinWorth;
    const tried = this.trying;
    this.trying = false;
    // The mode that was in force before this epoch (a try ran the other one).
    const held = tried ? !this.spinning : this.spinning;
    if (best !== held) {
      // A new choice: tries start over at the shortest wait.
      this.every = this.exploreEvery;
      this.since = 0;
      this.sinceUs = 0;
    } else if (tried) this.every = Math.min(this.every * 2, MAX_EXPLORE_EVERY);
    if (++this.since >= this.every || this.sinceUs >= this.maxExploreUs) {
      this.since = 0;
      this.sinceUs = 0;
      this.trying = true;
      this.spinning = !best;
    } else this.spinning = best;
  }
}
