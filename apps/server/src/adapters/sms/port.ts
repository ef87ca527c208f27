/** Sends an SMS verification code. Adapters: console (development), aliyun. */
export interface SmsSender {
  readonly name: 'console' | 'aliyun';
  sendCode(input: { phone: string; code: string; signName?: string }): Promise<void>;
}
