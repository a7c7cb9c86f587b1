// @ts-check
// Light or dark: follows prefers-color-scheme unless the user picked one (kept in localStorage).
// The choice is an attribute on <html>; the stylesheet does the rest.
const KEY = 'chat:theme';

export function currentTheme() {
  const stored = localStorage.getItem(KEY);
  if (stored === 'light' || stored === 'dark') return stored;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function applyTheme() {
  document.documentElement.dataset.theme = currentTheme();
}

/** Switches to the other theme and remembers it. */
export function toggleTheme() {
  localStorage.setItem(KEY, currentTheme() === 'dark' ? 'light' : 'dark');
  applyTheme();
  return currentTheme();
}

applyTheme();
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', applyTheme);
