// What a run was asked to check, and which log keys it trusts.
import type { NoteKey } from '../log-reader/notes.ts';

export interface Options { site: URL; siteGiven: boolean; stateFile: string | undefined; policyFile: string | undefined; vkey: string | undefined; receiptFile: string | undefined; strict: boolean }
/** The log keys trusted, where they came from, and the keys they replaced (for archived checkpoints). */
export interface Trust { keys: NoteKey[]; source: string; previous: NoteKey[] }
