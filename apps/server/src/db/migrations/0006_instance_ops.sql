CREATE TABLE "data_copies" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" integer NOT NULL,
	"user_id" bigint NOT NULL,
	"source_instance_id" text NOT NULL,
	"target_instance_id" text NOT NULL,
	"source_path" text DEFAULT '' NOT NULL,
	"target_path" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"total_bytes" bigint DEFAULT 0 NOT NULL,
	"copied_bytes" bigint DEFAULT 0 NOT NULL,
	"files" integer DEFAULT 0 NOT NULL,
	"error" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "images" ADD COLUMN "kind" text DEFAULT 'platform' NOT NULL;--> statement-breakpoint
ALTER TABLE "images" ADD COLUMN "owner_user_id" bigint;--> statement-breakpoint
ALTER TABLE "images" ADD COLUMN "source_instance_id" text;--> statement-breakpoint
ALTER TABLE "images" ADD COLUMN "source_instance_name" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "images" ADD COLUMN "parent_image_id" integer;--> statement-breakpoint
ALTER TABLE "images" ADD COLUMN "layers" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "images" ADD COLUMN "shared" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "images" ADD COLUMN "shared_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "images" ADD COLUMN "use_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "images" ADD COLUMN "deleted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "instances" ADD COLUMN "no_gpu" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "instances" ADD COLUMN "clone_source_id" text;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "params" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "bills" ADD COLUMN "refunded_amount" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "bills" ADD COLUMN "refunded_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "data_copies" ADD CONSTRAINT "data_copies_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "data_copies" ADD CONSTRAINT "data_copies_source_instance_id_instances_id_fk" FOREIGN KEY ("source_instance_id") REFERENCES "public"."instances"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "data_copies" ADD CONSTRAINT "data_copies_target_instance_id_instances_id_fk" FOREIGN KEY ("target_instance_id") REFERENCES "public"."instances"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "data_copies_user" ON "data_copies" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "data_copies_source" ON "data_copies" USING btree ("source_instance_id");--> statement-breakpoint
CREATE INDEX "data_copies_target" ON "data_copies" USING btree ("target_instance_id");--> statement-breakpoint
ALTER TABLE "images" ADD CONSTRAINT "images_owner_user_id_users_id_fk" FOREIGN KEY ("owner_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "images_owner" ON "images" USING btree ("owner_user_id");--> statement-breakpoint
CREATE INDEX "images_shared" ON "images" USING btree ("tenant_id","shared");--> statement-breakpoint
CREATE INDEX "orders_instance" ON "orders" USING btree ("instance_id");--> statement-breakpoint
UPDATE "images" SET "kind" = 'tenant' WHERE "tenant_id" IS NOT NULL;