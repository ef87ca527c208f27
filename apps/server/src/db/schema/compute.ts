import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { imageStatuses } from '@suanli/contract/machine';
import { imageKinds, copyStatuses } from '@suanli/contract/instance-ops';
import { chargeTypes, orderKinds, orderStatuses, prepaidPeriods, type OrderLine } from '@suanli/contract/order';
import { instanceStatuses } from '@suanli/contract/instance';
import { tenants } from './tenant.ts';
import { users } from './user.ts';
import { datacenters } from './datahub.ts';

/** GPU models a tenant rents out (data, not code). */
export const gpuTypes = pgTable(
  'gpu_types',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    tenantId: integer('tenant_id')
      .notNull()
      .references(() => tenants.id),
    name: text('name').notNull(),
    memoryGb: integer('memory_gb').notNull(),
    vendor: text('vendor').notNull().default('NVIDIA'),
    sort: integer('sort').notNull().default(0),
  },
  (t) => [uniqueIndex('gpu_types_tenant_name').on(t.tenantId, t.name)],
);

/** Machine tags shown in the market (GET /api/v1/common/tag). */
export const machineTags = pgTable(
  'machine_tags',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    tenantId: integer('tenant_id')
      .notNull()
      .references(() => tenants.id),
    name: text('name').notNull(),
    color: text('color').notNull().default('blue'),
    sort: integer('sort').notNull().default(0),
  },
  (t) => [uniqueIndex('machine_tags_tenant_name').on(t.tenantId, t.name)],
);

/**
 * A host in a datacenter with N GPUs of one type. `gpu_used` counts the GPUs held by instances:
 * paying an order takes them with one conditional UPDATE, so two payers for the last GPU can't
 * both win. Prices are per GPU, in units of 0.0001 yuan.
 */
export const machines = pgTable(
  'machines',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    tenantId: integer('tenant_id')
      .notNull()
      .references(() => tenants.id),
    datacenterId: integer('datacenter_id')
      .notNull()
      .references(() => datacenters.id),
    hostName: text('host_name').notNull(),
    gpuTypeId: integer('gpu_type_id')
      .notNull()
      .references(() => gpuTypes.id),
    gpuTotal: integer('gpu_total').notNull(),
    gpuUsed: integer('gpu_used').notNull().default(0),
    cpuPerGpu: integer('cpu_per_gpu').notNull(),
    memoryGbPerGpu: integer('memory_gb_per_gpu').notNull(),
    systemDiskGb: integer('system_disk_gb').notNull().default(30),
    dataDiskFreeGb: integer('data_disk_free_gb').notNull().default(50),
    dataDiskMaxGb: integer('data_disk_max_gb').notNull().default(500),
    dataDiskPricePerGbDay: bigint('data_disk_price_per_gb_day', { mode: 'number' }).notNull().default(0),
    priceHour: bigint('price_hour', { mode: 'number' }).notNull(),
    priceDay: bigint('price_day', { mode: 'number' }).notNull(),
    priceWeek: bigint('price_week', { mode: 'number' }).notNull(),
    priceMonth: bigint('price_month', { mode: 'number' }).notNull(),
    priceYear: bigint('price_year', { mode: 'number' }).notNull(),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    online: boolean('online').notNull().default(true),
    /** No physical GPUs: instances say so. */
    demo: boolean('demo').notNull().default(true),
    /** Compute driver that runs its instances (`local`). */
    driver: text('driver').notNull().default('local'),
    /** Device nodes of real GPUs passed to instances (/dev/nvidia0 …), when nvidia-smi found them. */
    gpuDevices: text('gpu_devices').array().notNull().default(sql`'{}'::text[]`),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('machines_tenant').on(t.tenantId, t.datacenterId),
    uniqueIndex('machines_tenant_host').on(t.tenantId, t.hostName),
    check('machines_gpu_used_range', sql`${t.gpuUsed} >= 0 AND ${t.gpuUsed} <= ${t.gpuTotal}`),
  ],
);

/** A read-only root filesystem under $DATA_DIR/images/<id>; instances overlay their own writable layer. */
export const images = pgTable(
  'images',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    /** Null: offered on every tenant. */
    tenantId: integer('tenant_id').references(() => tenants.id),
    /** Stable key for seeding and the operator command ("host-base", "debian12-python"). */
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    os: text('os').notNull().default(''),
    contents: jsonb('contents').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    status: text('status', { enum: imageStatuses }).notNull().default('building'),
    progress: integer('progress').notNull().default(0),
    error: text('error'),
    /** Where its root filesystem lies (absolute), once built. */
    rootPath: text('root_path'),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull().default(0),
    published: boolean('published').notNull().default(true),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    // Issue #10: private images, saved from an instance's system disk (snapshots).
    /** platform (tenant_id null), tenant (an operator's), private (a user's snapshot). */
    kind: text('kind', { enum: imageKinds }).notNull().default('platform'),
    /** The user a private image belongs to. */
    ownerUserId: bigint('owner_user_id', { mode: 'number' }).references(() => users.id),
    /** The instance it was saved from (kept after that instance is released). */
    sourceInstanceId: text('source_instance_id'),
    sourceInstanceName: text('source_instance_name').notNull().default(''),
    /** The image it lies over (its lower layers); a base can't be deleted while an image lies over it. */
    parentImageId: integer('parent_image_id'),
    /**
     * Layers over `root_path`, topmost first (absolute dirs, each with `root/` and optionally `usr/`
     * for images whose /usr is the host's): the instance's overlay stacks them above the base.
     */
    layers: jsonb('layers').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    /** Shared to the tenant's image community. */
    shared: boolean('shared').notNull().default(false),
    sharedAt: timestamp('shared_at', { withTimezone: true }),
    /** Instances other users created from it. */
    useCount: integer('use_count').notNull().default(0),
    /** A deleted private image: its layer is removed, the row kept for the orders and instances that name it. */
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('images_slug').on(t.slug), index('images_owner').on(t.ownerUserId), index('images_shared').on(t.tenantId, t.shared)],
);

