import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type Resource, SDK_ERROR_CODES, type StoredUpload, upload } from './api';
import type { Translate } from './i18n';

export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/heic', 'image/webp'];
export const PDF_TYPES = ['application/pdf'];
export const VIDEO_TYPES = ['video/webm', 'video/mp4'];
const EXTENSIONS: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  heic: 'image/heic',
  webp: 'image/webp',
  pdf: 'application/pdf',
  webm: 'video/webm',
  mp4: 'video/mp4',
};
const MB = 1024 * 1024;
/** What the page refuses before sending (the server checks the real bytes again: 415 and 413). */
export const LIMITS = { image: 10 * MB, pdf: 20 * MB, video: 50 * MB };

const typeOf = (file: File) =>
  file.type || EXTENSIONS[file.name.split('.').pop()?.toLowerCase() ?? ''] || 'application/octet-stream';
const typeNames = (types: string[]) =>
  [...new Set(types.map((t) => t.split('/')[1].toUpperCase().replace('JPEG', 'JPG')))].join(', ');
const sizeName = (bytes: number) => `${Math.round(bytes / MB)} MB`;
const limitFor = (type: string) =>
  type.startsWith('video/') ? LIMITS.video : type === 'application/pdf' ? LIMITS.pdf : LIMITS.image;

/** An error the user can act on, from the upload answer or the network (a 401 goes to onFatal instead). */
export function uploadError(t: Translate, error: unknown, types: string[], limit: number): string {
  if (error instanceof ApiError) {
    if (error.status === 415) return t('fileTypeRefused', { types: typeNames(types) });
    if (error.status === 413) return t('fileTooLarge', { size: sizeName(limit) });
    if (error.is(SDK_ERROR_CODES.uploadLimit)) return t('uploadLimit');
    // Already sent again once by `upload`: it expired twice.
    if (error.is(SDK_ERROR_CODES.uploadExpired)) return t('uploadExpired');
    if (error.is(SDK_ERROR_CODES.verificationSubmitted)) return t('errorAlreadySubmitted');
    if (error.status === 0) return t('errorNetwork');
  }
  return t('uploadFailed');
}

/** The session ended (expired, replaced): the page's fatal path (the expired screen or errorUrl). */
const sessionEnded = (error: unknown) => error instanceof ApiError && error.status === 401;

type PreviewKind = 'image' | 'pdf' | 'video';
const previewKind = (type: string): PreviewKind =>
  type.startsWith('image/') ? 'image' : type.startsWith('video/') ? 'video' : 'pdf';

interface UploadSlotProps {
  t: Translate;
  id: string;
  label: string;
  slot: string;
  types: string[];
  fields?: Record<string, string | undefined>;
  /** `environment` (documents) or `user` (selfie): on a phone the camera opens directly. */
  capture?: 'environment' | 'user';
  /** What the slot holds already: uploaded on this page, or before a reload (the session listed it). */
  uploaded?: StoredUpload;
  onUploaded: (resource: Resource) => void;
  /** A 401 during the upload: the session is over. */
  onFatal: (error: unknown) => void;
  disabled?: boolean;
  /**
   * Several slots on the screen: the buttons' names end with the slot's label ("Take a photo (Front side)"),
   * so that each is told apart where a screen reader lists the buttons without their fieldset's legend.
   */
  distinct?: boolean;
}

/**
 * One capture: "Take a photo" (the device camera where it has one, through `capture`) or "Choose a file",
 * a refusal of a wrong type or size before anything is sent, then the upload and, once it is stored, a preview
 * of it. A file the server refuses never shows: the preview (and status) stay those of the stored upload.
 * A slot that holds an upload reads "Uploaded" and offers "Replace"; one stored before a reload has no
 * preview (its bytes stay on the server), and says so.
 */
