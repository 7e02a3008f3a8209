export type ThemeChoice = 'light' | 'dark' | 'system';

const media = () => window.matchMedia?.('(prefers-color-scheme: dark)');

/** Applies the theme to <html data-theme>; `system` follows the OS and keeps following it. */
export function applyTheme(choice: ThemeChoice): () => void {
  const root = document.documentElement;
  const set = () => {
    const dark = choice === 'dark' || (choice === 'system' && media()?.matches === true);
    root.dataset.theme = dark ? 'dark' : 'light';
  };
  set();
  if (choice !== 'system') return () => undefined;
  const query = media();
  query?.addEventListener('change', set);
  return () => query?.removeEventListener('change', set);
}