export const orders = pgTable(
  'orders',
  {
    /** Digits: yyyymmddHHMMSS + random, what the user sees and quotes. */
    id: text('id').primaryKey(),
    tenantId: integer('tenant_id').notNull(),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id),
    kind: text('kind', { enum: orderKinds }).notNull().default('new'),
    status: text('status', { enum: orderStatuses }).notNull().default('unpaid'),
    chargeType: text('charge_type', { enum: chargeTypes }).notNull(),
    period: text('period', { enum: prepaidPeriods }),
    quantity: integer('quantity'),
    machineId: integer('machine_id')
      .notNull()
      .references(() => machines.id),
    gpuCount: integer('gpu_count').notNull(),
    imageId: integer('image_id')
      .notNull()
      .references(() => images.id),
    dataDiskGb: integer('data_disk_gb').notNull(),
    instanceName: text('instance_name').notNull().default(''),
    /**
     * Issue #10, orders that change an instance: what the change asks for, by kind — renewal and
     * charge_type { period, quantity }, spec_change { gpuCount, fromGpuCount }, data_disk
     * { dataDiskGb, fromDataDiskGb }, clone { sourceInstanceId }. `instance_id` names the instance
     * changed (for clone: the new one, once paid). Empty for new-instance orders.
     */
    params: jsonb('params').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    lines: jsonb('lines').$type<OrderLine[]>().notNull(),
    /** Taken from the balance when paid (0 for pay-as-you-go); negative: refunded (issue #10 changes). */
    amount: bigint('amount', { mode: 'number' }).notNull(),
    /** Pay-as-you-go price per hour at the time of ordering. */
    hourly: bigint('hourly', { mode: 'number' }).notNull().default(0),
    instanceId: text('instance_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    paidAt: timestamp('paid_at', { withTimezone: true }),
    closedAt: timestamp('closed_at', { withTimezone: true }),
  },
  (t) => [index('orders_user_time').on(t.userId, t.createdAt), index('orders_unpaid').on(t.status, t.expiresAt), index('orders_instance').on(t.instanceId)],
);

export const instances = pgTable(
  'instances',
  {
    /** `i-` + 10 lowercase letters/digits: the SSH user name and the hostname. */
    id: text('id').primaryKey(),
    tenantId: integer('tenant_id').notNull(),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id),
    orderId: text('order_id').references(() => orders.id),
    machineId: integer('machine_id')
      .notNull()
      .references(() => machines.id),
    name: text('name').notNull(),
    status: text('status', { enum: instanceStatuses }).notNull().default('creating'),
    statusReason: text('status_reason').notNull().default(''),
    chargeType: text('charge_type', { enum: chargeTypes }).notNull(),
    period: text('period', { enum: prepaidPeriods }),
    gpuCount: integer('gpu_count').notNull(),
    /** Whether its GPUs are counted in machines.gpu_used right now. */
    gpuHeld: boolean('gpu_held').notNull().default(true),
    cpuCores: integer('cpu_cores').notNull(),
    memoryGb: integer('memory_gb').notNull(),
    systemDiskGb: integer('system_disk_gb').notNull(),
    dataDiskGb: integer('data_disk_gb').notNull(),
    imageId: integer('image_id')
      .notNull()
      .references(() => images.id),
    /** Pay-as-you-go price per hour (units). */
    hourly: bigint('hourly', { mode: 'number' }).notNull().default(0),
    /** Issue #10: running (or starting) in no-GPU mode (无卡模式): no GPU held, NO_GPU_HOURLY. */
    noGpu: boolean('no_gpu').notNull().default(false),
    /** Issue #10: a clone's source; provisioning copies its disks instead of starting from the image. */
    cloneSourceId: text('clone_source_id'),
    /** Root password, sealed (AES-GCM) for display, and its argon2 hash for SSH logins. */
    passwordSealed: text('password_sealed').notNull(),
    passwordHash: text('password_hash').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    releaseAt: timestamp('release_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    stoppedAt: timestamp('stopped_at', { withTimezone: true }),
    releasedAt: timestamp('released_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('instances_user').on(t.userId, t.createdAt),
    index('instances_status').on(t.status, t.chargeType),
    index('instances_machine').on(t.machineId),
  ],
);

/**
 * Issue #10: a data copy between two of a user's instances' data disks, a persisted job
 * (`instance.copy_data`) that survives a restart: it resumes, skipping files already copied whole.
 */
export const dataCopies = pgTable(
  'data_copies',
  {
    /** `cp-` + 12 lowercase letters/digits. */
    id: text('id').primaryKey(),
    tenantId: integer('tenant_id').notNull(),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id),
    sourceInstanceId: text('source_instance_id')
      .notNull()
      .references(() => instances.id),
    targetInstanceId: text('target_instance_id')
      .notNull()
      .references(() => instances.id),
    sourcePath: text('source_path').notNull().default(''),
    targetPath: text('target_path').notNull().default(''),
    status: text('status', { enum: copyStatuses }).notNull().default('queued'),
    totalBytes: bigint('total_bytes', { mode: 'number' }).notNull().default(0),
    copiedBytes: bigint('copied_bytes', { mode: 'number' }).notNull().default(0),
    files: integer('files').notNull().default(0),
    error: text('error').notNull().default(''),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('data_copies_user').on(t.userId, t.createdAt), index('data_copies_source').on(t.sourceInstanceId), index('data_copies_target').on(t.targetInstanceId)],
);