export function UploadSlot({
  t,
  id,
  label,
  slot,
  types,
  fields,
  capture,
  uploaded,
  onUploaded,
  onFatal,
  disabled,
  distinct,
}: UploadSlotProps) {
  const [preview, setPreview] = useState<{ url: string; kind: PreviewKind; name: string }>();
  const [state, setState] = useState<'idle' | 'uploading' | 'done'>(uploaded ? 'done' : 'idle');
  const [error, setError] = useState<string>();
  useEffect(() => () => preview && URL.revokeObjectURL(preview.url), [preview]);

  const pick = async (event: Event) => {
    const input = event.currentTarget as HTMLInputElement;
    const file = input.files?.[0];
    input.value = '';
    if (!file) return;
    // Nothing to send: the server would refuse it as empty (decision 0487), and trying again would not help.
    if (file.size === 0) {
      setError(t('fileEmpty'));
      return;
    }
    const type = typeOf(file);
    if (!types.includes(type)) {
      setError(t('fileTypeRefused', { types: typeNames(types) }));
      return;
    }
    const limit = limitFor(type);
    if (file.size > limit) {
      setError(t('fileTooLarge', { size: sizeName(limit) }));
      return;
    }
    setError(undefined);
    setState('uploading');
    try {
      const resource = await upload(slot, file, fields);
      setPreview({ url: URL.createObjectURL(file), kind: previewKind(type), name: file.name });
      setState('done');
      onUploaded(resource);
    } catch (e) {
      if (sessionEnded(e)) return onFatal(e);
      setState(uploaded ? 'done' : 'idle');
      setError(uploadError(t, e, types, limit));
    }
  };

  const accept = types.join(',');
  const named = (action: string) =>
    distinct ? (
      <>
        {action}
        <span class="visually-hidden">{` (${label})`}</span>
      </>
    ) : (
      action
    );
  const held = state === 'done';
  return (
    <fieldset class="capture" aria-describedby={`${id}-status ${id}-error`}>
      <legend>{label}</legend>
      <div class="capture-buttons">
        {capture ? (
          <label class="button" for={`${id}-camera`}>
            {named(held ? t('takeNewPhoto') : t('takePhoto'))}
          </label>
        ) : null}
        {capture ? (
          <input
            class="visually-hidden"
            type="file"
            id={`${id}-camera`}
            accept={accept}
            capture={capture}
            onChange={pick}
            disabled={disabled || state === 'uploading'}
          />
        ) : null}
        <label class="button" for={`${id}-file`}>
          {named(held ? t('replaceFile') : t('chooseFile'))}
        </label>
        <input
          class="visually-hidden"
          type="file"
          id={`${id}-file`}
          data-slot={slot}
          accept={accept}
          onChange={pick}
          disabled={disabled || state === 'uploading'}
        />
      </div>
      {preview?.kind === 'image' ? (
        <img class="preview" src={preview.url} alt={t('previewOf', { name: label })} />
      ) : null}
      {preview?.kind === 'video' ? (
        <video
          class="preview"
          src={preview.url}
          controls
          muted
          aria-label={t('previewOf', { name: label })}
        />
      ) : null}
      {preview?.kind === 'pdf' ? <p class="file-name">{preview.name}</p> : null}
      {held && !preview ? <p class="hint">{t('uploadedEarlier')}</p> : null}
      <p class="status" id={`${id}-status`} role="status" aria-live="polite">
        {state === 'uploading' ? t('uploading') : state === 'done' ? `✓ ${t('uploaded')}` : ''}
      </p>
      <p class="error" id={`${id}-error`} role="alert">
        {error ?? ''}
      </p>
    </fieldset>
  );
}

const RECORD_SECONDS = 3;

