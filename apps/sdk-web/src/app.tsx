import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import {
  ApiError,
  getSession,
  resolveLink,
  saveAnswers,
  savePersonalInfo,
  type Session,
  type StoredUpload,
  submitAll,
  submitStep,
} from './api';
import { IMAGE_TYPES, LivenessCapture, PDF_TYPES, UploadSlot } from './capture';
import { LockedFieldsError, type ScreenError, screenError } from './errors';
import { ErrorMessage, FieldsForm, QuestionnaireForm, readable } from './forms';
import {
  LANGUAGE_NAMES,
  LANGUAGES,
  type Lang,
  type MessageKey,
  pickLanguage,
  type Translate,
  translator,
} from './i18n';
import { landingFor } from './landing';
import { storedUploads, type Uploads, withSavedAnswers, withSavedValues } from './session-state';
import { applyTheme, type ThemeChoice } from './theme';

/** Steps the page shows a screen for: required ones that take input (the screenings run on the server). */
const SERVER_STEPS = new Set(['aml', 'adverse_media']);
const DONE_STATES = new Set(['submitted', 'in_review', 'completed', 'awaitingOperatorReview']);
const TWO_SIDED = new Set(['id_card', 'driving_licence', 'residence_permit']);
const DOCUMENT_TYPES = ['passport', 'id_card', 'driving_licence', 'residence_permit'] as const;

type Phase =
  | { name: 'loading' }
  | { name: 'notFound' }
  | { name: 'expired' }
  | { name: 'error' }
  | { name: 'welcome' }
  | { name: 'step'; index: number }
  | { name: 'final' }
  | { name: 'rejected' }
  | { name: 'retry' }
  | { name: 'redirecting' };

const shortCodeFromPath = () => location.pathname.split('/').filter(Boolean)[1] ?? '';

