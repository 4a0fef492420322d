import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { fail } from "../errors.js";

/**
 * scrypt parameters for new hashes (N = 2^15, r = 8: ~32 MiB and tens of milliseconds per hash, in the
 * range OWASP recommends). They are stored with each hash, so raising them later keeps old hashes valid.
 */
const COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;
const SALT_BYTES = 16;

export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 256;

function derive(password: string, salt: Buffer, cost: ScryptOptions, length: number): Promise<Buffer> {
  // scrypt needs 128·N·r bytes; allow that plus headroom over Node's 32 MiB default.
  const maxmem = 256 * cost.N! * cost.r! + 1024 * 1024;
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFKC"), salt, length, { ...cost, maxmem }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/** `scrypt$N$r$p$salt$hash` (salt and hash base64url): one self-describing string per user. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, COST, KEY_LENGTH);
  return ["scrypt", COST.N, COST.r, COST.p, salt.toString("base64url"), hash.toString("base64url")].join("$");
}

/** Compares in constant time; a malformed stored value never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const actual = await derive(
    password,
    Buffer.from(salt, "base64url"),
    { N: +n, r: +r, p: +p },
    expected.length,
  );
  return timingSafeEqual(actual, expected);
}

/** A password a person can type: 20 characters of base64url (120 random bits). */
export const generatePassword = () => randomBytes(15).toString("base64url");

export function assertPasswordStrength(password: string, field = "password"): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw fail("weak_password", { min: MIN_PASSWORD_LENGTH }, field);
  if (password.length > MAX_PASSWORD_LENGTH)
    throw fail("invalid_password", { max: MAX_PASSWORD_LENGTH }, field);
}
