import { lazy, Suspense, useRef, useState, type FormEvent } from 'react';
import { Alert, Button } from 'antd';
import Input from 'antd/es/input/Input';
import Password from 'antd/es/input/Password';
import { LockOutlined, MobileOutlined } from '@ant-design/icons';
import { useLocation, useNavigate } from 'react-router';
import { ErrorReason } from '@suanli/contract/errors';
import { useLoginCode, useLoginPassword } from '../../api/queries/user.ts';
import { toApiError } from '../../api/errors.ts';
import { afterLoginPath } from '../../guards.ts';
import { t as translate, useT } from '../../locales/i18n.ts';
import { AuthLayout } from './AuthLayout.tsx';
import { useCaptchaGate } from './useCaptchaGate.tsx';
import { FormErrorAlert, iconStyle, type FormError } from './AuthAlert.tsx';
import { FieldRow, useField, validateAll, type Field } from './PlainField.tsx';
import { SmsCodeControl } from './SmsCodeControl.tsx';
import { MethodSwitch } from './MethodSwitch.tsx';
import { loginPasswordChecks, phoneChecks, smsCodeChecks } from './rules.ts';

/*
 * The sign-in forms are plain <form>s with the rules of rules.ts (PlainField.tsx): antd's Form,
 * its validator and the Tooltip every Form.Item label imports would be a third of this page's
 * first load.
 */

type PasswordValues = { phone: string; password: string };
type CodeValues = { phone: string; code: string };

/** The phone field of both forms; typing it also tells the page (it follows the visitor between tabs). */
function PhoneInput({ field, testId, onPhoneChange }: { field: Field; testId: string; onPhoneChange: (phone: string) => void }) {
  const { t } = useT();
  return (
    <FieldRow field={field}>
      <Input
        {...field.inputProps}
        ref={field.ref}
        size="large"
        value={field.value}
        status={field.error ? 'error' : undefined}
        onChange={(e) => {
          field.change(e.target.value);
          onPhoneChange(e.target.value);
        }}
        onBlur={field.blur}
        prefix={<MobileOutlined style={iconStyle} />}
        maxLength={11}
        inputMode="numeric"
        autoComplete="tel"
        placeholder={t('auth.field.phonePlaceholder')}
        aria-label={t('auth.field.phone')}
        data-testid={testId}
      />
    </FieldRow>
  );
}

/** Stops the browser's submit; runs `submit` once every field passes. */
function onValid(fields: Field[], submit: () => void) {
  return (e: FormEvent) => {
    e.preventDefault();
    if (validateAll(fields)) submit();
  };
}


/** A failed sign-in for the form's alert; a lock gets its own title (the message says how long). */
function signInError(err: unknown): NonNullable<FormError> {
  const e = toApiError(err);
  return { title: translate(e.reason === ErrorReason.AccountLocked ? 'auth.login.lockedTitle' : 'auth.login.failedTitle'), message: e.message };
}

/** Where to go once signed in: the page that sent the visitor here, else the console. */
function useAfterLogin() {
  const navigate = useNavigate();
  const location = useLocation();
  return () => navigate(afterLoginPath(location.search), { replace: true });
}

/**
 * 密码登录. After 3 failures the server wants a captcha (CAPTCHA_REQUIRED): the captcha opens
 * and the same sign-in is retried with its ticket; from then on every try solves one first.
 * After 10 the account is locked for a while (ACCOUNT_LOCKED) and the server's message says how long.
 */
function PasswordLoginForm({ phone, onPhoneChange, onForgot }: { phone: string; onPhoneChange: (phone: string) => void; onForgot: () => void }) {
  const { t } = useT();
  const phoneField = useField('login-phone-input', phoneChecks, { initial: phone, validateOnBlur: true });
  const passwordField = useField('login-password-input', loginPasswordChecks);
  const login = useLoginPassword();
  const captcha = useCaptchaGate();
  const done = useAfterLogin();
  const [error, setError] = useState<FormError>(null);
  const needsCaptcha = useRef(false);

  async function attempt(values: PasswordValues, ticket?: string): Promise<void> {
    try {
      await login.mutateAsync({ phone: values.phone.trim(), password: values.password, captchaTicket: ticket });
      needsCaptcha.current = false;
      done();
    } catch (err) {
      setError(signInError(err));
      const reason = toApiError(err).reason;
      // A wrong password that makes the next try need a captcha: fix the password first.
      if (reason === ErrorReason.CaptchaNext) needsCaptcha.current = true;
      if (reason !== ErrorReason.CaptchaRequired) return;
      needsCaptcha.current = true;
      if (ticket) return; // refused even with a ticket (it ran out): the next try solves another
      // The server asked for a captcha before checking anything: solve it and send the same try.
      const pass = await captcha.ask();
      if (pass?.ticket) await attempt(values, pass.ticket);
    }
  }

  async function submit(values: PasswordValues) {
    setError(null);
    let ticket: string | undefined;
    if (needsCaptcha.current) {
      const pass = await captcha.ask();
      if (!pass) return;
      ticket = pass.ticket;
    }
    await attempt(values, ticket);
  }

  return (
    <form noValidate onSubmit={onValid([phoneField, passwordField], () => void submit({ phone: phoneField.value, password: passwordField.value }))}>
      <FormErrorAlert error={error} testId="login-error" />
      <PhoneInput field={phoneField} testId="login-phone" onPhoneChange={onPhoneChange} />
      <FieldRow field={passwordField}>
        <Password
          {...passwordField.inputProps}
          ref={passwordField.ref}
          size="large"
          value={passwordField.value}
          status={passwordField.error ? 'error' : undefined}
          onChange={(e) => passwordField.change(e.target.value)}
          prefix={<LockOutlined style={iconStyle} />}
          maxLength={64}
          autoComplete="current-password"
          placeholder={t('auth.field.passwordPlaceholder')}
          aria-label={t('auth.field.password')}
          data-testid="login-password"
        />
      </FieldRow>
      <div style={{ display: 'flex', justifyContent: 'flex-end', marginTop: -12, marginBottom: 12 }}>
        <Button type="link" size="small" style={{ padding: 0 }} onClick={onForgot} data-testid="login-forgot">
          {t('auth.login.forgot')}
        </Button>
      </div>
      <div style={{ marginBottom: 12 }}>
        <Button type="primary" size="large" htmlType="submit" block loading={login.isPending} data-testid="login-submit">
          {t('auth.login.submit')}
        </Button>
      </div>
      {captcha.modal}
    </form>
  );
}

