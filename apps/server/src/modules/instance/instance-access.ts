import type { ExecOptions, ExecSession, TerminalOptions, TerminalSession } from '../../adapters/compute/port.ts';

/**
 * What the two shell transports (http/routes/shell.ts and ssh/gateway.ts) need from the instance
 * module, and nothing more. Implemented by the instance service; access is checked inside.
 */
export interface InstanceAccess {
  /**
   * The web shell: a terminal in the caller's own running instance. A foreign or missing id is
   * AppError 404; an instance that is not running is AppError 409 with a Chinese message.
   */
  openTerminal(owner: { tenantId: number; userId: number }, instanceId: string, opts: TerminalOptions): Promise<TerminalSession>;
  /**
   * The SSH gateway: who may log in as `instanceId`. Null for an unknown or released id. The
   * gateway refuses stopped instances and wrong credentials itself, with the same answer for all.
   */
  sshTarget(instanceId: string): Promise<SshTarget | null>;
}

export type SshTarget = {
  instanceId: string;
  /** The instance's display name (the web shell's `ready` frame); the id when absent. issue #8 (ssh). */
  name?: string;
  tenantId: number;
  userId: number;
  running: boolean;
  /** Constant-time check of the instance's root password. */
  checkPassword(password: string): Promise<boolean>;
  /** The owner's public keys, as OpenSSH lines. */
  publicKeys(): Promise<string[]>;
  exec(opts: ExecOptions): Promise<ExecSession>;
  openTerminal(opts: TerminalOptions): Promise<TerminalSession>;
};
