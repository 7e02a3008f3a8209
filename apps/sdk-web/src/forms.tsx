import { useEffect, useRef, useState } from 'preact/hooks';
import type { FieldSet, Question } from './api';
import type { ScreenError } from './errors';
import { COUNTRY_KEYS, countryOptions } from './countries';
import { fieldLabel, type Translate } from './i18n';
import { changedFields } from './session-state';

const INPUT_TYPES: Record<string, string> = {
  dateOfBirth: 'date',
  incorporatedOn: 'date',
  email: 'email',
  phone: 'tel',
};
const AUTOCOMPLETE: Record<string, string> = {
  firstName: 'given-name',
  lastName: 'family-name',
  middleName: 'additional-name',
  dateOfBirth: 'bday',
  email: 'email',
  phone: 'tel',
  address: 'street-address',
  companyName: 'organization',
};
const LEGAL_FORM_CATALOGUE = [
  'llc',
  'corporation',
  'partnership',
  'limited_partnership',
  'sole_proprietorship',
  'ltd',
  'plc',
  'gmbh',
  'ag',
  'sa',
  'sarl',
  'bv',
  'foundation',
  'trust',
  'other',
];

const LEGAL_FORM_LABELS: Record<string, string> = {
  llc: 'LLC',
  ltd: 'Ltd',
  plc: 'PLC',
  gmbh: 'GmbH',
  ag: 'AG',
  sa: 'SA',
  sarl: 'SARL',
  bv: 'BV',
};

export const readable = (value: string) => value.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());

/** The error region of a screen: announced by screen readers as soon as it changes. */
export function ErrorMessage({ message }: { message: string | undefined }) {
  return (
    <p class="error" role="alert" aria-live="assertive" id="screen-error">
      {message ?? ''}
    </p>
  );
}

interface FieldsFormProps {
  t: Translate;
  lang: string;
  fields: FieldSet;
  legalForms?: string[];
  busy: boolean;
  /** The server's refusal; the field it names is marked invalid and focused. */
  error?: ScreenError;
  submitLabel: string;
  onSubmit: (values: Record<string, string | null>) => void;
}

/**
 * The personal-info or company-data form: one labelled input per enabled level key, required ones marked,
 * partner-claimed (locked) ones disabled with their value and a hint that they cannot be changed.
 */
export function FieldsForm({
  t,
  lang,
  fields,
  legalForms,
  busy,
  error,
  submitLabel,
  onSubmit,
}: FieldsFormProps) {
  const [values, setValues] = useState<Record<string, string>>({ ...fields.values });
  const [invalid, setInvalid] = useState<string | undefined>();
  const [localError, setLocalError] = useState<string | undefined>();
  const form = useRef<HTMLFormElement>(null);
  const locked = new Set(fields.locked);
  const required = new Set(fields.required);
  // The field in error: the one the page's own check named, else the one the server's answer names.
  const marked = localError ? invalid : error?.field;
  useFocusOn(error, `field-${error?.field}`);

  const submit = (event: Event) => {
    event.preventDefault();
    const missing = fields.enabled.find(
      (key) => required.has(key) && !locked.has(key) && !values[key]?.trim(),
    );
    if (missing) {
      setInvalid(missing);
      setLocalError(t('fieldRequired', { field: fieldLabel(t, missing) }));
      form.current?.querySelector<HTMLElement>(`#field-${missing}`)?.focus();
      return;
    }
    setInvalid(undefined);
    setLocalError(undefined);
    const editable = fields.enabled.filter((key) => !locked.has(key));
    onSubmit(changedFields(fields.values, values, editable));
  };

  const input = (key: string) => {
    const common = {
      id: `field-${key}`,
      name: key,
      disabled: locked.has(key) || busy,
      required: required.has(key) && !locked.has(key),
      'aria-required': required.has(key),
      'aria-invalid': marked === key,
      'aria-describedby':
        [locked.has(key) ? `hint-${key}` : '', marked === key ? 'screen-error' : '']
          .filter(Boolean)
          .join(' ') || undefined,
      value: values[key] ?? '',
      onInput: (e: Event) => setValues({ ...values, [key]: (e.currentTarget as HTMLInputElement).value }),
    };
    if (COUNTRY_KEYS.has(key)) {
      return (
        <select {...common}>
          <option value="">{t('selectPlaceholder')}</option>
          {countryOptions(lang, values[key]).map((c) => (
            <option key={c.code} value={c.code}>
              {c.name}
            </option>
          ))}
        </select>
      );
    }
    if (key === 'legalForm') {
      const options = legalForms && legalForms.length > 0 ? legalForms : LEGAL_FORM_CATALOGUE;
      const current = values[key];
      const all = current && !options.includes(current) ? [...options, current] : options;
      return (
        <select {...common}>
          <option value="">{t('selectPlaceholder')}</option>
          {all.map((o) => (
            <option key={o} value={o}>
              {LEGAL_FORM_LABELS[o.toLowerCase()] ?? readable(o)}
            </option>
          ))}
        </select>
      );
    }
    return (
      <input
        {...common}
        type={INPUT_TYPES[key] ?? 'text'}
        autocomplete={AUTOCOMPLETE[key] ?? 'off'}
        maxLength={500}
      />
    );
  };

  return (
    <form ref={form} onSubmit={submit} noValidate>
      <p class="hint">{t('requiredHint')}</p>
      {fields.enabled.map((key) => (
        <div class={`field${locked.has(key) ? ' locked' : ''}`} key={key}>
          <label for={`field-${key}`}>
            {fieldLabel(t, key)}
            {required.has(key) ? (
              <span class="req" aria-hidden="true">
                {' *'}
              </span>
            ) : null}
          </label>
          {input(key)}
          {locked.has(key) ? (
            <small id={`hint-${key}`} class="hint">
              {t('lockedHint')}
            </small>
          ) : null}
        </div>
      ))}
      <ErrorMessage message={localError ?? error?.message} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? t('sending') : submitLabel}
        </button>
      </div>
    </form>
  );
}

