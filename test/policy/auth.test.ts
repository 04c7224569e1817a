import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hashToken, loadTokensFile, TokenVerifier } from '../../src/policy/auth.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ongrid-auth-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

let n = 0;
function tokensFile(content: string): string {
  const file = path.join(dir, `tokens-${n++}.json`);
  fs.writeFileSync(file, content);
  return file;
}

const ALICE_TOKEN = 'alice-secret-token-0123456789';
const BOB_TOKEN = 'bob-secret-token-abcdefghijk';

describe('TokenVerifier', () => {
  const verifier = new TokenVerifier([
    { subject: 'alice', token_sha256: hashToken(ALICE_TOKEN) },
    { subject: 'bob', token_sha256: hashToken(BOB_TOKEN) },
  ]);

  test('the right token gives its subject', () => {
    assert.equal(verifier.verify(`Bearer ${ALICE_TOKEN}`), 'alice');
    assert.equal(verifier.verify(`Bearer ${BOB_TOKEN}`), 'bob');
  });

  test('the scheme is case-insensitive', () => {
    assert.equal(verifier.verify(`bearer ${ALICE_TOKEN}`), 'alice');
    assert.equal(verifier.verify(`BEARER ${ALICE_TOKEN}`), 'alice');
  });

  test('a wrong token gives no subject', () => {
    assert.equal(verifier.verify('Bearer not-a-token'), undefined);
  });

  test('a token of the same length differing only in the last byte gives no subject', () => {
    const near = ALICE_TOKEN.slice(0, -1) + (ALICE_TOKEN.endsWith('9') ? '8' : '9');
    assert.equal(near.length, ALICE_TOKEN.length);
    assert.equal(verifier.verify(`Bearer ${near}`), undefined);
  });

  test('a missing or empty header gives no subject', () => {
    assert.equal(verifier.verify(undefined), undefined);
    assert.equal(verifier.verify(''), undefined);
  });

  test('anything but exactly "Bearer <token>" gives no subject', () => {
    for (const header of [
      `Basic ${ALICE_TOKEN}`,
      ALICE_TOKEN,
      'Bearer',
      'Bearer ',
      `Bearer${ALICE_TOKEN}`,
      `Bearer ${ALICE_TOKEN} extra`,
      `Token ${ALICE_TOKEN}`,
    ]) {
      assert.equal(verifier.verify(header), undefined, header);
    }
  });

  test('the stored digest is the sha256 of the token, not the token', () => {
    // A client presenting the digest itself must not be let in.
    assert.equal(verifier.verify(`Bearer ${hashToken(ALICE_TOKEN)}`), undefined);
  });

  test('uppercase hex digests are accepted', () => {
    const v = new TokenVerifier([{ subject: 'carol', token_sha256: hashToken('c').toUpperCase() }]);
    assert.equal(v.verify('Bearer c'), 'carol');
  });

  test('with no entries nobody is verified', () => {
    assert.equal(new TokenVerifier([]).verify(`Bearer ${ALICE_TOKEN}`), undefined);
  });
});

describe('loadTokensFile', () => {
  test('a valid file gives its entries with lowercased hex', () => {
    const upper = hashToken(ALICE_TOKEN).toUpperCase();
    const file = tokensFile(JSON.stringify([
      { subject: 'alice', token_sha256: upper, note: 'ignored' },
      { subject: 'bob', token_sha256: hashToken(BOB_TOKEN) },
    ]));
    assert.deepEqual(loadTokensFile(file), [
      { subject: 'alice', token_sha256: hashToken(ALICE_TOKEN) },
      { subject: 'bob', token_sha256: hashToken(BOB_TOKEN) },
    ]);
    assert.equal(new TokenVerifier(loadTokensFile(file)).verify(`Bearer ${ALICE_TOKEN}`), 'alice');
  });

  const h = hashToken('x');
  const malformed: Array<[string, string | null, RegExp]> = [
    ['an unreadable (missing) file', null, /^tokens file \S+ cannot be read \(ENOENT\)$/],
    ['a file that is not JSON', '[{"subject": "alice",', /^tokens file \S+ is not valid JSON: /],
    ['a JSON object instead of an array', JSON.stringify({ subject: 'a', token_sha256: h }), /^tokens file \S+ must be a JSON array of \{"subject", "token_sha256"\} objects$/],
    ['an empty array', '[]', /^tokens file \S+ holds no tokens, so nobody could authenticate$/],
    ['an entry that is not an object', JSON.stringify(['abc']), /^tokens file \S+: entry 0 is not an object$/],
    ['an entry without subject', JSON.stringify([{ token_sha256: h }]), /^tokens file \S+: entry 0 has no subject \(a non-empty string\)$/],
    ['an entry with an empty subject', JSON.stringify([{ subject: ' ', token_sha256: h }]), /^tokens file \S+: entry 0 has no subject/],
    ['a hash that is too short', JSON.stringify([{ subject: 'a', token_sha256: h.slice(1) }]), /^tokens file \S+: entry 0 \(subject "a"\): token_sha256 must be 64 hex characters$/],
    ['a hash that is not hex', JSON.stringify([{ subject: 'a', token_sha256: 'z'.repeat(64) }]), /entry 0 \(subject "a"\): token_sha256 must be 64 hex characters$/],
    ['a missing hash', JSON.stringify([{ subject: 'a' }]), /entry 0 \(subject "a"\): token_sha256 must be 64 hex characters$/],
    ['a duplicate hash (case-insensitive)', JSON.stringify([{ subject: 'a', token_sha256: h }, { subject: 'b', token_sha256: h.toUpperCase() }]), /^tokens file \S+: entry 1 \(subject "b"\) repeats the token_sha256 of entry 0$/],
  ];
  for (const [what, content, message] of malformed) {
    test(`${what} throws one clear line`, () => {
      const file = content === null ? path.join(dir, 'absent.json') : tokensFile(content);
      assert.throws(() => loadTokensFile(file), (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.match(err.message, message);
        assert.ok(err.message.includes(file), 'names the file');
        assert.doesNotMatch(err.message, /\n/);
        return true;
      });
    });
  }
});
