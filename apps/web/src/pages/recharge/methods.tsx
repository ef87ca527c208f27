import type { ReactNode } from 'react';
import { AlipayCircleOutlined, ExperimentOutlined, WechatOutlined } from '@ant-design/icons';
import type { PaymentMethod } from '@suanli/contract/payment';

/** The look of each payment method: its mark and colour. */
export const METHOD_LOOK: Record<PaymentMethod, { icon: ReactNode; color: string }> = {
  alipay: { icon: <AlipayCircleOutlined />, color: '#1677ff' },
  wechat: { icon: <WechatOutlined />, color: '#07c160' },
  sandbox: { icon: <ExperimentOutlined />, color: '#722ed1' },
};
