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
ALTER TABLE "bills" DROP CONSTRAINT "bills_user_id_users_id_fk";
--> statement-breakpoint
ALTER TABLE "bills" DROP CONSTRAINT "bills_instance_id_instances_id_fk";
--> statement-breakpoint
ALTER TABLE "instance_meters" ADD CONSTRAINT "instance_meters_instance_id_instances_id_fk" FOREIGN KEY ("instance_id") REFERENCES "public"."instances"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "instance_meters" ADD CONSTRAINT "instance_meters_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "instance_meters_user" ON "instance_meters" USING btree ("user_id");