import type { SmsSender } from './port.ts';

export type AliyunSmsOptions = { accessKeyId: string; accessKeySecret: string; signName: string; templateCode: string; endpoint: string };

export function createAliyunSms(_opts: AliyunSmsOptions): SmsSender {
  return {
    name: 'aliyun',
    async sendCode() {
      throw new Error('aliyun adapter pending');
    },
  };
}
