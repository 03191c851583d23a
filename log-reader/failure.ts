// How a check fails: one sentence each, for the one reading the output.

/** A check that failed; its message is the sentence printed. */
export class Failure extends Error {}
export const fail = (sentence: string): never => { throw new Failure(sentence); };

/** A difference that caches explain (an answer, or the checkpoint, read before the other moved): read both again. */
export class Stale extends Error {}

/** The failures of checks that do not depend on each other, in the order they ran: each keeps its own sentence. */
export class Failures {
  readonly sentences: string[] = [];

  /** Runs one check; its failure is kept and the run goes on. */
  async check<T>(run: () => T | Promise<T>): Promise<T | undefined> {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof Failure)) throw error;
      this.sentences.push(error.message);
      return undefined;
    }
  }

  add(sentence: string): void {
    this.sentences.push(sentence);
  }

  /** Ends the run with every sentence kept, one a line: after a check the rest depends on failed. */
  stop(): never {
    return fail(this.sentences.join('\n'));
  }

  /** Ends the run as stop() does if any check failed. */
  end(): void {
    if (this.sentences.length) this.stop();
  }
}
