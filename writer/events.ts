// The NDJSON import format: one event per line. Parsing checks every field the
// database would reject (and a few it cannot see), so a bad line is reported by line number and
// field before anything is written.
import { z } from 'zod';
import { isCalendarDate, utcDate } from '../contract/dates.ts';

// An offset is required: a timestamp without one would depend on the importer's time zone.
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
const INT4_MAX = 2_147_483_647;

/** One field of an event: how it is checked, and how the help writes its value. */
interface Field<S extends z.ZodType> {
  schema: S;
  shown: string;
}
const field = <S extends z.ZodType>(schema: S, shown: string): Field<S> => ({ schema, shown });

const date = field(z.string().refine(isCalendarDate, { message: 'must be a calendar date YYYY-MM-DD' }), '"YYYY-MM-DD"');
const at = field(z.string()
  .refine((s) => ISO.test(s) && !Number.isNaN(Date.parse(s)), { message: 'must be an ISO 8601 timestamp with a time zone (e.g. 2026-05-01T12:00:00Z)' })
  .transform((s) => new Date(s)), 'ISO');
/**
 * No figure of one account comes near this many dollars; a larger one is a unit or typing mistake
 * (cents for dollars, a stray exponent), not a payout.
 */
export const MAX_USD = 1e11;
const amountSchema = z.number().finite()
  .min(-MAX_USD, { message: `must lie within ±${MAX_USD.toExponential()} USD` })
  .max(MAX_USD, { message: `must lie within ±${MAX_USD.toExponential()} USD` });
const amount = field(amountSchema, 'n');
const nonNegative = field(amountSchema.nonnegative({ message: 'must be 0 or more' }), 'n');
const count = field(z.number().int({ message: 'must be a whole number' }).nonnegative({ message: 'must be 0 or more' }).max(INT4_MAX), 'int');

/**
 * The import format: every event type and its fields besides `type`, in the order the help lists
 * them. The parser, the types, the help and the error messages are made from this one table.
 */
export const EVENT_FIELDS = {
  payout: { date, usd: nonNegative },
  accrual: { at, usd: nonNegative, markets: count },
  breadth: { at, markets_quoted_24h: count },
  capital: { at, cash_usd: nonNegative, inventory_usd: nonNegative, positions: count },
  trading_cost: { date, usd: amount },
  heartbeat: { at },
} as const;

type Fields = typeof EVENT_FIELDS;
export type EventType = keyof Fields;
export const EVENT_TYPES = Object.keys(EVENT_FIELDS) as EventType[];

/** An event's fields as parsed (timestamps as Dates), without its type. */
export type EventFields<K extends EventType> = { -readonly [F in keyof Fields[K]]: Fields[K][F] extends Field<infer S> ? z.output<S> : never };
export type EventOf<K extends EventType> = { type: K } & EventFields<K>;
export type ImportEvent = { [K in EventType]: EventOf<K> }[EventType];

const eventSchemas = new Map(EVENT_TYPES.map((type) => [type, z.strictObject({
  type: z.literal(type),
  ...Object.fromEntries(Object.entries(EVENT_FIELDS[type]).map(([name, f]) => [name, (f as Field<z.ZodType>).schema])),
})]));

/** An event as one line of the import, with a placeholder for each value: {"type":"payout","date":"YYYY-MM-DD","usd":n}. */
export function eventFormat(type: EventType): string {
  const fields = Object.entries(EVENT_FIELDS[type]).map(([name, f]) => `,"${name}":${(f as Field<z.ZodType>).shown}`);
  return `{"type":"${type}"${fields.join('')}}`;
}

/** The digits and exponent of a decimal number written in JSON, without leading or trailing zeros. */
function decimalParts(text: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  let digits = (whole! + fraction).replace(/^0+/, '');
  let scale = Number(exponent) - fraction.length;
  while (digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    scale++;
  }
  return digits === '' ? '0' : `${sign}${digits}e${scale}`;
}

const LONG_DIGIT_RUN = /(?:\d\.?){16}/;

/**
 * JSON.parse turns every number into a double, silently rounding one written with more digits
 * than a double keeps (about 17 significant). The reviver sees each number's source text
 * (JSON.parse source text access, https://tc39.es/proposal-json-parse-with-source/) and reports
 * the first number whose value is not exactly what was written.
 */
function parseExactly(text: string): { value: unknown; inexact?: { field: string; source: string } } {
  // A number of at most 15 significant digits always survives; only a line with a longer digit run
  // takes the slower path that looks at each number's source.
  if (!LONG_DIGIT_RUN.test(text)) return { value: JSON.parse(text) as unknown };
  let inexact: { field: string; source: string } | undefined;
  const value: unknown = JSON.parse(text, function (this: unknown, key: string, parsed: unknown, context?: { source?: string }) {
    if (typeof parsed === 'number' && context?.source !== undefined && !inexact && decimalParts(context.source) !== decimalParts(String(parsed))) {
      inexact = { field: key, source: context.source };
    }
    return parsed;
  });
  return { value, inexact };
}

/** What an import accepts, beyond the shape of each event. */
export interface ImportBounds {
  /** The database's time: what lies after it is in the future. */
  now: Date;
  /** No date or timestamp before 1 January of this year (UTC). */
  earliestYear: number;
}

/** Observations may run slightly ahead of our clock (skew), not more. */
const FUTURE_SLACK_MS = 5 * 60_000;

export class LineError extends Error {
  readonly line: number;
  constructor(line: number, reason: string) {
    super(`line ${line}: ${reason}`);
    this.line = line;
  }
}

/** Parses one line, within the bounds. */
export function parseEvent(text: string, lineNo: number, { now, earliestYear }: ImportBounds): ImportEvent {
  let value: unknown;
  let inexact: { field: string; source: string } | undefined;
  try {
    ({ value, inexact } = parseExactly(text));
  } catch (error) {
    throw new LineError(lineNo, `not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LineError(lineNo, 'must be a JSON object');
  const type = (value as { type?: unknown }).type;
  const schema = eventSchemas.get(type as EventType);
  if (!schema) throw new LineError(lineNo, `type: must be one of ${EVENT_TYPES.join(', ')} (got ${JSON.stringify(type ?? null)})`);
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : issue.path.join('.') || 'event';
    const reason = issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message;
    throw new LineError(lineNo, `${field}: ${reason}`);
  }
  if (inexact) {
    throw new LineError(lineNo, `${inexact.field}: ${inexact.source} has more significant digits than can be kept exactly (at most 15 are always safe); round it`);
  }
  const event = parsed.data as ImportEvent;
  const earliest = `${String(earliestYear).padStart(4, '0')}-01-01`;
  if ('date' in event && event.date < earliest) throw new LineError(lineNo, `date: ${event.date} lies before ${earliest} (IMPORT_EARLIEST_YEAR)`);
  if ('at' in event && event.at.toISOString() < earliest) {
    throw new LineError(lineNo, `at: ${event.at.toISOString()} lies before ${earliest} (IMPORT_EARLIEST_YEAR)`);
  }
  const today = utcDate(now);
  if ('date' in event && event.date > today) throw new LineError(lineNo, `date: ${event.date} lies after today (UTC)`);
  if ('at' in event && event.at.getTime() > now.getTime() + FUTURE_SLACK_MS) {
    throw new LineError(lineNo, `at: ${event.at.toISOString()} lies in the future`);
  }
  return event;
}
