import { Alert } from 'antd';

/** The muted colour of the icons inside the sign-in forms' inputs. */
export const iconStyle = { color: 'rgba(0,0,0,.35)' };

/** An error shown above a sign-in form: what failed and why. */
export type FormError = { title: string; message: string } | null;

/** The alert above a sign-in or sign-up form, when there is an error to show. */
export function FormErrorAlert({ error, testId }: { error: FormError; testId: string }) {
  if (!error) return null;
  return <Alert type="error" showIcon title={error.title} description={error.message} style={{ marginBottom: 16 }} data-testid={testId} />;
}
