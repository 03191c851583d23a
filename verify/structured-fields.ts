// Structured Field Values (RFC 8941, https://www.rfc-editor.org/rfc/rfc8941): the Dictionaries of
// the signature fields, Content-Digest and Log-Checkpoint.

type Bare = { t: 'int' | 'dec'; v: number } | { t: 'str' | 'tok'; v: string } | { t: 'bin'; v: Buffer } | { t: 'bool'; v: boolean };
type Params = [string, Bare][];
export interface Item { value: Bare; params: Params }
export interface InnerList { items: Item[]; params: Params }
export type Member = Item | InnerList;

const KEY = /[a-z*][a-z0-9_.*-]*/y;
const NUMBER = /-?([0-9]+)(?:\.([0-9]+))?/y;
const TOKEN = /[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/y;
const BYTES = /:([A-Za-z0-9+/=]*):/y;

/** RFC 8941 §4.2.2: a Dictionary, members in order; throws SyntaxError on anything else. */
export function parseDictionary(input: string): Map<string, Member> {
  const s = input;
  let i = 0;
  const bad = (): never => { throw new SyntaxError('not a structured-field dictionary'); };
  const sticky = (re: RegExp): RegExpExecArray => { re.lastIndex = i; const m = re.exec(s) ?? bad(); i = re.lastIndex; return m; };
  const spaces = () => { while (s[i] === ' ') i++; };
  const bare = (): Bare => {
    const c = s[i] ?? '';
    if (c === '-' || (c >= '0' && c <= '9')) {
      const m = sticky(NUMBER);
      const [whole, int, frac] = [m[0], m[1]!, m[2]];
      if (frac === undefined ? int.length > 15 : int.length > 12 || frac.length > 3) bad();
      return { t: frac === undefined ? 'int' : 'dec', v: Number(whole) };
    }
    if (c === '"') {
      let out = '';
      for (i++; ; i++) {
        const ch = s[i] ?? bad();
        if (ch === '"') { i++; return { t: 'str', v: out }; }
        if (ch === '\\') { i++; const escaped = s[i]; if (escaped !== '"' && escaped !== '\\') bad(); out += escaped; continue; }
        if (ch < ' ' || ch > '~') bad();
        out += ch;
      }
    }
    if (c === ':') return { t: 'bin', v: Buffer.from(sticky(BYTES)[1]!, 'base64') };
    if (c === '?') { const b = s[i + 1]; if (b !== '0' && b !== '1') bad(); i += 2; return { t: 'bool', v: b === '1' }; }
    if (/[A-Za-z*]/.test(c)) return { t: 'tok', v: sticky(TOKEN)[0] };
    return bad();
  };
  const params = (): Params => {
    const out: Params = [];
    while (s[i] === ';') {
      i++;
      spaces();
      const name = sticky(KEY)[0];
      let value: Bare = { t: 'bool', v: true };
      if (s[i] === '=') { i++; value = bare(); }
      const at = out.findIndex(([n]) => n === name);
      if (at >= 0) out[at] = [name, value]; else out.push([name, value]);
    }
    return out;
  };
  const item = (): Item => ({ value: bare(), params: params() });
  const member = (): Member => {
    if (s[i] !== '(') return item();
    i++;
    const items: Item[] = [];
    for (;;) {
      spaces();
      if (s[i] === ')') { i++; return { items, params: params() }; }
      items.push(item());
      if (s[i] !== ' ' && s[i] !== ')') bad();
    }
  };
  const members = new Map<string, Member>();
  spaces();
  while (i < s.length) {
    const name = sticky(KEY)[0];
    if (s[i] === '=') { i++; members.set(name, member()); } else members.set(name, { value: { t: 'bool', v: true }, params: params() });
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (i >= s.length) break;
    if (s[i] !== ',') bad();
    i++;
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (i >= s.length) bad();
  }
  return members;
}

/** RFC 8941 §4.1: the strict serializations. */
export function serializeBare(b: Bare): string {
  switch (b.t) {
    case 'int': return String(b.v);
    case 'dec': { const r = Math.round(b.v * 1000) / 1000; return Number.isInteger(r) ? `${r}.0` : String(r); }
    case 'str': return `"${b.v.replace(/[\\"]/g, '\\$&')}"`;
    case 'tok': return b.v;
    case 'bin': return `:${b.v.toString('base64')}:`;
    case 'bool': return b.v ? '?1' : '?0';
  }
}
export const serializeParams = (params: Params): string => params.map(([name, v]) => (v.t === 'bool' && v.v ? `;${name}` : `;${name}=${serializeBare(v)}`)).join('');
export const serializeItem = (item: Item): string => serializeBare(item.value) + serializeParams(item.params);
export const serializeMember = (m: Member): string => ('items' in m ? `(${m.items.map(serializeItem).join(' ')})${serializeParams(m.params)}` : serializeItem(m));
export const serializeDictionary = (d: Map<string, Member>): string =>
  [...d].map(([name, m]) => (!('items' in m) && m.value.t === 'bool' && m.value.v ? name + serializeParams(m.params) : `${name}=${serializeMember(m)}`)).join(', ');
export const param = (params: Params, name: string): Bare | undefined => params.find(([n]) => n === name)?.[1];
