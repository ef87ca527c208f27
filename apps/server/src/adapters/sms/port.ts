/** Sends an SMS verification code. Adapters: console (development), aliyun. */
export interface SmsSender {
  readonly name: 'console' | 'aliyun';
  /** `tenantId` says whose code it is (the console adapter's inbox is per tenant). */
  sendCode(input: { tenantId: number; phone: string; code: string; signName?: string }): Promise<void>;
}
