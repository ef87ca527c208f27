import type { Readable, Writable } from 'node:stream';

/**
 * The compute port (DESIGN §3): what the instance service asks of whatever runs instances. The
 * `local` adapter (local.ts) makes each instance a bubblewrap sandbox on this host; a Kubernetes
 * adapter would make it a pod. Test fakes implement this same interface.
 *
 * Every method is idempotent for the same instance id (a retried job repeats it safely), and
 * every error it throws is a `ComputeError` whose message is fit to show an operator, never a
 * user (the service maps it to a Chinese reason).
 */
export interface ComputeDriver {
  readonly name: string;
  /** Whether this host can run instances now; `reason` (Chinese) says what is missing if not. */
  availability(): Promise<{ ok: true } | { ok: false; reason: string; fix?: string }>;
  /** Allocate the instance's disks: its writable system layer over the image and its data disk. */
  create(spec: InstanceSpec): Promise<void>;
  /** Boot it: the long-lived init process in its own namespaces, cgroups and network. */
  start(spec: InstanceSpec): Promise<void>;
  /** Stop every process in it; disks are kept. */
  stop(id: string): Promise<void>;
  /** Stop it and delete its disks. */
  destroy(id: string): Promise<void>;
  /** Throw away the system layer (a fresh system disk from `spec.image`); the data disk is kept. Stopped instances only. */
  resetSystem(spec: InstanceSpec): Promise<void>;
  status(id: string): Promise<InstanceRuntimeStatus>;
  /** Run one command inside (a login shell runs it when `command` is a string), in its cgroups. */
  exec(id: string, opts: ExecOptions): Promise<ExecSession>;
  /** An interactive shell on a pseudo-terminal inside, in its cgroups. */
  openTerminal(id: string, opts: TerminalOptions): Promise<TerminalSession>;
  usage(id: string): Promise<InstanceUsage>;
  /** Ids of instances whose init is alive on this host (for start-up recovery). */
  list(): Promise<string[]>;

  // ---- Issue #10: instance operations -------------------------------------------------------

  /**
   * Resize the data disk to `bytes`. Growing works running (online) or stopped; shrinking only
   * stopped, and never below what the disk holds (a ComputeError, not retryable). Idempotent: the
   * same size again does nothing. Writes beyond the size fail with "no space" inside.
   *
   * local driver: the ext4 image file grows at once; its filesystem grows online (`resize2fs` on
   * the mounted loop device), which the kernel allows only with CAP_SYS_RESOURCE — on a host that
   * withholds it even from root (some container runtimes) the filesystem grows at the next start
   * instead. The shrink floor is resize2fs's own estimate of the minimum (`resize2fs -P`).
   */
  // `atNextStart`: a running instance's grow could not be done online (the host withholds
  // CAP_SYS_RESOURCE, which online ext4 resize needs); the disk file is grown and the filesystem
  // takes the size at the next start.
  resizeDataDisk(id: string, bytes: number): Promise<{ atNextStart: boolean }>;
  /**
   * Copy what a stopped instance wrote over its image (its system layer) into `dir` (created; it
   * holds `root/`, and `usr/` when the image's /usr is the host's), to be stacked as an image
   * layer (InstanceSpec.image.layers). Returns the layer's size. Whiteouts, opaque directories,
   * owners, modes, links and holes are kept, so a file deleted in the instance stays deleted.
   * The files the driver writes at every boot (hostname, hosts, resolv.conf, motd, the user's
   * authorized_keys) are left out and root's password hash is blanked: an image may be shared.
   * Written to a temporary dir and renamed, so `dir` existing means it is complete (returned as is).
   */
  saveSystemLayer(id: string, dir: string, opts?: CopyOptions): Promise<{ sizeBytes: number }>;
  /**
   * Instead of create(): instance `spec.id` gets copies of stopped instance `sourceId`'s disks —
   * its system layer and its data disk (grown to spec.dataDiskBytes when larger). Idempotent: a
   * finished clone is left alone, a half-done one is redone.
   */
  cloneFrom(sourceId: string, spec: InstanceSpec, opts?: CopyOptions): Promise<void>;
  /**
   * Copy `sourcePath` of one instance's data disk into `targetPath` of another's (paths relative
   * to /root/data; a leading "/" or "/root/data" is dropped, ".." and symlinks on the way are
   * refused), mounting a stopped instance's disk for the copy. `targetPath` is a directory
   * (created): a source directory's contents are merged into it, a source file lands in it under
   * its own name. Modes, owners, mtimes and symlinks (as links) are kept. Files already at the
   * target with the same size and mtime are skipped, so a copy run again after a crash resumes.
   * `signal` aborts it (what was copied stays; the promise rejects with "copy aborted"). A full
   * target disk rejects with a ComputeError whose message starts "目标实例的数据盘空间不足".
   */
  copyData(opts: CopyDataOptions): Promise<CopyProgress>;
}

