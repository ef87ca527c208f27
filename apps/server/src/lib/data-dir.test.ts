import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OWN_MODE_TREES, restrictToOwner } from './data-dir.ts';

const modeOf = (p: string) => fs.lstatSync(p).mode & 0o777;

describe('restrictToOwner', () => {
  let dir = '';
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('makes the data dir owner-only but leaves the insides of image and instance trees as a system needs them', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-dd-'));
    fs.mkdirSync(path.join(dir, 'keys'), { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'keys', 'k.pem'), 'x', { mode: 0o644 });
    const etc = path.join(dir, 'images', 'host-base', 'rootfs', 'etc');
    fs.mkdirSync(etc, { recursive: true, mode: 0o755 });
    fs.writeFileSync(path.join(etc, 'passwd'), 'root:x:0:0::/root:/bin/bash\n', { mode: 0o644 });
    fs.chmodSync(path.join(dir, 'images'), 0o755);
    fs.mkdirSync(path.join(dir, 'instances', 'i-abc', 'upper', 'tmp'), { recursive: true });
    fs.chmodSync(path.join(dir, 'instances', 'i-abc', 'upper', 'tmp'), 0o1777);

    restrictToOwner(dir, OWN_MODE_TREES);

    expect(modeOf(path.join(dir, 'keys'))).toBe(0o700);
    expect(modeOf(path.join(dir, 'keys', 'k.pem'))).toBe(0o600);
    expect(modeOf(path.join(dir, 'images'))).toBe(0o700);
    expect(modeOf(path.join(dir, 'instances'))).toBe(0o700);
    expect(modeOf(path.join(etc, 'passwd'))).toBe(0o644);
    expect(fs.lstatSync(path.join(dir, 'instances', 'i-abc', 'upper', 'tmp')).mode & 0o7777).toBe(0o1777);
  });
});
