CREATE TABLE "gpu_types" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "gpu_types_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"tenant_id" integer NOT NULL,
	"name" text NOT NULL,
	"memory_gb" integer NOT NULL,
	"vendor" text DEFAULT 'NVIDIA' NOT NULL,
	"sort" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "images" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "images_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"tenant_id" integer,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"os" text DEFAULT '' NOT NULL,
	"contents" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"status" text DEFAULT 'building' NOT NULL,
	"progress" integer DEFAULT 0 NOT NULL,
	"error" text,
	"root_path" text,
	"size_bytes" bigint DEFAULT 0 NOT NULL,
	"published" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "instances" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" integer NOT NULL,
	"user_id" bigint NOT NULL,
	"order_id" text,
	"machine_id" integer NOT NULL,
	"name" text NOT NULL,
	"status" text DEFAULT 'creating' NOT NULL,
	"status_reason" text DEFAULT '' NOT NULL,
	"charge_type" text NOT NULL,
	"period" text,
	"gpu_count" integer NOT NULL,
	"gpu_held" boolean DEFAULT true NOT NULL,
	"cpu_cores" integer NOT NULL,
	"memory_gb" integer NOT NULL,
	"system_disk_gb" integer NOT NULL,
	"data_disk_gb" integer NOT NULL,
	"image_id" integer NOT NULL,
	"hourly" bigint DEFAULT 0 NOT NULL,
	"password_sealed" text NOT NULL,
	"password_hash" text NOT NULL,
	"expires_at" timestamp with time zone,
	"release_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"stopped_at" timestamp with time zone,
	"released_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "machine_tags" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "machine_tags_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"tenant_id" integer NOT NULL,
	"name" text NOT NULL,
	"color" text DEFAULT 'blue' NOT NULL,
	"sort" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "machines" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "machines_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"tenant_id" integer NOT NULL,
	"datacenter_id" integer NOT NULL,
	"host_name" text NOT NULL,
	"gpu_type_id" integer NOT NULL,
	"gpu_total" integer NOT NULL,
	"gpu_used" integer DEFAULT 0 NOT NULL,
	"cpu_per_gpu" integer NOT NULL,
	"memory_gb_per_gpu" integer NOT NULL,
	"system_disk_gb" integer DEFAULT 30 NOT NULL,
	"data_disk_free_gb" integer DEFAULT 50 NOT NULL,
	"data_disk_max_gb" integer DEFAULT 500 NOT NULL,
	"data_disk_price_per_gb_day" bigint DEFAULT 0 NOT NULL,
	"price_hour" bigint NOT NULL,
	"price_day" bigint NOT NULL,
	"price_week" bigint NOT NULL,
	"price_month" bigint NOT NULL,
	"price_year" bigint NOT NULL,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"online" boolean DEFAULT true NOT NULL,
	"demo" boolean DEFAULT true NOT NULL,
	"driver" text DEFAULT 'local' NOT NULL,
	"gpu_devices" text[] DEFAULT '{}'::text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "machines_gpu_used_range" CHECK ("machines"."gpu_used" >= 0 AND "machines"."gpu_used" <= "machines"."gpu_total")
);
--> statement-breakpoint
CREATE TABLE "orders" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" integer NOT NULL,
	"user_id" bigint NOT NULL,
	"kind" text DEFAULT 'new' NOT NULL,
	"status" text DEFAULT 'unpaid' NOT NULL,
	"charge_type" text NOT NULL,
	"period" text,
	"quantity" integer,
	"machine_id" integer NOT NULL,
	"gpu_count" integer NOT NULL,
	"image_id" integer NOT NULL,
	"data_disk_gb" integer NOT NULL,
	"instance_name" text DEFAULT '' NOT NULL,
	"lines" jsonb NOT NULL,
	"amount" bigint NOT NULL,
	"hourly" bigint DEFAULT 0 NOT NULL,
	"instance_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"paid_at" timestamp with time zone,
	"closed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "bills" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "bills_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"tenant_id" integer NOT NULL,
	"user_id" bigint NOT NULL,
	"instance_id" text NOT NULL,
	"charge_type" text NOT NULL,
	"order_id" text,
	"period_start" timestamp with time zone NOT NULL,
	"period_end" timestamp with time zone NOT NULL,
	"seconds" integer DEFAULT 0 NOT NULL,
	"amount" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "instance_meters" (
	"instance_id" text PRIMARY KEY NOT NULL,
	"tenant_id" integer NOT NULL,
	"user_id" bigint NOT NULL,
	"hourly" bigint NOT NULL,
	"running_since" timestamp with time zone,
	"last_stopped_at" timestamp with time zone,
	"settled_until" timestamp with time zone NOT NULL,
	"accrued_ms" bigint DEFAULT 0 NOT NULL,
	"billed_ms" bigint DEFAULT 0 NOT NULL,
	"charged_total" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "instance_meters_ms" CHECK ("instance_meters"."billed_ms" >= 0 and "instance_meters"."billed_ms" <= "instance_meters"."accrued_ms")
);
--> statement-breakpoint
CREATE TABLE "ssh_keys" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "ssh_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"tenant_id" integer NOT NULL,
	"user_id" bigint NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"public_key" text NOT NULL,
	"fingerprint" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "gpu_types" ADD CONSTRAINT "gpu_types_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "images" ADD CONSTRAINT "images_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "instances" ADD CONSTRAINT "instances_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "instances" ADD CONSTRAINT "instances_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "instances" ADD CONSTRAINT "instances_machine_id_machines_id_fk" FOREIGN KEY ("machine_id") REFERENCES "public"."machines"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "instances" ADD CONSTRAINT "instances_image_id_images_id_fk" FOREIGN KEY ("image_id") REFERENCES "public"."images"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machine_tags" ADD CONSTRAINT "machine_tags_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machines" ADD CONSTRAINT "machines_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machines" ADD CONSTRAINT "machines_datacenter_id_datacenters_id_fk" FOREIGN KEY ("datacenter_id") REFERENCES "public"."datacenters"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machines" ADD CONSTRAINT "machines_gpu_type_id_gpu_types_id_fk" FOREIGN KEY ("gpu_type_id") REFERENCES "public"."gpu_types"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_machine_id_machines_id_fk" FOREIGN KEY ("machine_id") REFERENCES "public"."machines"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_image_id_images_id_fk" FOREIGN KEY ("image_id") REFERENCES "public"."images"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "instance_meters" ADD CONSTRAINT "instance_meters_instance_id_instances_id_fk" FOREIGN KEY ("instance_id") REFERENCES "public"."instances"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "instance_meters" ADD CONSTRAINT "instance_meters_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ssh_keys" ADD CONSTRAINT "ssh_keys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "gpu_types_tenant_name" ON "gpu_types" USING btree ("tenant_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "images_slug" ON "images" USING btree ("slug");--> statement-breakpoint
CREATE INDEX "instances_user" ON "instances" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "instances_status" ON "instances" USING btree ("status","charge_type");--> statement-breakpoint
CREATE INDEX "instances_machine" ON "instances" USING btree ("machine_id");--> statement-breakpoint
CREATE UNIQUE INDEX "machine_tags_tenant_name" ON "machine_tags" USING btree ("tenant_id","name");--> statement-breakpoint
CREATE INDEX "machines_tenant" ON "machines" USING btree ("tenant_id","datacenter_id");--> statement-breakpoint
CREATE UNIQUE INDEX "machines_tenant_host" ON "machines" USING btree ("tenant_id","host_name");--> statement-breakpoint
CREATE INDEX "orders_user_time" ON "orders" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "orders_unpaid" ON "orders" USING btree ("status","expires_at");--> statement-breakpoint
CREATE INDEX "bills_user_time" ON "bills" USING btree ("user_id","period_start");--> statement-breakpoint
CREATE UNIQUE INDEX "bills_instance_period" ON "bills" USING btree ("instance_id","period_start");--> statement-breakpoint
CREATE INDEX "instance_meters_user" ON "instance_meters" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "ssh_keys_user_fingerprint" ON "ssh_keys" USING btree ("user_id","fingerprint");