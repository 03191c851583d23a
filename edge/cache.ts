// A one-value cache with single-flight: while a load is in flight every caller shares it, so a
// burst of requests costs one upstream call. Failures are not cached (the next caller retries),
// but callers that arrived during the failed load all see that one failure.
export class SingleFlight<T> {
  #value: { at: number; value: T } | undefined;
  #inflight: Promise<T> | undefined;

  private readonly load: () => Promise<T>;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(load: () => Promise<T>, ttlMs: number, now: () => number = Date.now) {
    this.load = load;
    this.ttlMs = ttlMs;
    this.now = now;
  }

  get(): Promise<T> {
    const cached = this.#value;
    if (cached && this.now() - cached.at < this.ttlMs) return Promise.resolve(cached.value);
    this.#inflight ??= this.load()
      .then((value) => {
        this.#value = { at: this.now(), value };
        return value;
      })
      .finally(() => {
        this.#inflight = undefined;
      });
    return this.#inflight;
  }
}
