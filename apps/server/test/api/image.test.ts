import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobs } from '../../src/db/schema/job.ts';
import { images } from '../../src/db/schema/compute.ts';
import { createImageService, IMAGE_BUILD_JOB } from '../../src/modules/image/image.service.ts';
import { progressOfLine } from '../../src/modules/image/recipes.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { createUser, signInSeededOperator } from '../helpers/factories.ts';

const fakeMmdebstrap = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fakes/image-mmdebstrap.sh');
const isRoot = process.getuid?.() === 0;

describe('images', () => {
  let t: TestApp;
  let dataDir: string;
  let op: string;
  let user: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-images-'));
    t = await buildTestApp({ env: { DATA_DIR: dataDir } });
    op = (await signInSeededOperator(t)).token;
    user = (await createUser(t)).token;
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it.skipIf(!isRoot)('seeds the host-based image ready at once, saying honestly what it holds; idempotent', async () => {
    const row = await t.container.images.ensureSeeded();
    expect(row.status).toBe('ready');
    expect(row.tenantId).toBeNull();
    expect(row.rootPath).toBe(path.join(dataDir, 'images/host-base/rootfs'));
    expect(row.contents).toEqual(expect.arrayContaining([expect.stringMatching(/^bash \d+\.\d+\.\d+$/), expect.stringMatching(/^Python 3\.\d+\.\d+$/), expect.stringMatching(/^coreutils \d+/)]));
    expect(row.description).toContain('/usr');
    // its own files only: no host secrets, no host /usr copied
    expect(fs.readFileSync(path.join(row.rootPath!, 'etc/shadow'), 'utf8')).not.toMatch(/\$[0-9a-z]+\$/);
    expect(fs.readdirSync(path.join(row.rootPath!, 'usr'))).toEqual([]);
    expect(fs.existsSync(path.join(row.rootPath!, 'etc/ssh'))).toBe(false);
    const again = await t.container.images.ensureSeeded();
    expect(again.id).toBe(row.id);

    const res = await t.request({ method: 'GET', url: '/api/v1/image/all', token: user });
    expect(res.statusCode).toBe(200);
    const list = res.json().data as { id: number; status: string; contents: string[] }[];
    expect(list.find((i) => i.id === row.id)?.status).toBe('ready');
  });

  it('GET /api/v1/image/all needs a session', async () => {
    expect((await t.request({ method: 'GET', url: '/api/v1/image/all' })).statusCode).toBe(401);
  });

  it('operator calls need the operator role', async () => {
    expect((await t.request({ method: 'GET', url: '/api/v1/operate/images', token: user })).statusCode).toBe(403);
    expect((await t.request({ method: 'POST', url: '/api/v1/operate/images/build', token: user, payload: { recipe: 'debian12-python' } })).statusCode).toBe(403);
  });

  it('refuses an unknown recipe with a Chinese message', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/operate/images/build', token: op, payload: { recipe: 'windows' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().msg).toContain('配方');
  });

  it('builds as a persisted job with progress, then ready with detected contents; edit, unpublish, delete', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/operate/images/build', token: op, payload: { recipe: 'debian12-python' } });
    expect(res.statusCode).toBe(200);
    const started = res.json().data as { id: number; status: string; progress: number; slug: string };
    expect(started.status).toBe('building');
    // building images are listed with their progress
    const listed = (await t.request({ method: 'GET', url: '/api/v1/image/all', token: user })).json().data as { id: number; status: string }[];
    expect(listed.find((i) => i.id === started.id)?.status).toBe('building');
    // a second build of the same image while it builds: 409
    expect((await t.request({ method: 'POST', url: '/api/v1/operate/images/build', token: op, payload: { recipe: 'debian12-python' } })).statusCode).toBe(409);

    const [job] = await t.container.db.select().from(jobs).where(eq(jobs.kind, IMAGE_BUILD_JOB));
    expect(job?.payload).toEqual({ imageId: started.id, recipe: 'debian12-python' });
    const progress: number[] = [];
    const service = createImageService({ db: t.container.db, dataDir, buildCommand: fakeMmdebstrap });
    const watcher = setInterval(() => {
      void t.container.db
        .select({ p: images.progress })
        .from(images)
        .where(eq(images.id, started.id))
        .then((r) => progress.push(r[0]!.p));
    }, 5);
    await service.runBuildJob(job!.payload);
    clearInterval(watcher);

    const [row] = await t.container.db.select().from(images).where(eq(images.id, started.id));
    expect(row!.status).toBe('ready');
    expect(row!.progress).toBe(100);
    expect(row!.contents).toEqual(['bash 5.2.15', 'Python 3.11.2']);
    expect(row!.os).toBe('Debian GNU/Linux 12 (bookworm)');
    expect(row!.rootPath).toBe(path.join(dataDir, 'images', started.slug, 'rootfs'));
    expect(fs.existsSync(path.join(row!.rootPath!, 'root/data'))).toBe(true);
    expect(progress.some((p) => p > 0 && p < 100)).toBe(true);

    const put = await t.request({ method: 'PUT', url: `/api/v1/operate/images/${started.id}`, token: op, payload: { name: '我的 Python 镜像', published: false } });
    expect(put.statusCode).toBe(200);
    expect(put.json().data).toMatchObject({ name: '我的 Python 镜像', published: false });
    const visible = (await t.request({ method: 'GET', url: '/api/v1/image/all', token: user })).json().data as { id: number }[];
    expect(visible.some((i) => i.id === started.id)).toBe(false);
    const ops = (await t.request({ method: 'GET', url: '/api/v1/operate/images', token: op })).json().data as { id: number; published: boolean }[];
    expect(ops.find((i) => i.id === started.id)?.published).toBe(false);

    expect((await t.request({ method: 'PUT', url: `/api/v1/operate/images/${started.id}`, token: op, payload: { name: '' } })).statusCode).toBe(400);
    const del = await t.request({ method: 'DELETE', url: `/api/v1/operate/images/${started.id}`, token: op });
    expect(del.statusCode).toBe(200);
    expect(fs.existsSync(path.join(dataDir, 'images', started.slug))).toBe(false);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/operate/images/${started.id}`, token: op })).statusCode).toBe(404);
  });

  it('a failed build ends as failed with the reason', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/operate/images/build', token: op, payload: { recipe: 'pytorch-cpu' } });
    const id = (res.json().data as { id: number }).id;
    const service = createImageService({ db: t.container.db, dataDir, buildCommand: fakeMmdebstrap });
    await service.runBuildJob({ imageId: id, recipe: 'pytorch-cpu' });
    const [row] = await t.container.db.select().from(images).where(eq(images.id, id));
    expect(row!.status).toBe('failed');
    expect(row!.error).toContain('Unable to locate package python3-torch');
    // failed images are not offered to users
    const listed = (await t.request({ method: 'GET', url: '/api/v1/image/all', token: user })).json().data as { id: number }[];
    expect(listed.some((i) => i.id === id)).toBe(false);
  });

  it.skipIf(!isRoot)('platform images are not editable by a tenant operator; missing ids are 404', async () => {
    const seeded = await t.container.images.ensureSeeded();
    expect((await t.request({ method: 'PUT', url: `/api/v1/operate/images/${seeded.id}`, token: op, payload: { published: false } })).statusCode).toBe(403);
    expect((await t.request({ method: 'DELETE', url: '/api/v1/operate/images/999999', token: op })).statusCode).toBe(404);
    expect((await t.request({ method: 'PUT', url: '/api/v1/operate/images/abc', token: op, payload: {} })).statusCode).toBe(400);
  });

  it('maps mmdebstrap stage lines to progress, never backwards', () => {
    expect(progressOfLine('I: running apt-get update...', 0)).toBe(10);
    expect(progressOfLine('I: extracting archives...', 10)).toBe(45);
    expect(progressOfLine('I: running apt-get update...', 45)).toBe(45);
    expect(progressOfLine('Get:1 http://deb.debian.org/debian bookworm InRelease', 45)).toBe(45);
  });
});
