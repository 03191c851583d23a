// Answers kept for a request asked again while the figures its answer read are unchanged. A JSON-RPC
// answer of the MCP or A2A SDK is a function of the request and of the figures its handler read, up
// to a few values of its own (the request's id, fresh message ids): the text made for an earlier
// request, with those values put in place, is the text the SDK would make now. Polling agents ask
// the same few things over and over; each answer is made once per change of the figures it read.
import type { Figures } from './figures.ts';

type FigureName = keyof Figures;

/** A kept answer as it goes out again, always with HTTP 200: its text and its headers (names in lower case). */
export interface KeptAnswer {
  body: string;
  headers: [string, string][];
}

/** One request header as the Fetch API's `Headers.get` reads it (repeats joined by ", "), or null. */
export type HeaderOf = (name: string) => string | null;

/** Distinct requests kept; the oldest goes first. Enough for every tool, skill and argument an agent polls. */
const MEMO_SIZE = 64;
/**
 * The characters all kept answers may hold together: a few whole track records. Requests that differ
 * only in words (each asking for the history) cannot make one edge hold 64 copies of it.
 */
const MEMO_CHARS = 4 * 1024 * 1024;

/** An answer's text cut where its own values stand: parts[0] value[0] parts[1] … value[n-1] parts[n]. */
export interface Template<Hole extends string> {
  parts: string[];
  holes: Hole[];
}

/**
 * `text` cut at each hole's exact text, or undefined when any of them does not occur exactly once
 * (then where the value stands is not known for certain, and the answer is not kept).
 */
export function cutTemplate<Hole extends string>(text: string, holes: Record<Hole, string>): Template<Hole> | undefined {
  const found: [number, Hole][] = [];
  for (const [hole, needle] of Object.entries(holes) as [Hole, string][]) {
    const at = text.indexOf(needle);
    if (at < 0 || text.indexOf(needle, at + 1) >= 0) return undefined;
    found.push([at, hole]);
  }
  found.sort((a, b) => a[0] - b[0]);
  const parts: string[] = [];
  let from = 0;
  for (const [at, hole] of found) {
    if (at < from) return undefined;
    parts.push(text.slice(from, at));
    from = at + holes[hole].length;
  }
  parts.push(text.slice(from));
  return { parts, holes: found.map(([, hole]) => hole) };
}

/** How many characters a template holds. */
export const templateChars = (template: Template<string>) => template.parts.reduce((sum, part) => sum + part.length, 0);

/** The template's text with each hole's value in place. */
export function fillTemplate<Hole extends string>(template: Template<Hole>, values: Record<Hole, string>): string {
  let text = template.parts[0]!;
  template.holes.forEach((hole, i) => { text += values[hole] + template.parts[i + 1]!; });
  return text;
}

export interface AnswerMemo<Answer> {
  /** The answer kept under `key`, when every figure it read still has the ETag it had. */
  find(key: string): Promise<Answer | undefined>;
  /**
   * Figures that note what is read through them, and `keep`, which stores an answer made with them
   * under `key`, unless one of them could not be read.
   */
  recording(figures: Figures): { figures: Figures; keep(key: string, answer: Answer): void };
}

/** A memo of answers, each weighing `charsOf` characters. */
export function createAnswerMemo<Answer>(figures: Figures, charsOf: (answer: Answer) => number): AnswerMemo<Answer> {
  const kept = new Map<string, { read: [FigureName, string][]; answer: Answer; chars: number }>();
  let chars = 0;
  const drop = (key: string) => {
    chars -= kept.get(key)?.chars ?? 0;
    kept.delete(key);
  };

  const current = async (read: [FigureName, string][]) => {
    for (const [name, etag] of read) {
      const now = await figures[name]().catch(() => undefined);
      if (now?.etag !== etag) return false;
    }
    return true;
  };

  return {
    async find(key) {
      const entry = kept.get(key);
      return entry && (await current(entry.read)) ? entry.answer : undefined;
    },

    recording(source) {
      const read: [FigureName, string][] = [];
      let failed = false;
      const noted = <K extends FigureName>(name: K) => (() => source[name]().then(
        (value) => { read.push([name, value.etag]); return value; },
        (error: unknown) => { failed = true; throw error; },
      )) as Figures[K];
      // Typed, not cast: a figure added to Figures and not noted here does not compile.
      const recorded: Figures = { stats: noted('stats'), history: noted('history'), health: noted('health'), log: noted('log') };
      return {
        figures: recorded,
        keep(key, answer) {
          const size = charsOf(answer);
          if (failed || size > MEMO_CHARS) return;
          drop(key);
          // The oldest go first, until the new one fits.
          while (kept.size >= MEMO_SIZE || chars + size > MEMO_CHARS) drop(kept.keys().next().value!);
          kept.set(key, { read, answer, chars: size });
          chars += size;
        },
      };
    },
  };
}
