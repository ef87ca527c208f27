import { useState } from 'react';
import { Alert, AutoComplete, Button, Form, Input, InputNumber, Result } from 'antd';
import type { Rule } from 'antd/es/form';
import { CheckCircleOutlined, MailOutlined, PhoneOutlined, SafetyOutlined } from '@ant-design/icons';
import { useNavigate, useSearchParams } from 'react-router';
import { questionBody } from '@suanli/contract/question';
import { installZodLocale } from '@suanli/contract/zod-locale';
import { t, useT } from '../../locales/i18n.ts';
import { useTenant } from '../../modules/tenant.tsx';
import { useSubmitQuestion, type QuestionInput } from '../../api/queries/question.ts';
import { getErrorMessage } from '../../api/errors.ts';
import '../home/home.css';

// Zod is loaded only by the pages that validate with contract schemas; its messages in Chinese.
installZodLocale();

type Field = keyof typeof questionBody.shape;
type FormValues = { name?: string; phone?: string; company?: string; email?: string; gpuType?: string; gpuCount?: number | null; content?: string };

const OPTIONAL: ReadonlySet<Field> = new Set(['company', 'email', 'gpuType', 'gpuCount']);
const GPU_OPTIONS = ['RTX 4090', 'RTX 3090', 'L40S', 'A100', 'A800', 'H800', 'H20'].map((value) => ({ value }));

/** A blank optional field is "not given", as the API expects (it refuses empty strings). */
function given(field: Field, value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (OPTIONAL.has(field) && typeof value === 'string' && value.trim() === '') return undefined;
  return value;
}

type Issue = { code: string; maximum?: unknown };

/** The first problem of a field in the visitor's language (the contract's own messages are Chinese only). */
function issueMessage(field: Field, value: unknown, issue: Issue): string {
  const blank = value === undefined || (typeof value === 'string' && value.trim() === '');
  switch (field) {
    case 'phone':
      return t(blank ? 'auth.rules.phoneRequired' : 'auth.rules.phoneInvalid');
    case 'email':
      return t('site.reservation.errors.email');
    case 'gpuCount':
      return t('site.reservation.errors.gpuCount');
    default: {
      const label = t(`site.reservation.${field}`);
      if (issue.code === 'too_big') return t('site.reservation.errors.tooLong', { label, max: Number(issue.maximum) });
      if (issue.code === 'custom') return t('site.reservation.errors.controlChars', { label });
      return t(field === 'content' ? 'site.reservation.errors.contentRequired' : 'site.reservation.errors.nameRequired');
    }
  }
}

/** The contract's own schema checks each field, so the form and the API agree on the rules. */
const rule = (field: Field): Rule => ({
  validator: async (_rule, value: unknown) => {
    const v = given(field, value);
    const result = questionBody.shape[field].safeParse(v);
    const issue = result.success ? undefined : result.error.issues[0];
    if (issue) throw new Error(issueMessage(field, v, issue));
  },
});

function toBody(values: FormValues): QuestionInput {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values) as [Field, unknown][]) {
    const v = given(key, value);
    if (v !== undefined) body[key] = typeof v === 'string' ? v.trim() : v;
  }
  return body as QuestionInput;
}