/** The hosted verification page: welcome, one screen per required step, final screen, redirects. */
export function App() {
  const [lang, setLang] = useState<Lang>(pickLanguage(null, navigator.languages ?? [navigator.language]));
  const [theme, setTheme] = useState<ThemeChoice>('system');
  /** The user switched the language: the status region says so, in the new language. */
  const [switched, setSwitched] = useState(false);
  const [phase, setPhase] = useState<Phase>({ name: 'loading' });
  const [session, setSession] = useState<Session>();
  /**
   * The uploads of each step kind: those the session listed (made before a reload) and those made on this page,
   * so a step screen shown again (Back, or a reload) still has them.
   */
  const [uploads, setUploads] = useState<Record<string, Uploads>>({});
  const t = useMemo(() => translator(lang), [lang]);

  useEffect(() => applyTheme(theme), [theme]);
  // In the same commit as the text it names (a layout effect runs before the browser paints or announces it): the
  // page is never German under lang="en", even for a frame.
  useLayoutEffect(() => {
    document.documentElement.lang = lang;
  }, [lang]);

  const screens = useMemo(
    () => (session?.steps ?? []).filter((s) => !s.optional && !SERVER_STEPS.has(s.kind)),
    [session],
  );

  /** Rule 1: successUrl / errorUrl, each falling back to returnUrl; none set -> the terminal screen. */
  const finish = (
    outcome: 'success' | 'error',
    s: Session | undefined = session,
    fallback: Phase = { name: outcome === 'success' ? 'final' : 'rejected' },
  ) => {
    const r = s?.redirects;
    const url = outcome === 'success' ? (r?.successUrl ?? r?.returnUrl) : (r?.errorUrl ?? r?.returnUrl);
    if (url) {
      setPhase({ name: 'redirecting' });
      location.assign(url);
    } else setPhase(fallback);
  };

  const fail = (error: unknown) => {
    if (error instanceof ApiError && error.status === 401) finish('error', session, { name: 'expired' });
    else setPhase({ name: 'error' });
  };

  useEffect(() => {
    (async () => {
      try {
        const link = await resolveLink(shortCodeFromPath());
        const p = link.presentation;
        setLang(pickLanguage(p.lang, navigator.languages ?? [navigator.language]));
        if (p.theme) setTheme(p.theme);
        const s = await getSession();
        setSession(s);
        setUploads(storedUploads(s));
        const landing = landingFor(s);
        if (landing === 'success') finish('success', s);
        else if (landing === 'rejected') finish('error', s);
        else if (landing === 'retry') setPhase({ name: 'retry' });
        else if (landing === 'expired') setPhase({ name: 'expired' });
        else setPhase({ name: 'welcome' });
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) setPhase({ name: 'notFound' });
        else if (error instanceof ApiError && (error.status === 410 || error.status === 401))
          setPhase({ name: 'expired' });
        else setPhase({ name: 'error' });
      }
    })();
  }, []);

  const next = async (index: number) => {
    const following = screens.findIndex((s, i) => i > index && !DONE_STATES.has(s.reviewStatus));
    if (following !== -1) {
      setPhase({ name: 'step', index: following });
      return;
    }
    try {
      await submitAll();
      finish('success');
    } catch (error) {
      fail(error);
    }
  };

  const markDone = (kind: string) =>
    setSession(
      (s) =>
        s && {
          ...s,
          steps: s.steps.map((st) => (st.kind === kind ? { ...st, reviewStatus: 'submitted' } : st)),
        },
    );

  let body: ComponentChildren;
  let title: string;
  switch (phase.name) {
    case 'loading':
      title = t('appTitle');
      body = <Interim title={title} text={t('loading')} />;
      break;
    case 'notFound':
      title = t('notFoundTitle');
      body = <Message screen={phase.name} title={title} text={t('notFoundBody')} kind="error" />;
      break;
    case 'expired':
      title = t('expiredTitle');
      body = <Message screen={phase.name} title={title} text={t('expiredBody')} kind="error" />;
      break;
    case 'error':
      title = t('errorTitle');
      body = (
        <Message screen={phase.name} title={title} text={t('errorGeneric')} kind="error">
          <button type="button" onClick={() => location.reload()}>
            {t('retry')}
          </button>
        </Message>
      );
      break;
    case 'rejected':
      title = t('rejectedTitle');
      body = <Message screen={phase.name} title={title} text={t('rejectedBody')} kind="error" />;
      break;
    case 'retry':
      title = t('retryTitle');
      body = <Message screen={phase.name} title={title} text={t('retryBody')} kind="info" />;
      break;
    case 'final':
      title = t('finalTitle');
      body = <Message screen={phase.name} title={title} text={t('finalBody')} kind="success" />;
      break;
    case 'redirecting':
      title = t('redirecting');
      body = <Interim title={title} text={t('redirecting')} />;
      break;
    case 'welcome': {
      title = session?.applicantType === 'company' ? t('welcomeCompanyTitle') : t('welcomeTitle');
      const first = screens.findIndex((s) => !DONE_STATES.has(s.reviewStatus));
      body = (
        <Screen screen="welcome" title={title}>
          <p>{t('welcomeBody', { count: screens.length })}</p>
          <ol class="overview">
            {screens.map((s) => (
              <li key={s.kind}>
                {t(`step_${s.kind}` as MessageKey)}
                {DONE_STATES.has(s.reviewStatus) ? <span class="done"> — {t('stepDone')}</span> : null}
              </li>
            ))}
          </ol>
          <p class="hint">{t('welcomePrivacy')}</p>
          <div class="actions">
            <button
              type="button"
              class="primary"
              onClick={() => (first === -1 ? next(-1) : setPhase({ name: 'step', index: first }))}
            >
              {t('start')}
            </button>
          </div>
        </Screen>
      );
      break;
    }
    case 'step': {
      const step = screens[phase.index];
      title = t(`step_${step.kind}` as MessageKey);
      body = (
        <Screen
          screen={`step-${phase.index}`}
          title={title}
          progress={{ n: phase.index + 1, m: screens.length, t }}
        >
          <StepScreen
            key={step.kind}
            t={t}
            lang={lang}
            kind={step.kind}
            session={session!}
            last={phase.index === screens.length - 1}
            done={DONE_STATES.has(step.reviewStatus)}
            uploads={uploads[step.kind] ?? {}}
            onUploads={(update) => setUploads((u) => ({ ...u, [step.kind]: update(u[step.kind] ?? {}) }))}
            onSaved={(update) => setSession((s) => s && update(s))}
            onDone={() => {
              markDone(step.kind);
              return next(phase.index);
            }}
            onFatal={fail}
          />
          {phase.index > 0 ? (
            <button
              type="button"
              class="link back"
              onClick={() => setPhase({ name: 'step', index: phase.index - 1 })}
            >
              {t('back')}
            </button>
          ) : null}
        </Screen>
      );
      break;
    }
  }
  useEffect(() => {
    document.title = title === t('appTitle') ? title : `${title} · ${t('appTitle')}`;
  }, [title, t]);

  return (
    <>
      <header class="bar">
        <span class="brand">{t('appTitle')}</span>
        <div class="prefs">
          <div class="pref">
            <label for="pref-lang">{t('language')}</label>
            <select
              id="pref-lang"
              value={lang}
              onInput={(e) => {
                setLang((e.currentTarget as HTMLSelectElement).value as Lang);
                setSwitched(true);
              }}
            >
              {(Object.keys(LANGUAGES) as Lang[]).map((code) => (
                <option key={code} value={code} lang={code}>
                  {LANGUAGE_NAMES[code]}
                </option>
              ))}
            </select>
          </div>
          <div class="pref">
            <label for="pref-theme">{t('theme')}</label>
            <select
              id="pref-theme"
              value={theme}
              onInput={(e) => setTheme((e.currentTarget as HTMLSelectElement).value as ThemeChoice)}
            >
              <option value="light">{t('themeLight')}</option>
              <option value="dark">{t('themeDark')}</option>
              <option value="system">{t('themeSystem')}</option>
            </select>
          </div>
        </div>
        <p class="visually-hidden" role="status" id="lang-status" lang={lang}>
          {switched ? t('languageChanged') : ''}
        </p>
      </header>
      <main id="main" data-phase={phase.name}>
        {body}
      </main>
    </>
  );
}

