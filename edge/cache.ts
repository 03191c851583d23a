// A one-value cache with single-flight: while a load is in flight every caller shares it, so a
// burst of requests costs one upstream call. A value past its TTL but within its stale window is
// still answered at once while one load refreshes it in the background (RFC 5861's
// stale-while-revalidate), so no caller waits for a refresh; a refresh that fails keeps the old
// value until the window ends. Past the window, or with nothing loaded yet, callers wait for the
// load, and a failure reaches every caller that waited for it (nothing failed is cached).
export class SingleFlight<T> {
  #value: { at: number; value: T } | undefined;
  #inflight: Promise<T> | undefined;

  private readonly load: () => Promise<T>;
  private readonly ttlMs: number;
  private readonly staleMs: number;
  private readonly now: () => number;

  constructor(load: () => Promise<T>, ttlMs: number, options: { staleMs?: number; now?: () => number } = {}) {
    this.load = load;
    this.ttlMs = ttlMs;
    this.staleMs = options.staleMs ?? 0;
    this.now = options.now ?? Date.now;
  }

  get(): Promise<T> {
    const cached = this.#value;
    const age = cached ? this.now() - cached.at : Infinity;
    if (cached && age < this.ttlMs) return Promise.resolve(cached.value);
    const loading = this.#refresh();
    if (cached && age < this.ttlMs + this.staleMs) {
      // The caller has its answer; a failed refresh is tried again by the next one.
      loading.catch(() => {});
      return Promise.resolve(cached.value);
    }
    return loading;
  }

  #refresh(): Promise<T> {
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

/**
 * Shares loads among concurrent callers, never answering one with a load that began before it asked:
 * a caller that comes while a load is under way waits for the next, which starts as that one ends and
 * serves every caller that came meanwhile. Nothing is kept once a load has answered its callers.
 */
export class NextLoad<T> {
  #running: Promise<T> | undefined;
  #next: Promise<T> | undefined;

  private readonly load: () => Promise<T>;

  constructor(load: () => Promise<T>) {
    this.load = load;
  }

  get(): Promise<T> {
    if (!this.#running) return this.#start();
    this.#next ??= this.#running.then(() => {}, () => {}).then(() => {
      this.#next = undefined;
      return this.#start();
    });
    return this.#next;
  }

  #start(): Promise<T> {
    const running = this.load();
    this.#running = running;
    running.then(() => {}, () => {}).then(() => {
      if (this.#running === running) this.#running = undefined;
    });
    return running;
  }
}
