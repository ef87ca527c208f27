import { useEffect } from 'react';
import { message, Modal } from 'antd';
import { registerFeedbackHolder } from './feedback.ts';

/** antd's message and modal holders, inside the app's ConfigProvider (theme, locale). */
export function FeedbackHost() {
  const [messageApi, messageHolder] = message.useMessage();
  const [modalApi, modalHolder] = Modal.useModal();
  useEffect(() => {
    registerFeedbackHolder({ message: messageApi, modal: modalApi });
    return () => registerFeedbackHolder(null);
  }, [messageApi, modalApi]);
  return (
    <>
      {messageHolder}
      {modalHolder}
    </>
  );
}
