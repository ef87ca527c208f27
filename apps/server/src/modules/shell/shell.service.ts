import type { ShellTicket } from '@suanli/contract/shell';
import { conflict, notFound } from '../../lib/errors.ts';
import type { InstanceAccess } from '../instance/instance-access.ts';
import type { ShellTicketClaim, ShellTicketStore } from './shell-ticket.store.ts';

type Owner = { tenantId: number; userId: number };
export const SHELL_PATH = '/api/v1/ws/shell';
export const NOT_RUNNING = '实例未在运行，请先开机后再打开终端';

/** The web shell's tickets (DESIGN: the page can't put its bearer token on a WebSocket). */
export function createShellService(deps: { access: InstanceAccess; tickets: ShellTicketStore }) {
  const { access, tickets } = deps;
  return {
    /** A one-time ticket for a shell in the caller's own running instance: 404 foreign or missing, 409 not running. */
    async issueTicket(owner: Owner, instanceId: string): Promise<ShellTicket> {
      const target = await access.sshTarget(instanceId);
      if (!target || target.tenantId !== owner.tenantId || target.userId !== owner.userId) throw notFound('实例不存在');
      if (!target.running) throw conflict(NOT_RUNNING);
      const { ticket, expiresAt } = tickets.issue({ ...owner, instanceId, instanceName: target.name ?? instanceId });
      return { ticket, url: `${SHELL_PATH}?ticket=${encodeURIComponent(ticket)}`, expiresAt: expiresAt.toISOString() };
    },
    /** Consumes a ticket of this tenant; null when unknown, used, expired or another tenant's. */
    redeem(ticket: string | undefined, tenantId: number): ShellTicketClaim | null {
      const claim = tickets.take(ticket);
      return claim && claim.tenantId === tenantId ? claim : null;
    },
    /** Whether the instance still runs (to say why a shell ended). */
    async running(instanceId: string): Promise<boolean> {
      return (await access.sshTarget(instanceId))?.running ?? false;
    },
    openTerminal: access.openTerminal.bind(access),
  };
}
export type ShellService = ReturnType<typeof createShellService>;