/**
 * A screen: its heading takes the focus when the screen changes (`screen`: the phase, or the step's index), so
 * keyboard and screen-reader users start there. Not when only its text changes: switching the language keeps
 * the focus on the language switch.
 */
function Screen({
  screen,
  title,
  progress,
  children,
}: {
  screen: string;
  title: string;
  progress?: { n: number; m: number; t: Translate };
  children: ComponentChildren;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [screen]);
  return (
    <section class="screen" aria-labelledby="screen-title">
      {progress ? (
        <div class="progress">
          <p id="progress-label">{progress.t('stepOf', { n: progress.n, m: progress.m })}</p>
          <progress max={progress.m} value={progress.n} aria-labelledby="progress-label" />
        </div>
      ) : null}
      <h1 id="screen-title" tabIndex={-1} ref={heading}>
        {title}
      </h1>
      {children}
    </section>
  );
}

/** A passing state (loading, redirecting): its text in a status region, and a heading only screen readers see. */
function Interim({ title, text }: { title: string; text: string }) {
  return (
    <>
      <h1 class="visually-hidden">{title}</h1>
      <p role="status">{text}</p>
    </>
  );
}

const ICONS = { error: '!', success: '✓', info: 'i' } as const;

function Message({
  screen,
  title,
  text,
  kind,
  children,
}: {
  screen: string;
  title: string;
  text: string;
  kind: 'error' | 'success' | 'info';
  children?: ComponentChildren;
}) {
  return (
    <Screen screen={screen} title={title}>
      <div class={`message ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
        <span class="icon" aria-hidden="true">
          {ICONS[kind]}
        </span>
        <p>{text}</p>
      </div>
      {children}
    </Screen>
  );
}

interface StepProps {
  t: Translate;
  lang: Lang;
  kind: string;
  session: Session;
  last: boolean;
  /** Already submitted (the user came back): the stored uploads count, nothing needs adding again. */
  done: boolean;
  uploads: Uploads;
  onUploads: (update: (uploads: Uploads) => Uploads) => void;
  /** Merges what a save answered into the page's session, so a screen shown again starts from it. */
  onSaved: (update: (session: Session) => Session) => void;
  onDone: () => Promise<void>;
  onFatal: (error: unknown) => void;
}

/** One step's screen: collects its data, then submits the step (409 names what is missing). */
function StepScreen(props: StepProps) {
  const { t, lang, kind, session, last, done, uploads, onUploads, onSaved, onDone, onFatal } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ScreenError>();
  const [documentType, setDocumentType] = useState<string>(
    () => DOCUMENT_TYPES.find((type) => type === uploads.document_front?.documentType) ?? 'passport',
  );
  const label = last ? t('submit') : t('continue');

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
      // A step submitted earlier may already be under check: it is not submitted twice.
      if (!done) await submitStep(kind);
      await onDone();
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) onFatal(e);
      else setError(screenError(t, e, session.questionnaire?.questionnaire.questions));
    } finally {
      setBusy(false);
    }
  };

  const saveFields = (values: Record<string, string | null>) =>
    run(async () => {
      const result = await savePersonalInfo(values);
      onSaved((s) => withSavedValues(s, result.values));
      if (result.lockedFields.length > 0) throw new LockedFieldsError(result.lockedFields);
    });

  const uploaded = (key: string) => (r: StoredUpload) => onUploads((u) => ({ ...u, [key]: r }));
  const continueUploads =
    (
      keys: string[],
      names: Record<string, string>,
      holds: (key: string) => StoredUpload | undefined = (key) => uploads[key],
    ) =>
    (event: Event) => {
      event.preventDefault();
      const missing = done ? undefined : keys.find((key) => !holds(key));
      if (missing) setError({ message: t('missingItem', { item: names[missing] }) });
      else void run(async () => undefined);
    };
  const actions = (
    <>
      <ErrorMessage message={error?.message} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? t('sending') : label}
        </button>
      </div>
    </>
  );

  switch (kind) {
    case 'personal_information':
    case 'company_data': {
      const fields = kind === 'company_data' ? session.companyData : session.personalInfo;
      return (
        <>
          <p>{t(`intro_${kind}` as MessageKey)}</p>
          {fields ? (
            <FieldsForm
              t={t}
              lang={lang}
              fields={fields}
              legalForms={session.companyData?.legalForms}
              busy={busy}
              error={error}
              submitLabel={label}
              onSubmit={saveFields}
            />
          ) : null}
        </>
      );
    }
    case 'questionnaire': {
      const q = session.questionnaire;
      if (!q) {
        return (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void run(async () => undefined);
            }}
          >
            {actions}
          </form>
        );
      }
      return (
        <>
          <p>{t('intro_questionnaire')}</p>
          <h2>{q.questionnaire.title}</h2>
          <QuestionnaireForm
            t={t}
            questions={q.questionnaire.questions}
            answers={q.answers}
            busy={busy}
            error={error}
            submitLabel={label}
            onSubmit={(answers) =>
              run(async () => {
                const saved = await saveAnswers(answers);
                onSaved((s) => withSavedAnswers(s, saved));
              })
            }
          />
        </>
      );
    }
    case 'identity_doc': {
      const twoSided = TWO_SIDED.has(documentType);
      const keys = twoSided ? ['document_front', 'document_back'] : ['document_front'];
      const names = {
        document_front: twoSided ? t('side_front') : t('side_page'),
        document_back: t('side_back'),
      };
      // A side counts for the document type it was uploaded as: another type hides it, going back shows it again.
      const side = (key: string) => (uploads[key]?.documentType === documentType ? uploads[key] : undefined);
      return (
        <form onSubmit={continueUploads(keys, names, side)} noValidate>
          <p>{t('intro_identity_doc')}</p>
          <fieldset class="field">
            <legend>{t('documentType')}</legend>
            <div class="choices">
              {DOCUMENT_TYPES.map((type) => (
                <label key={type} class="choice">
                  <input
                    type="radio"
                    name="documentType"
                    value={type}
                    checked={documentType === type}
                    onChange={() => setDocumentType(type)}
                  />
                  {t(`doc_${type}` as MessageKey)}
                </label>
              ))}
            </div>
          </fieldset>
          <UploadSlot
            key={`${documentType}-front`}
            t={t}
            id="doc-front"
            label={names.document_front}
            slot="document_front"
            types={IMAGE_TYPES}
            capture="environment"
            fields={{ documentType, side: 'front' }}
            distinct={twoSided}
            uploaded={side('document_front')}
            onUploaded={uploaded('document_front')}
            onFatal={onFatal}
          />
          {twoSided ? (
            <UploadSlot
              key={`${documentType}-back`}
              t={t}
              id="doc-back"
              label={names.document_back}
              slot="document_back"
              types={IMAGE_TYPES}
              capture="environment"
              fields={{ documentType, side: 'back' }}
              distinct
              uploaded={side('document_back')}
              onUploaded={uploaded('document_back')}
              onFatal={onFatal}
            />
          ) : null}
          {actions}
        </form>
      );
    }
    case 'selfie':
      return (
        <form onSubmit={continueUploads(['selfie'], { selfie: t('step_selfie') })} noValidate>
          <p>{t('intro_selfie')}</p>
          <UploadSlot
            t={t}
            id="selfie"
            label={t('takeSelfie')}
            slot="selfie"
            types={IMAGE_TYPES}
            capture="user"
            uploaded={uploads.selfie}
            onUploaded={uploaded('selfie')}
            onFatal={onFatal}
          />
          {actions}
        </form>
      );
    case 'liveness':
      return (
        <form
          onSubmit={continueUploads(['liveness_video'], { liveness_video: t('step_liveness') })}
          noValidate
        >
          <p>{t('intro_liveness')}</p>
          <LivenessCapture
            t={t}
            uploaded={uploads.liveness_video}
            onUploaded={uploaded('liveness_video')}
            onFatal={onFatal}
          />
          {actions}
        </form>
      );
    case 'poa':
      return (
        <form onSubmit={continueUploads(['poa'], { poa: t('step_poa') })} noValidate>
          <p>{t('intro_poa')}</p>
          <UploadSlot
            t={t}
            id="poa"
            label={t('step_poa')}
            slot="additional"
            types={[...IMAGE_TYPES, ...PDF_TYPES]}
            capture="environment"
            fields={{ documentType: 'proof_of_address' }}
            uploaded={uploads.poa}
            onUploaded={uploaded('poa')}
            onFatal={onFatal}
          />
          {actions}
        </form>
      );
    default: {
      // company_docs / company_documents: one capture per required document type, then as many more as the
      // minimum count asks for. Each of those has a document type of its own (other_1, other_2, …): the server
      // counts the newest upload of each type, so they add up instead of replacing each other.
      const required = session.companyData?.requiredDocuments ?? [];
      const count = Math.max(1, required.length, session.companyData?.documentsMinRequired ?? 0);
      const docs = [
        ...required,
        ...Array.from({ length: count - required.length }, (_, i) => `other_${i + 1}`),
      ];
      const names = Object.fromEntries(
        docs.map((d, i) => [
          d,
          i < required.length ? readable(d) : `${t('companyDocType')} ${i + 1 - required.length}`,
        ]),
      );
      return (
        <form onSubmit={continueUploads(docs, names)} noValidate>
          <p>{t('intro_company_docs')}</p>
          {required.length > 0 ? (
            <p class="hint">{t('companyDocsRequired', { list: required.map(readable).join(', ') })}</p>
          ) : null}
          {docs.map((d) => (
            <UploadSlot
              key={d}
              t={t}
              id={`company-${d}`}
              label={names[d]}
              slot="company_doc"
              types={[...PDF_TYPES, ...IMAGE_TYPES]}
              fields={{ documentType: d }}
              distinct={docs.length > 1}
              uploaded={uploads[d]}
              onUploaded={uploaded(d)}
              onFatal={onFatal}
            />
          ))}
          {actions}
        </form>
      );
    }
  }
}