/** 验证码登录: an SMS code of purpose 'login' instead of the password. */
function CodeLoginForm({ phone, onPhoneChange }: { phone: string; onPhoneChange: (phone: string) => void }) {
  const { t } = useT();
  const phoneField = useField('login-code-phone-input', phoneChecks, { initial: phone, validateOnBlur: true });
  const codeField = useField('login-code-input', smsCodeChecks, { validateOnBlur: true });
  const login = useLoginCode();
  const done = useAfterLogin();
  const [error, setError] = useState<FormError>(null);

  async function submit(values: CodeValues) {
    setError(null);
    try {
      await login.mutateAsync({ phone: values.phone.trim(), code: values.code.trim() });
      done();
    } catch (err) {
      setError(signInError(err));
    }
  }

  return (
    <form noValidate onSubmit={onValid([phoneField, codeField], () => void submit({ phone: phoneField.value, code: codeField.value }))}>
      <FormErrorAlert error={error} testId="login-code-error" />
      <PhoneInput field={phoneField} testId="login-code-phone" onPhoneChange={onPhoneChange} />
      <FieldRow field={codeField}>
        <SmsCodeControl
          {...codeField.inputProps}
          inputRef={codeField.ref}
          purpose="login"
          testIdPrefix="login"
          phone={phoneField.value.trim()}
          checkPhone={() => (phoneField.validate() ? phoneField.value.trim() : null)}
          value={codeField.value}
          status={codeField.error ? 'error' : undefined}
          onChange={codeField.change}
          onBlur={codeField.blur}
          onError={(message) => setError(message ? { title: t('auth.sms.failedTitle'), message } : null)}
        />
      </FieldRow>
      <div style={{ marginBottom: 12 }}>
        <Button type="primary" size="large" htmlType="submit" block loading={login.isPending} data-testid="login-code-submit">
          {t('auth.login.submit')}
        </Button>
      </div>
    </form>
  );
}

/** /login: password or SMS code, 忘记密码, and the way to /register. */
type LoginTab = 'password' | 'code';

// Loaded when first opened: most sign-ins never need it.
const ForgotPasswordModal = lazy(() => import('./ForgotPasswordModal.tsx').then((m) => ({ default: m.ForgotPasswordModal })));

export function LoginPage() {
  const { t } = useT();
  const location = useLocation();
  const [tab, setTab] = useState<LoginTab>('password');
  const [forgotOpen, setForgotOpen] = useState(false);
  const [forgotUsed, setForgotUsed] = useState(false);
  // Typed once, the phone follows the visitor between the tabs and into 忘记密码.
  const [phone, setPhone] = useState('');
  const [formKey, setFormKey] = useState(0);
  // Sent here by the guard from a page that needs a session (?redirect=…): say so.
  const redirected = new URLSearchParams(location.search).has('redirect');

  return (
    <AuthLayout page="login">
      {redirected && <Alert type="info" showIcon title={t('auth.login.redirectHint')} style={{ marginBottom: 16 }} data-testid="login-redirect-hint" />}
      {/* Rather than antd Tabs or Segmented: same behaviour, a much smaller first page load. */}
      <MethodSwitch<LoginTab>
        value={tab}
        onChange={setTab}
        label={t('auth.login.method')}
        options={[
          { value: 'password', label: <span data-testid="login-tab-password">{t('auth.login.tabPassword')}</span> },
          { value: 'code', label: <span data-testid="login-tab-code">{t('auth.login.tabCode')}</span> },
        ]}
      />
      {tab === 'password' ? (
        <PasswordLoginForm key={formKey} phone={phone} onPhoneChange={setPhone} onForgot={() => {
            setForgotUsed(true);
            setForgotOpen(true);
          }} />
      ) : (
        <CodeLoginForm phone={phone} onPhoneChange={setPhone} />
      )}
      {forgotUsed && (
        <Suspense fallback={null}>
          <ForgotPasswordModal
            open={forgotOpen}
            initialPhone={phone}
            onClose={() => setForgotOpen(false)}
            onDone={(resetPhone) => {
              setForgotOpen(false);
              setPhone(resetPhone);
              setTab('password');
              setFormKey((k) => k + 1); // a fresh password form, filled with the phone just reset
            }}
          />
        </Suspense>
      )}
    </AuthLayout>
  );
}
