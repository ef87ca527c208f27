import { Form } from 'antd';
import { SmsCodeControl, type SmsCodeControlProps } from './SmsCodeControl.tsx';

type Props = Omit<SmsCodeControlProps, 'phone' | 'checkPhone' | 'status' | 'inputRef' | 'onBlur'> & {
  /** The field of the surrounding form that holds the phone the code goes to. */
  phoneField?: string;
};

/**
 * The SMS code control inside an antd Form (Form.Item fills in id/value/onChange): the phone
 * comes from the form's `phoneField`, validated by the form before a code is sent.
 */
export function SmsCodeInput({ phoneField = 'phone', ...props }: Props) {
  const form = Form.useFormInstance();
  const watchedPhone = Form.useWatch<string | undefined>(phoneField, form);

  async function checkPhone(): Promise<string | null> {
    try {
      await form.validateFields([phoneField]);
    } catch {
      return null;
    }
    return String(form.getFieldValue(phoneField) ?? '').trim();
  }

  return <SmsCodeControl {...props} phone={String(watchedPhone ?? '').trim()} checkPhone={checkPhone} />;
}
