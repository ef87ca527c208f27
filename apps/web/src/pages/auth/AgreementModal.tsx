import { Modal, Typography } from 'antd';
import { useT } from '../../locales/i18n.ts';
import { useTenant } from '../../modules/tenant.tsx';

export type AgreementKind = 'agreement' | 'privacy';

/** 用户协议 / 隐私政策; 「我已阅读并同意」 also ticks the consent box (onAgree), the close button doesn't. */
export function AgreementModal({ kind, onClose, onAgree }: { kind: AgreementKind | null; onClose: () => void; onAgree?: () => void }) {
  const { t } = useT();
  const tenant = useTenant();
  const company = tenant.config.companyName || tenant.title;
  const shown = kind ?? 'agreement';
  const paragraphs = t(`auth.${shown}.body`, { company }).split('\n');
  return (
    <Modal
      open={kind !== null}
      title={t(`auth.${shown}.title`)}
      onCancel={onClose}
      onOk={() => {
        onAgree?.();
        onClose();
      }}
      okText={t(`auth.${shown}.ok`)}
      cancelButtonProps={{ style: { display: 'none' } }}
      width={640}
    >
      <div style={{ maxHeight: '60vh', overflowY: 'auto', paddingRight: 8 }}>
        {paragraphs.map((p, i) => (
          <Typography.Paragraph key={i} style={{ lineHeight: 1.8 }}>
            {p}
          </Typography.Paragraph>
        ))}
      </div>
    </Modal>
  );
}