export type CopyProgress = { copiedBytes: number; totalBytes: number; files: number };
export type CopyOptions = { signal?: AbortSignal; onProgress?: (p: CopyProgress) => void };
export type CopyDataOptions = CopyOptions & { sourceId: string; targetId: string; sourcePath: string; targetPath: string };

export type InstanceRuntimeStatus = 'running' | 'stopped' | 'missing';

export type InstanceSpec = {
  id: string;
  hostname: string;
  /**
   * The image: its base root filesystem, and (issue #10, private images) the layers saved from
   * instances stacked over it, topmost first (each a dir with `root/` and optionally `usr/`).
   */
  image: { id: number; rootPath: string; layers?: string[] };
  cpuCores: number;
  memoryBytes: number;
  pidsMax: number;
  /** Size of the data disk mounted at /root/data. */
  dataDiskBytes: number;
  /** Size limit of the system layer, if the driver can enforce one. */
  systemDiskBytes: number;
  /** Device nodes passed through (/dev/nvidia0, /dev/nvidiactl …); empty on demo machines. */
  gpuDevices: string[];
  /** Printed at every login (SSH and web shell): says "demo machine: no physical GPU" where so. */
  banner: string;
  /** The root password in crypt(3) form for /etc/shadow inside, if the driver writes one. */
  rootPasswordCrypt?: string;
  /** The user's SSH public key lines, for /root/.ssh/authorized_keys inside. */
  authorizedKeys: string[];
};

export type TerminalSize = { cols: number; rows: number };

export type ExecOptions = {
  /** argv, or a string run by the instance's login shell (`bash -lc`). */
  command: string[] | string;
  env?: Record<string, string>;
  /** Allocate a pseudo-terminal (ssh -t 'cmd'). */
  pty?: TerminalSize & { term?: string };
};

export interface ExecSession {
  stdin: Writable;
  stdout: Readable;
  /** Same stream as stdout when a pty was allocated. */
  stderr: Readable;
  /** Resolves when the process ends: its exit code, or the signal that ended it. */
  exit: Promise<{ code: number | null; signal: string | null }>;
  resize(size: TerminalSize): void;
  /** Send a signal (default SIGTERM, then SIGKILL after a grace). */
  kill(signal?: NodeJS.Signals): void;
}

export type TerminalOptions = TerminalSize & { term?: string; env?: Record<string, string> };

export interface TerminalSession {
  /** Bytes the terminal prints. */
  output: Readable;
  write(data: string | Buffer): void;
  resize(size: TerminalSize): void;
  close(): void;
  exit: Promise<{ code: number | null; signal: string | null }>;
}

export type InstanceUsage = {
  cpuSeconds: number;
  memoryBytes: number;
  memoryLimitBytes: number;
  /** Also for a stopped instance (read from its unmounted disk). */
  dataDiskUsedBytes: number;
  dataDiskTotalBytes: number;
  systemLayerBytes: number;
  processes: number;
};

export class ComputeError extends Error {
  constructor(
    message: string,
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'ComputeError';
  }
}
