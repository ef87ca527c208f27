import { z } from 'zod';
import { instanceId } from './instance.ts';

/**
 * The web shell (/shell): a browser can't put the bearer token on a WebSocket, so the page first
 * asks for a one-time ticket (bound to the user, tenant and instance, valid 60 s, used once) and
 * opens `GET /api/v1/ws/shell?ticket=…` with it.
 */
export const shellTicketBody = z.strictObject({ instanceId });
export const shellTicket = z.object({ ticket: z.string(), url: z.string(), expiresAt: z.string() });
export type ShellTicket = z.infer<typeof shellTicket>;
export const SHELL_TICKET_TTL_SECONDS = 60;

/**
 * Frames on the socket. Server -> client: binary frames are terminal output bytes; text frames are
 * JSON `ShellServerMessage`. Client -> server: text frames of JSON `ShellClientMessage`.
 */
export type ShellClientMessage = { type: 'input'; data: string } | { type: 'resize'; cols: number; rows: number } | { type: 'ping' };
export type ShellServerMessage =
  | { type: 'ready'; instanceId: string; instanceName: string }
  | { type: 'pong' }
  /** The shell ended (`exit` typed, instance stopped…); `reason` is Chinese, for the user. */
  | { type: 'exit'; code: number | null; reason: string }
  | { type: 'error'; msg: string };

/** WebSocket close codes beyond 1000: the page shows the matching message and whether reconnecting makes sense. */
export const ShellCloseCode = {
  /** Ticket missing, unknown, expired or used. */
  Unauthorized: 4401,
  /** The instance doesn't exist or isn't the user's. */
  NotFound: 4404,
  /** The instance isn't running. */
  NotRunning: 4409,
  /** Too many shells open. */
  TooMany: 4429,
} as const;
