import { hostname } from "node:os";

/**
 * Who holds a job lease: `host:pid:start-nonce:runner`. Host and pid let a process restarted on the same
 * data directory see that a lease's holder is gone (no such pid on this host) and take the job back at
 * once instead of waiting for the lease to run out. The nonce tells this process from a predecessor that
 * had the same pid (a container's server is pid 1 after every restart).
 */
export interface LeaseOwner {
  host: string;
  pid: number;
  nonce: string;
}

/** Drawn once per process start. */
const PROCESS_NONCE = crypto.randomUUID().slice(0, 8);

export const thisProcess = (): LeaseOwner => ({ host: hostname(), pid: process.pid, nonce: PROCESS_NONCE });

/** A lease owner id for one runner of this process. */
export function leaseOwnerId(runner: string = crypto.randomUUID().slice(0, 8)): string {
  const { host, pid, nonce } = thisProcess();
  return `${host}:${pid}:${nonce}:${runner}`;
}

/** The owner's host, pid and nonce; null for ids of another form (older versions' `runner-UUID`). */
export function parseLeaseOwner(id: string): LeaseOwner | null {
  const m = /^(.+):(\d+):([^:]+):[^:]+$/.exec(id);
  return m ? { host: m[1], pid: Number(m[2]), nonce: m[3] } : null;
}

/** True unless signalling the pid answers that there is no such process (EPERM: it exists, not ours). */
export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/**
 * Whether a lease's owner is certainly gone: a process of this host that no longer runs, or an earlier
 * process that had this process's pid. Owners on other hosts, of unknown form, or alive are not.
 */
export function isDeadLocalOwner(
  ownerId: string,
  self: LeaseOwner = thisProcess(),
  isAlive: (pid: number) => boolean = isPidAlive,
): boolean {
  const owner = parseLeaseOwner(ownerId);
  if (!owner || owner.host !== self.host) return false;
  if (owner.pid === self.pid) return owner.nonce !== self.nonce;
  return !isAlive(owner.pid);
}
