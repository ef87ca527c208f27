import { execFile } from 'node:child_process';
import { ComputeError } from '../port.ts';

export type RunResult = { stdout: string; stderr: string; code: number };

/** Runs a host command (no shell), resolving with its output and exit code; never throws on a non-zero exit. */
export function runCode(cmd: string, args: string[], opts: { timeoutMs?: number; input?: string } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { timeout: opts.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 127) : 0;
      resolve({ stdout, stderr: stderr || (err && !stderr ? err.message : ''), code });
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Runs a host command and throws a ComputeError naming it when it fails. */
export async function run(cmd: string, args: string[], opts: { timeoutMs?: number; input?: string } = {}): Promise<string> {
  const r = await runCode(cmd, args, opts);
  if (r.code !== 0) throw new ComputeError(`${cmd} ${args.join(' ')}: exit ${r.code}: ${r.stderr.trim().slice(0, 500)}`);
  return r.stdout;
}

/** Whether an executable is on PATH (or an absolute path that exists). */
export async function which(cmd: string): Promise<string | null> {
  const r = await runCode('sh', ['-c', 'command -v "$1"', 'sh', cmd]);
  return r.code === 0 ? r.stdout.trim() : null;
}
