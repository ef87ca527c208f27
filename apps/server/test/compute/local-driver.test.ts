import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalDriver } from '../../src/adapters/compute/local.ts';
import type { ComputeDriver, InstanceSpec } from '../../src/adapters/compute/port.ts';
import { MiB, makeDataDir, screen, sh, skipReason, specOf } from './helpers.ts';

/**
 * The real `local` driver: bubblewrap sandboxes, overlay system disks, loop-mounted ext4 data disks,
 * cgroup v1 limits and slirp4netns networking on this host. Needs root (CI runs as root).
 */
describe.skipIf(skipReason !== null)(`local compute driver${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let data: ReturnType<typeof makeDataDir>;
  let driver: ComputeDriver;
  let a: InstanceSpec;
  let b: InstanceSpec;
  let hostServer: net.Server;
  let hostPort = 0;

  beforeAll(async () => {
    data = makeDataDir();
    driver = createLocalDriver({ dataDir: data.dataDir });
    expect(await driver.availability()).toEqual({ ok: true });
    a = specOf(data.rootPath, { memoryBytes: 64 * MiB, pidsMax: 48, dataDiskBytes: 64 * MiB });
    b = specOf(data.rootPath, { dataDiskBytes: 32 * MiB });
    await Promise.all([driver.create(a), driver.create(b)]);
    await driver.start(a);
    await driver.start(b);
    // a service on the host's loopback, as the server and PostgreSQL are
    hostServer = net.createServer((s) => s.end('host secret\n'));
    // on every address, as the server listens by default (HOST=0.0.0.0)
    await new Promise<void>((r) => hostServer.listen(0, '0.0.0.0', r));
    hostPort = (hostServer.address() as net.AddressInfo).port;
  }, 120_000);

  afterAll(async () => {
    hostServer?.close();
    if (driver) await Promise.all([a, b].filter(Boolean).map((s) => driver.destroy(s.id)));
    data?.cleanup();
  }, 60_000);

  it('starts with its hostname, its own PID namespace and the banner file', async () => {
    expect(await driver.status(a.id)).toBe('running');
    const r = await sh(driver, a.id, 'hostname; cat /etc/motd; echo pid1=$(cat /proc/1/comm)');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(a.hostname);
    expect(r.stdout).toContain('演示机器：无物理 GPU');
    expect(r.stdout).toMatch(/pid1=(bwrap|sleep)/);
    expect(await driver.list()).toEqual(expect.arrayContaining([a.id, b.id]));
  });

  it('keeps processes running with nobody attached', async () => {
    const r = await sh(driver, a.id, 'nohup sleep 1000 >/dev/null 2>&1 & echo started');
    expect(r.stdout).toContain('started');
    await new Promise((res) => setTimeout(res, 500));
    const ps = await sh(driver, a.id, 'ps -eo args');
    expect(ps.stdout).toContain('sleep 1000');
  });

  it('sees only its own processes and none of the host', async () => {
    const ps = await sh(driver, a.id, 'ps -eo pid,args --no-headers');
    const lines = ps.stdout.trim().split('\n');
    expect(lines.length).toBeLessThan(10);
    expect(ps.stdout).not.toMatch(/node|vitest|postgres|slirp4netns/);
    const r = await sh(driver, a.id, `test -e /proc/${process.pid}/cmdline && echo visible || echo hidden`);
    // pid numbers differ inside; the server's pid, if it exists there at all, is not the server
    expect(r.stdout.includes('hidden') || !(await sh(driver, a.id, `cat /proc/${process.pid}/cmdline`)).stdout.includes('node')).toBe(true);
  });

  it('root inside has no mount, device or host-kernel powers', async () => {
    const r = await sh(driver, a.id, 'mount -t tmpfs x /mnt 2>&1 || echo no-mount; mknod /tmp/sda b 8 0 2>&1 || echo no-mknod; (echo h > /proc/sysrq-trigger) 2>&1 || echo no-sysrq; (echo 1 > /proc/sys/vm/drop_caches) 2>&1 || echo no-sysctl; echo devices:; ls /dev');
    expect(r.stdout).toContain('no-mount');
    expect(r.stdout).toContain('no-mknod');
    expect(r.stdout).toContain('no-sysrq');
    expect(r.stdout).toContain('no-sysctl');
    expect(r.stdout.split('devices:')[1]).not.toMatch(/\b(sda|vda|nvme0n1|loop0)\b/);
  });

  it('cannot see the server data dir or other instances disks', async () => {
    const bDir = path.join(data.dataDir, 'instances', b.id);
    const r = await sh(driver, a.id, `ls ${data.dataDir} 2>&1; ls ${bDir} 2>&1; ls /usr/local; mount | grep -c ${b.id} || true`);
    expect(r.stdout).toContain(`cannot access '${data.dataDir}'`);
    expect(r.stdout).toContain(`cannot access '${bDir}'`);
    expect(r.stdout).not.toMatch(/initdb|cudafe|docker/); // the host's /usr/local stays hidden
    expect(r.stdout.trim().split('\n').pop()).toBe('0');
  });

  it("cannot reach the host's loopback (server ports, PostgreSQL) nor the 10.0.2.2 gateway", async () => {
    // The same connection from the host works: the test can fail.
    const fromHost = await new Promise<string>((res) => net.connect(hostPort, '127.0.0.1').on('data', (d) => res(d.toString())));
    expect(fromHost).toContain('host secret');
    const probe = (host: string, port: number) => `timeout 3 bash -c 'exec 3<>/dev/tcp/${host}/${port} && cat <&3' 2>/dev/null && echo REACHED-${host}-${port} || echo blocked-${host}-${port}`;
    const hostIps = Object.values(os.networkInterfaces())
      .flat()
      .filter((i) => i && i.family === 'IPv4' && !i.internal)
      .map((i) => i!.address);
    const probes = [probe('127.0.0.1', hostPort), probe('10.0.2.2', hostPort), probe('127.0.0.1', 5432), probe('10.0.2.2', 5432), ...hostIps.flatMap((ip) => [probe(ip, hostPort), probe(ip, 5432)])];
    const r = await sh(driver, a.id, [...probes, 'ip -4 addr show tap0'].join('; '));
    for (const ip of hostIps) expect(r.stdout).toContain(`blocked-${ip}-${hostPort}`);
    expect(r.stdout).not.toContain('REACHED');
    expect(r.stdout).not.toContain('host secret');
    expect(r.stdout).toContain(`blocked-10.0.2.2-${hostPort}`);
    expect(r.stdout).toContain('10.0.2.100'); // the NAT is there: only the host is fenced off
    const resolv = await sh(driver, a.id, 'cat /etc/resolv.conf');
    expect(resolv.stdout).toContain('nameserver 10.0.2.3');
  });

  it('has an ext4 data disk of the ordered size; writing past it fails with No space left', async () => {
    const r = await sh(driver, a.id, 'stat -f -c %T /root/data; df -B1 --output=size /root/data | tail -1; dd if=/dev/zero of=/root/data/fill bs=1M count=100 2>&1; rm -f /root/data/fill');
    expect(r.stdout.split('\n')[0]).toMatch(/ext2\/ext3|ext4/);
    const size = Number(r.stdout.split('\n')[1]);
    expect(size).toBeGreaterThan(50 * MiB);
    expect(size).toBeLessThanOrEqual(64 * MiB);
    expect(r.stdout).toContain('No space left on device');
  });

  it('holds the memory limit for an exec’d command (the nsenter trap)', async () => {
    const r = await sh(driver, a.id, `python3 -c "s = b'x' * (200 * 1024 * 1024); print('sur' + 'vived')"; echo rc=$?`);
    expect(r.stdout).not.toContain('survived');
    expect(r.stdout).toMatch(/rc=137/);
    const u = await driver.usage(a.id);
    expect(u.memoryLimitBytes).toBe(64 * MiB);
  });

  it('holds the memory limit in a terminal, prints the banner, echoes and resizes', async () => {
    const t = await driver.openTerminal(a.id, { cols: 80, rows: 24 });
    const s = screen(t);
    await s.waitFor(/演示机器：无物理 GPU/);
    t.write('echo hel""lo\n');
    await s.waitFor(/hello\r?\n/);
    t.resize({ cols: 100, rows: 40 });
    t.write('stty size\n');
    await s.waitFor(/40 100/);
    t.write(`python3 -c "s = b'x' * (200 * 1024 * 1024); print('sur' + 'vived')"; echo rc=$?\n`);
    await s.waitFor(/rc=\d+/, 30_000);
    expect(s.text()).not.toContain('survived');
    expect(s.text()).toMatch(/rc=137/);
    t.write('exit\n');
    expect(await t.exit).toEqual({ code: 0, signal: null });
  });

  it('holds the pids limit', async () => {
    const script = 'import os,time\nn=0\ntry:\n  while n < 200:\n    if os.fork()==0:\n      time.sleep(3); os._exit(0)\n    n+=1\nexcept OSError as e:\n  print("stopped", e.errno)\nprint("forked", n)';
    const r = await sh(driver, a.id, `python3 -c '${script}'`);
    const n = Number(/forked (\d+)/.exec(r.stdout)?.[1]);
    expect(r.stdout).toContain('stopped 11'); // EAGAIN
    expect(n).toBeLessThan(48);
  });

  it('exec with a pty, exit codes and kill', async () => {
    const s = await driver.exec(a.id, { command: ['/bin/sh', '-c', '[ -t 0 ] && [ -t 1 ] && echo is-a-tty; stty size; exit 3'], pty: { cols: 80, rows: 24 } });
    let out = '';
    s.stdout.on('data', (d: Buffer) => (out += d.toString()));
    expect(await s.exit).toEqual({ code: 3, signal: null });
    expect(out).toContain('is-a-tty');
    expect(out).toContain('24 80');
    const long = await driver.exec(a.id, { command: 'sleep 30' });
    long.kill('SIGKILL');
    const e = await long.exit;
    expect(e.code === 137 || e.signal === 'SIGKILL').toBe(true);
  });

  it('a second driver object (a restarted server) finds the running instance', async () => {
    const again = createLocalDriver({ dataDir: data.dataDir });
    expect(await again.list()).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(await again.status(a.id)).toBe('running');
    expect((await sh(again, a.id, 'ps -eo args')).stdout).toContain('sleep 1000');
  });

  it('writes to the system disk land in the upper dir and persist across stop/start; reset wipes them', async () => {
    await sh(driver, a.id, 'echo persisted > /etc/suanli-test; echo kept > /root/data/kept');
    expect(fs.readFileSync(path.join(data.dataDir, 'instances', a.id, 'upper/etc/suanli-test'), 'utf8')).toBe('persisted\n');
    await driver.stop(a.id);
    await driver.stop(a.id); // idempotent
    expect(await driver.status(a.id)).toBe('stopped');
    expect(await driver.list()).not.toContain(a.id);
    await expect(driver.exec(a.id, { command: 'true' })).rejects.toThrow(/not running/);
    await driver.start(a);
    await driver.start(a); // idempotent
    const r = await sh(driver, a.id, 'cat /etc/suanli-test /root/data/kept; pgrep -f "^sleep 1000" | wc -l');
    expect(r.stdout).toContain('persisted');
    expect(r.stdout).toContain('kept');
    expect(r.stdout.trim().split('\n').pop()).toBe('0'); // stop killed everything
    await expect(driver.resetSystem(a)).rejects.toThrow(/running/);
    await driver.stop(a.id);
    await driver.resetSystem(a);
    await driver.start(a);
    const after = await sh(driver, a.id, 'cat /etc/suanli-test 2>&1; cat /root/data/kept');
    expect(after.stdout).toContain('No such file');
    expect(after.stdout).toContain('kept');
  });

  it('reports usage from cgroups and the data disk', async () => {
    const u = await driver.usage(a.id);
    expect(u.processes).toBeGreaterThan(0);
    expect(u.memoryBytes).toBeGreaterThan(0);
    expect(u.dataDiskTotalBytes).toBeGreaterThan(50 * MiB);
    expect(u.dataDiskUsedBytes).toBeGreaterThan(0);
    expect(u.cpuSeconds).toBeGreaterThan(0);
  });

  it('destroy removes the disks and is idempotent', async () => {
    const c = specOf(data.rootPath, { dataDiskBytes: 32 * MiB });
    await driver.create(c);
    await driver.start(c);
    const dir = path.join(data.dataDir, 'instances', c.id);
    expect(fs.existsSync(path.join(dir, 'data.img'))).toBe(true);
    await driver.destroy(c.id);
    await driver.destroy(c.id);
    expect(fs.existsSync(dir)).toBe(false);
    expect(await driver.status(c.id)).toBe('missing');
    expect(fs.existsSync(`/sys/fs/cgroup/memory/suanli/${c.id}`)).toBe(false);
  });
});