/** SPEC §2 /reservationForm: the contact-sales form, POST /api/v1/questions/. */
export function ReservationFormPage() {
  const { t } = useT();
  const { config } = useTenant();
  const navigate = useNavigate();
  // ?gpu=… from a GPU card of the home page: the model the visitor asked about.
  const [params] = useSearchParams();
  const initialGpu = params.get('gpu')?.slice(0, 64) || undefined;
  const [form] = Form.useForm<FormValues>();
  const submit = useSubmitQuestion();
  const [createdId, setCreatedId] = useState<string | null>(null);

  const onFinish = (values: FormValues) => {
    submit.mutate(toBody(values), {
      onSuccess: (res) => {
        setCreatedId(res.id);
        // The form was scrolled past to reach the button: bring the confirmation into view.
        window.scrollTo({ top: 0, behavior: 'smooth' });
      },
    });
  };

  const again = () => {
    form.resetFields();
    submit.reset();
    setCreatedId(null);
  };

  return (
    <div style={{ background: '#f6f8fb', padding: '48px 0 80px' }} data-testid="reservation-page">
      <div className="sl-container rf-grid" style={{ gap: 24, alignItems: 'start' }}>
        <div className="sl-card" style={{ padding: '36px 40px' }}>
          {createdId ? (
            <Result
              status="success"
              title={t('site.reservation.successTitle')}
              subTitle={t('site.reservation.successSub', { id: createdId.slice(0, 8).toUpperCase() })}
              extra={[
                <Button type="primary" key="home" onClick={() => navigate('/')}>
                  {t('site.reservation.backHome')}
                </Button>,
                <Button key="again" onClick={again}>
                  {t('site.reservation.again')}
                </Button>,
              ]}
              data-testid="reservation-success"
            >
              <div style={{ maxWidth: 520, margin: '0 auto' }}>
                <div style={{ fontWeight: 600, marginBottom: 12, color: '#0f172a' }}>{t('site.reservation.nextTitle')}</div>
                {(['next1', 'next2', 'next3'] as const).map((k) => (
                  <div key={k} style={{ display: 'flex', gap: 10, marginBottom: 10, color: '#475569' }}>
                    <CheckCircleOutlined style={{ color: 'var(--brand)', marginTop: 4 }} />
                    <span>{t(`site.reservation.${k}`, { phone: config.contactPhone })}</span>
                  </div>
                ))}
              </div>
            </Result>
          ) : (
            <>
              <h1 style={{ fontSize: 26, margin: '0 0 8px', color: '#0f172a' }}>{t('site.reservation.heading')}</h1>
              <p style={{ color: '#526072', margin: '0 0 28px' }}>{t('site.reservation.desc')}</p>
              <Form<FormValues> form={form} layout="vertical" size="large" initialValues={{ gpuType: initialGpu }} onFinish={onFinish} disabled={submit.isPending} requiredMark data-testid="reservation-form">
                <div style={{ display: 'grid', gridTemplateColumns: 'repeat(auto-fit, minmax(min(100%, 220px), 1fr))', columnGap: 20 }}>
                  <Form.Item name="name" label={t('site.reservation.name')} required rules={[rule('name')]}>
                    <Input placeholder={t('site.reservation.namePlaceholder')} count={{ show: true, max: 32 }} autoComplete="name" />
                  </Form.Item>
                  <Form.Item name="phone" label={t('site.reservation.phone')} required rules={[rule('phone')]} validateTrigger="onBlur">
                    <Input placeholder={t('site.reservation.phonePlaceholder')} inputMode="numeric" autoComplete="tel" maxLength={11} />
                  </Form.Item>
                  <Form.Item name="company" label={t('site.reservation.company')} rules={[rule('company')]}>
                    <Input placeholder={t('site.reservation.companyPlaceholder')} count={{ show: true, max: 64 }} autoComplete="organization" />
                  </Form.Item>
                  <Form.Item name="email" label={t('site.reservation.email')} rules={[rule('email')]} validateTrigger="onBlur">
                    <Input placeholder={t('site.reservation.emailPlaceholder')} inputMode="email" autoComplete="email" />
                  </Form.Item>
                  <Form.Item name="gpuType" label={t('site.reservation.gpuType')} rules={[rule('gpuType')]}>
                    <AutoComplete options={GPU_OPTIONS} placeholder={t('site.reservation.gpuTypePlaceholder')} filterOption={(input, o) => (o?.value ?? '').toLowerCase().includes(input.toLowerCase())} />
                  </Form.Item>
                  <Form.Item name="gpuCount" label={t('site.reservation.gpuCount')} rules={[rule('gpuCount')]}>
                    <InputNumber style={{ width: '100%' }} placeholder={t('site.reservation.gpuCountPlaceholder')} min={1} max={100000} suffix={t('site.reservation.gpuCountUnit')} />
                  </Form.Item>
                </div>
                <Form.Item name="content" label={t('site.reservation.content')} required rules={[rule('content')]}>
                  <Input.TextArea rows={5} placeholder={t('site.reservation.contentPlaceholder')} count={{ show: true, max: 2000 }} />
                </Form.Item>
                {submit.isError && (
                  <Alert
                    type="error"
                    showIcon
                    title={t('site.reservation.failed')}
                    description={getErrorMessage(submit.error)}
                    style={{ marginBottom: 20 }}
                    data-testid="reservation-error"
                  />
                )}
                <Button type="primary" htmlType="submit" loading={submit.isPending} style={{ minWidth: 200, height: 46, marginTop: 8 }} data-testid="reservation-submit">
                  {submit.isPending ? t('site.reservation.submitting') : t('site.reservation.submit')}
                </Button>
                <div style={{ marginTop: 14, color: '#5f6b7d', fontSize: 13 }}>
                  <SafetyOutlined /> {t('site.reservation.privacy')}
                </div>
              </Form>
            </>
          )}
        </div>

        <aside style={{ display: 'grid', gap: 16 }}>
          <div className="sl-card" style={{ padding: 24 }}>
            <div style={{ fontWeight: 600, color: '#0f172a', marginBottom: 16 }}>{t('site.reservation.sideTitle')}</div>
            <div style={{ display: 'flex', gap: 12, alignItems: 'center', marginBottom: 16 }}>
              <span className="sl-icon-box" style={{ width: 40, height: 40, fontSize: 18 }}>
                <PhoneOutlined />
              </span>
              <div>
                <div style={{ fontSize: 12, color: '#5f6b7d' }}>{t('site.reservation.sidePhone')}</div>
                <a href={`tel:${config.contactPhone}`} style={{ fontSize: 16, fontWeight: 500, color: '#0f172a' }}>
                  {config.contactPhone}
                </a>
              </div>
            </div>
            <div style={{ display: 'flex', gap: 12, alignItems: 'center' }}>
              <span className="sl-icon-box" style={{ width: 40, height: 40, fontSize: 18 }}>
                <MailOutlined />
              </span>
              <div style={{ minWidth: 0 }}>
                <div style={{ fontSize: 12, color: '#5f6b7d' }}>{t('site.reservation.sideEmail')}</div>
                <a href={`mailto:${config.contactEmail}`} style={{ fontSize: 15, color: '#0f172a', wordBreak: 'break-all' }}>
                  {config.contactEmail}
                </a>
              </div>
            </div>
          </div>
          {/* After sending, the confirmation itself lists the next steps. */}
          {!createdId && (
            <div className="sl-card" style={{ padding: 24 }}>
              <div style={{ fontWeight: 600, color: '#0f172a', marginBottom: 12 }}>{t('site.reservation.nextTitle')}</div>
              {(['next1', 'next2'] as const).map((k, i) => (
                <div key={k} style={{ display: 'flex', gap: 10, marginBottom: 10, color: '#526072', fontSize: 14, lineHeight: 1.7 }}>
                  <b style={{ color: 'var(--brand)' }}>{i + 1}</b>
                  <span>{t(`site.reservation.${k}`)}</span>
                </div>
              ))}
            </div>
          )}
        </aside>
      </div>
    </div>
  );
}
