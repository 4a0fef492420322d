/**
 * The tunable limits of the security model (documented in docs/security.md). `buildApp` takes overrides,
 * so tests and installations can tighten or loosen them.
 */
export interface LockoutPolicy {
  /** Failures answered at once; after these each further attempt must wait, doubling from `firstDelayMs`. */
  freeFailures: number;
  firstDelayMs: number;
  maxDelayMs: number;
  /** At this many failures the subject is locked for `lockMs`. */
  lockAfter: number;
  lockMs: number;
  /** Failures older than this are forgotten. */
  windowMs: number;
}

export interface SecurityPolicy {
  /** A session ends after this long without a request... */
  sessionIdleMs: number;
  /** ...and this long after sign-in, whatever its use. */
  sessionAbsoluteMs: number;
  /** Per account: a password guessed against one e-mail. */
  accountLockout: LockoutPolicy;
  /** Per client address: many e-mails tried from one place. */
  ipLockout: LockoutPolicy;
  /** How long an admin's one-time reset link stays valid. */
  resetLinkMs: number;
  clock: () => Date;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const DEFAULT_SECURITY_POLICY: SecurityPolicy = {
  sessionIdleMs: 30 * MINUTE,
  sessionAbsoluteMs: 12 * HOUR,
  accountLockout: {
    freeFailures: 3,
    firstDelayMs: 2_000,
    maxDelayMs: MINUTE,
    lockAfter: 10,
    lockMs: 15 * MINUTE,
    windowMs: HOUR,
  },
  ipLockout: {
    freeFailures: 10,
    firstDelayMs: 1_000,
    maxDelayMs: 30_000,
    lockAfter: 50,
    lockMs: 15 * MINUTE,
    windowMs: HOUR,
  },
  resetLinkMs: 24 * HOUR,
  clock: () => new Date(),
};
