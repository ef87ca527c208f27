import crypto from 'node:crypto';
import { SHELL_TICKET_TTL_SECONDS } from '@suanli/contract/shell';
import type { Clock } from '../../lib/clock.ts';

export type ShellTicketClaim = { tenantId: number; userId: number; instanceId: string; instanceName: string };

/** Most tickets waiting at once in this process; beyond that the oldest are dropped. */
const MAX_PENDING = 10_000;

/**
 * One-time web shell tickets (packages/contract/src/shell.ts), kept in this process's memory: only
 * the SHA-256 of a ticket is stored, with the user, tenant and instance it was issued for. A ticket
 * is valid SHELL_TICKET_TTL_SECONDS and is deleted by the first `take`, valid or not.
 *
 * Several replicas behind a load balancer need either sticky routing (the WebSocket lands on the
 * replica that issued the ticket) or this store moved to a shared table (docs/ssh.md).
 */
export function createShellTicketStore(deps: { clock: Clock; ttlMs?: number }) {
  const ttlMs = deps.ttlMs ?? SHELL_TICKET_TTL_SECONDS * 1000;
  const pending = new Map<string, ShellTicketClaim & { expiresAt: number }>();
  const hash = (ticket: string) => crypto.createHash('sha256').update(ticket).digest('hex');

  const sweep = (now: number) => {
    for (const [k, v] of pending) if (v.expiresAt <= now) pending.delete(k);
    while (pending.size >= MAX_PENDING) {
      const oldest = pending.keys().next();
      if (oldest.done) break;
      pending.delete(oldest.value);
    }
  };

  return {
    issue(claim: ShellTicketClaim): { ticket: string; expiresAt: Date } {
      const now = deps.clock().getTime();
      sweep(now);
      const ticket = crypto.randomBytes(32).toString('base64url');
      const expiresAt = now + ttlMs;
      pending.set(hash(ticket), { ...claim, expiresAt });
      return { ticket, expiresAt: new Date(expiresAt) };
    },
    /** The claim of a live ticket, consuming it; null for unknown, used or expired tickets. */
    take(ticket: string | undefined): ShellTicketClaim | null {
      if (!ticket || ticket.length > 128) return null;
      const key = hash(ticket);
      const entry = pending.get(key);
      if (!entry) return null;
      pending.delete(key);
      if (entry.expiresAt <= deps.clock().getTime()) return null;
      return { tenantId: entry.tenantId, userId: entry.userId, instanceId: entry.instanceId, instanceName: entry.instanceName };
    },
  };
}
export type ShellTicketStore = ReturnType<typeof createShellTicketStore>;
