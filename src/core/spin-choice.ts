/**
 * Whether two threads that hand each other work should spin for each other
 * or sleep, chosen by what each costs where it runs. Spinning answers in a
 * few µs when each thread has a core; on a machine whose cores are taken by
 * other work, a spinning thread only takes CPU from the one it waits for,
 * and sleeping (a wake-up of tens of µs) is faster. So calls are timed in
 * epochs of `epoch` calls, each epoch in one mode; the mode with the lower
 * mean (of its recent epochs) is kept, spinning only when it is clearly
 * faster (it costs CPU), and every `exploreEvery`-th epoch tries the other
 * mode, so that a change of load is noticed.
 */
export class SpinChoice {
  /** The mode for the next calls. */
  spinning = true;
  private readonly mean = { spin: Number.NaN, sleep: Number.NaN };
  private calls = 0;
  private sum = 0;
  private epochs = 0;

  constructor(
    private readonly epoch = 64,
    private readonly exploreEvery = 8,
    /** Spinning is kept only when its mean is below this share of sleeping's. */
    private readonly spinWorth = 0.8,
  ) {}

  /** One call took `us` (in the mode `spinning` said when it was made). */
  record(us: number): void {
    this.sum += us;
    if (++this.calls < this.epoch) return;
    const m = this.sum / this.calls;
    this.sum = 0;
    this.calls = 0;
    const k = this.spinning ? 'spin' : 'sleep';
    this.mean[k] = Number.isNaN(this.mean[k]) ? m : (this.mean[k] + m) / 2;
    this.epochs++;
    if (Number.isNaN(this.mean.spin) || Number.isNaN(this.mean.sleep)) {
      this.spinning = Number.isNaN(this.mean.spin);
      return;
    }
    const best = this.mean.spin < this.mean.sleep * this.spinWorth;
    this.spinning = this.epochs % this.exploreEvery === 0 ? !best : best;
  }
}
