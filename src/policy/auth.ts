import { createHash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';

export interface TokenEntry {
  subject: string;
  /** Lowercase hex sha256 of the token; the raw token is never stored. */
  token_sha256: string;
}

const SHA256_HEX_RE = /^[0-9a-fA-F]{64}$/;
/** RFC 6750: the scheme is case-insensitive, then one or more spaces, then the token. */
const BEARER_RE = /^bearer +(\S+)$/i;

/** Lowercase hex sha256 of a token, as stored in the tokens file. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Pure: validated entries from parsed JSON, or throws with a one-line reason. */
export function parseTokenEntries(data: unknown, label: string): TokenEntry[] {
  if (!Array.isArray(data)) {
    throw new Error(`${label} must be a JSON array of {"subject", "token_sha256"} objects`);
  }
  if (data.length === 0) throw new Error(`${label} holds no tokens, so nobody could authenticate`);
  const seen = new Map<string, number>();
  return data.map((entry: unknown, i): TokenEntry => {
    const at = `${label}: entry ${i}`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw new Error(`${at} is not an object`);
    }
    const { subject, token_sha256: hash } = entry as Record<string, unknown>;
    if (typeof subject !== 'string' || subject.trim() === '') {
      throw new Error(`${at} has no subject (a non-empty string)`);
    }
    if (typeof hash !== 'string' || !SHA256_HEX_RE.test(hash)) {
      throw new Error(`${at} (subject "${subject}"): token_sha256 must be 64 hex characters`);
    }
    const lower = hash.toLowerCase();
    const first = seen.get(lower);
    if (first !== undefined) {
      throw new Error(`${at} (subject "${subject}") repeats the token_sha256 of entry ${first}`);
    }
    seen.set(lower, i);
    return { subject, token_sha256: lower };
  });
}

/** Reads ONGRID_API_TOKENS_FILE; throws an Error with a clear one-line message. */
export function loadTokensFile(filePath: string): TokenEntry[] {
  const label = `tokens file ${filePath}`;
  let text: string;
  try {
    text = fs.readFileSync(filePath, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new Error(`${label} cannot be read (${err.code ?? err.message})`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    // V8 quotes a slice of the input in some messages; this file is credentials, so keep only the position.
    const at = /at position (\d+)/.exec((e as Error).message)?.[1];
    throw new Error(`${label} is not valid JSON: syntax error${at === undefined ? '' : ` at position ${at}`}`);
  }
  return parseTokenEntries(data, label);
}

/** Maps `Authorization: Bearer <token>` to a subject by digest, in constant time. */
export class TokenVerifier {
  readonly #entries: ReadonlyArray<{ subject: string; digest: Buffer }>;

  constructor(entries: TokenEntry[]) {
    this.#entries = entries.map((e) => {
      if (!SHA256_HEX_RE.test(e.token_sha256)) {
        throw new Error(`token entry for subject "${e.subject}": token_sha256 must be 64 hex characters`);
      }
      return { subject: e.subject, digest: Buffer.from(e.token_sha256, 'hex') };
    });
  }

  /** The subject the token belongs to, or undefined. The raw token is neither logged nor kept. */
  verify(authorizationHeader: string | undefined): string | undefined {
    if (authorizationHeader === undefined) return undefined;
    const m = BEARER_RE.exec(authorizationHeader);
    if (!m?.[1]) return undefined;
    // Hashing first makes every comparison 32 bytes; comparing against every entry without
    // an early exit keeps the timing independent of which entry (or how much of it) matched.
    const presented = createHash('sha256').update(m[1], 'utf8').digest();
    let subject: string | undefined;
    for (const entry of this.#entries) {
      const equal = timingSafeEqual(presented, entry.digest);
      if (equal && subject === undefined) subject = entry.subject;
    }
    return subject;
  }
}
