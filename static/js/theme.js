// @ts-check
// Light or dark: follows prefers-color-scheme unless the user picked one (kept in localStorage).
// The choice is an attribute on <html>; the stylesheet does the rest.
const KEY = 'chat:theme';

export function currentTheme() {
  const stored = localStorage.getItem(KEY);
  if (stored === 'light' || stored === 'dark') return stored;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/** The page background of each theme (css/site.css --bg): a phone's status bar and an installed app's title bar take it. */
const THEME_COLORS = { light: '#ffffff', dark: '#25272d' };

export function applyTheme() {
  const theme = currentTheme();
  document.documentElement.dataset.theme = theme;
  // The pages' theme-color metas follow the system's choice; a theme picked here wins over it.
  for (const meta of document.querySelectorAll('meta[name="theme-color"]')) meta.setAttribute('content', THEME_COLORS[theme]);
}

/** Switches to the other theme and remembers it. */
export function toggleTheme() {
  localStorage.setItem(KEY, currentTheme() === 'dark' ? 'light' : 'dark');
  applyTheme();
  return currentTheme();
}

applyTheme();
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', applyTheme);
