import { useId, type ReactNode } from 'react';
import styles from './MethodSwitch.module.css';

type Option<T extends string> = { value: T; label: ReactNode };

/**
 * A two-way switch in the look of antd's block Segmented, built on native radios (arrow keys move
 * between them, the group is named): the sign-in page's first load skips Segmented and the
 * Tooltip and popup-trigger code it imports.
 */
export function MethodSwitch<T extends string>({ value, onChange, options, label }: { value: T; onChange: (value: T) => void; options: Option<T>[]; label: string }) {
  const name = useId();
  return (
    <div role="radiogroup" aria-label={label} className={styles.group}>
      {options.map((o) => (
        <label key={o.value} className={o.value === value ? `${styles.item} ${styles.selected}` : styles.item}>
          <input className={styles.input} type="radio" name={name} value={o.value} checked={o.value === value} onChange={() => onChange(o.value)} />
          <span className={styles.label}>{o.label}</span>
        </label>
      ))}
    </div>
  );
}
