import { useCallback, useRef, useState, type ReactNode } from 'react';
import type { InputRef } from 'antd/es/input/Input';
// antd's own token hook (every antd component already loads it): the theme's AA error colour.
import useToken from 'antd/es/theme/useToken';
import styles from './PlainField.module.css';

/** When a check runs: 'change' skips the checks marked `onBlur` (typing clears their error). */
export type Trigger = 'change' | 'blur' | 'submit';

/** One rule of a field: the value passes `test`, else `message` is shown. */
export type Check = { test: (value: string) => boolean; message: string; onBlur?: boolean };

/** The first failing check's message for `value` at `trigger`, or null. */
export function firstError(checks: Check[], value: string, trigger: Trigger): string | null {
  for (const check of checks) {
    if (trigger === 'change' && check.onBlur) continue;
    if (!check.test(value)) return check.message;
  }
  return null;
}

/**
 * One field of a plain `<form>` (the sign-in forms load no antd Form): its value, its error and
 * the props that tie the input to the error text. `checks` is a function so its messages follow
 * the current language; `validateOnBlur` as antd's `validateTrigger` with onBlur.
 */
export function useField(id: string, checks: () => Check[], options: { initial?: string; validateOnBlur?: boolean } = {}) {
  const [value, setValue] = useState(options.initial ?? '');
  const [error, setError] = useState<string | null>(null);
  const ref = useRef<InputRef | null>(null);
  const latest = useRef(value);
  latest.current = value;

  const check = useCallback(
    (trigger: Trigger, v: string = latest.current) => {
      const message = firstError(checks(), v, trigger);
      setError(message);
      return message === null;
    },
    [checks],
  );

  return {
    id,
    value,
    error,
    ref,
    /** Sets the value and checks it as antd's onChange trigger does. */
    change(v: string) {
      setValue(v);
      latest.current = v;
      check('change', v);
    },
    blur() {
      if (options.validateOnBlur) check('blur');
    },
    /** Every check; false (and the error shown) when the value fails one. */
    validate: () => check('submit'),
    /** For the input: its id, and the error it is described by. */
    inputProps: {
      id,
      'aria-invalid': error ? true : undefined,
      'aria-describedby': error ? `${id}-error` : undefined,
    } as const,
  };
}

export type Field = ReturnType<typeof useField>;

/** Validates `fields` in order; focuses the first that fails. True when all pass. */
export function validateAll(fields: Field[]): boolean {
  let ok = true;
  for (const field of fields) {
    if (!field.validate() && ok) {
      ok = false;
      field.ref.current?.focus();
    }
  }
  return ok;
}

/** A field's row: the control, then its error text (what antd's Form.Item shows under an input). */
export function FieldRow({ field, children, className }: { field: Pick<Field, 'id' | 'error'>; children: ReactNode; className?: string }) {
  const [, token] = useToken();
  return (
    <div className={[styles.row, field.error ? styles.withError : '', className ?? ''].join(' ')}>
      {children}
      {field.error && (
        <div id={`${field.id}-error`} className={styles.error} style={{ color: token.colorError }} role="alert">
          {field.error}
        </div>
      )}
    </div>
  );
}