interface QuestionnaireFormProps {
  t: Translate;
  questions: Question[];
  answers: Record<string, unknown>;
  busy: boolean;
  /** The server's refusal; the question it names is marked invalid and focused. */
  error?: ScreenError;
  submitLabel: string;
  onSubmit: (answers: Record<string, unknown>) => void;
}

/** The level's questionnaire: one control per question type, required ones marked. */
export function QuestionnaireForm({
  t,
  questions,
  answers,
  busy,
  error,
  submitLabel,
  onSubmit,
}: QuestionnaireFormProps) {
  const [values, setValues] = useState<Record<string, unknown>>({ ...answers });
  const [invalid, setInvalid] = useState<string | undefined>();
  const [localError, setLocalError] = useState<string | undefined>();
  const marked = localError ? invalid : error?.field;
  useFocusOn(error, `q-${error?.field}`);
  const set = (id: string, value: unknown) => setValues({ ...values, [id]: value });
  const empty = (v: unknown) =>
    v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);

  const submit = (event: Event) => {
    event.preventDefault();
    const missing = questions.find((q) => q.required && empty(values[q.id]));
    if (missing) {
      setInvalid(missing.id);
      setLocalError(t('fieldRequired', { field: missing.text }));
      document.getElementById(`q-${missing.id}`)?.focus();
      return;
    }
    setInvalid(undefined);
    setLocalError(undefined);
    // Only what differs from the stored answers: an untouched blank never clears an answer stored meanwhile.
    const out: Record<string, unknown> = {};
    for (const q of questions) {
      const v = values[q.id];
      const value = empty(v) ? null : q.type === 'number' ? Number(v) : v;
      if (JSON.stringify(value) !== JSON.stringify(answers[q.id] ?? null)) out[q.id] = value;
    }
    onSubmit(out);
  };

  const control = (q: Question) => {
    const value = values[q.id];
    const state = {
      'aria-invalid': marked === q.id,
      'aria-describedby': marked === q.id ? 'screen-error' : undefined,
    };
    switch (q.type) {
      case 'select':
        return (
          <select
            id={`q-${q.id}`}
            {...state}
            required={q.required}
            value={(value as string) ?? ''}
            disabled={busy}
            onInput={(e) => set(q.id, (e.currentTarget as HTMLSelectElement).value)}
          >
            <option value="">{t('selectPlaceholder')}</option>
            {q.options?.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        );
      case 'multiselect': {
        const chosen = Array.isArray(value) ? (value as string[]) : [];
        return (
          <div class="choices">
            {q.options?.map((o, i) => (
              <label key={o} class="choice">
                <input
                  type="checkbox"
                  id={i === 0 ? `q-${q.id}` : undefined}
                  {...(i === 0 ? state : {})}
                  checked={chosen.includes(o)}
                  disabled={busy}
                  onChange={(e) =>
                    set(
                      q.id,
                      (e.currentTarget as HTMLInputElement).checked
                        ? [...chosen, o]
                        : chosen.filter((c) => c !== o),
                    )
                  }
                />
                {o}
              </label>
            ))}
          </div>
        );
      }
      case 'boolean':
        return (
          <div class="choices">
            {[true, false].map((b, i) => (
              <label key={String(b)} class="choice">
                <input
                  type="radio"
                  name={`q-${q.id}`}
                  id={i === 0 ? `q-${q.id}` : undefined}
                  {...(i === 0 ? state : {})}
                  checked={value === b}
                  disabled={busy}
                  onChange={() => set(q.id, b)}
                />
                {b ? t('yes') : t('no')}
              </label>
            ))}
          </div>
        );
      default:
        return (
          <input
            id={`q-${q.id}`}
            {...state}
            type={q.type === 'date' ? 'date' : q.type === 'number' ? 'number' : 'text'}
            required={q.required}
            aria-required={q.required}
            disabled={busy}
            value={value === undefined || value === null ? '' : String(value)}
            onInput={(e) => set(q.id, (e.currentTarget as HTMLInputElement).value)}
          />
        );
    }
  };

  return (
    <form onSubmit={submit} noValidate>
      <p class="hint">{t('requiredHint')}</p>
      {questions.map((q) => {
        const group = q.type === 'multiselect' || q.type === 'boolean';
        const label = (
          <>
            {q.text}
            {q.required ? (
              <span class="req" aria-hidden="true">
                {' *'}
              </span>
            ) : null}
            {q.required && q.type === 'multiselect' ? (
              <span class="visually-hidden">{` (${t('requiredGroup')})`}</span>
            ) : null}
          </>
        );
        // A group cannot carry aria-required, a radiogroup can: a required multiselect says so in its legend.
        return group ? (
          <fieldset
            class="field"
            key={q.id}
            role={q.type === 'boolean' ? 'radiogroup' : undefined}
            aria-required={q.type === 'boolean' ? q.required : undefined}
          >
            <legend>{label}</legend>
            {control(q)}
          </fieldset>
        ) : (
          <div class="field" key={q.id}>
            <label for={`q-${q.id}`}>{label}</label>
            {control(q)}
          </div>
        );
      })}
      <ErrorMessage message={localError ?? error?.message} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? t('sending') : submitLabel}
        </button>
      </div>
    </form>
  );
}

/** Moves the focus to the control a new server error names (by element id), once the form is enabled again. */
function useFocusOn(error: ScreenError | undefined, id: string) {
  useEffect(() => {
    if (error?.field) document.getElementById(id)?.focus();
  }, [error]);
}