/** The liveness clip: recorded with the camera through MediaRecorder, or uploaded where that is unavailable. */
export function LivenessCapture({
  t,
  uploaded,
  onUploaded,
  onFatal,
}: {
  t: Translate;
  uploaded?: StoredUpload;
  onUploaded: (r: Resource) => void;
  onFatal: (error: unknown) => void;
}) {
  const canRecord =
    typeof window.MediaRecorder === 'function' && typeof navigator.mediaDevices?.getUserMedia === 'function';
  const video = useRef<HTMLVideoElement>(null);
  const [stream, setStream] = useState<MediaStream>();
  const [left, setLeft] = useState<number>();
  const [clip, setClip] = useState<string>();
  const [state, setState] = useState<'idle' | 'uploading' | 'done'>(uploaded ? 'done' : 'idle');
  const [error, setError] = useState<string>();
  const [fallback, setFallback] = useState(!canRecord);

  useEffect(() => () => stream?.getTracks().forEach((track) => track.stop()), [stream]);
  useEffect(() => {
    if (video.current && stream) video.current.srcObject = stream;
  }, [stream]);

  const start = async () => {
    try {
      setStream(await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'user' }, audio: false }));
      setError(undefined);
    } catch {
      setFallback(true);
    }
  };

  const record = () => {
    if (!stream) return;
    const type = ['video/webm;codecs=vp8', 'video/webm', 'video/mp4'].find((m) =>
      MediaRecorder.isTypeSupported(m),
    );
    const recorder = new MediaRecorder(stream, type ? { mimeType: type } : undefined);
    const chunks: Blob[] = [];
    recorder.ondataavailable = (e) => e.data.size > 0 && chunks.push(e.data);
    recorder.onstop = async () => {
      const blob = new Blob(chunks, { type: (recorder.mimeType || 'video/webm').split(';')[0] });
      setState('uploading');
      setError(undefined);
      try {
        const ext = blob.type === 'video/mp4' ? 'mp4' : 'webm';
        const resource = await upload('liveness_video', blob, { source: 'liveness' }, `liveness.${ext}`);
        setClip(URL.createObjectURL(blob));
        setState('done');
        onUploaded(resource);
      } catch (e) {
        if (sessionEnded(e)) return onFatal(e);
        setState(uploaded ? 'done' : 'idle');
        setError(uploadError(t, e, VIDEO_TYPES, LIMITS.video));
      }
    };
    recorder.start(250);
    let remaining = RECORD_SECONDS;
    setLeft(remaining);
    const timer = setInterval(() => {
      remaining -= 1;
      setLeft(remaining);
      if (remaining <= 0) {
        clearInterval(timer);
        recorder.stop();
        setLeft(undefined);
      }
    }, 1000);
  };

  if (fallback) {
    return (
      <>
        {canRecord ? null : <p class="hint">{t('cameraUnavailable')}</p>}
        <UploadSlot
          t={t}
          id="liveness"
          label={t('uploadVideo')}
          slot="liveness_video"
          types={VIDEO_TYPES}
          fields={{ source: 'liveness' }}
          uploaded={uploaded}
          onUploaded={onUploaded}
          onFatal={onFatal}
        />
      </>
    );
  }
  return (
    <div class="liveness">
      {stream ? (
        <video ref={video} class="camera" autoplay muted playsinline aria-label={t('cameraPreview')} />
      ) : null}
      {clip ? <video class="preview" src={clip} controls muted aria-label={t('recordedClip')} /> : null}
      {uploaded && !clip ? <p class="hint">{t('uploadedEarlier')}</p> : null}
      <div class="capture-buttons">
        {!stream ? (
          <button type="button" onClick={start}>
            {t('startCamera')}
          </button>
        ) : (
          <button type="button" onClick={record} disabled={left !== undefined || state === 'uploading'}>
            {clip || uploaded ? t('recordAgain') : t('record', { s: RECORD_SECONDS })}
          </button>
        )}
        <button type="button" class="link" onClick={() => setFallback(true)}>
          {t('uploadVideo')}
        </button>
      </div>
      <p class="status" role="status" aria-live="polite">
        {left !== undefined
          ? t('recording', { s: left })
          : state === 'uploading'
            ? t('uploading')
            : state === 'done'
              ? `✓ ${t('uploaded')}`
              : ''}
      </p>
      <p class="error" role="alert">
        {error ?? ''}
      </p>
    </div>
  );
}
