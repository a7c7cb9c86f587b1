// @ts-check
// Touch gestures of the phone layout (docs/ui.md "The installed app"): a long press that opens a
// menu, a swipe in from the left edge that goes back to the lists, and a page that keeps the
// composer above the on-screen keyboard.

const LONG_PRESS_MS = 500;
/** A finger that moves farther than this is scrolling, not pressing. */
const STILL_PX = 10;
/** A click the release makes comes within this; without one the menu opens anyway. */
const CLICK_WAIT_MS = 100;

/**
 * A touch held still for LONG_PRESS_MS on `target` calls open() when the finger lifts: a popup
 * opened while it is still down would be closed by the release (the popover API's light
 * dismiss), and the click that ends the press does nothing else. iOS Safari fires no contextmenu
 * for a long press; Chromium does, and then it counts as one too (a context-menu handler leaves
 * touch ones to this). A finger that moves, or that the browser takes for a scroll
 * (pointercancel), presses nothing; nor does one on what `ignore` matches (a link or an image keeps
 * the browser's own menu).
 * @param {HTMLElement} target
 * @param {(e: Event) => void} open
 * @param {string} [ignore] a selector
 */
export function onLongPress(target, open, ignore) {
  const ignored = (e) => Boolean(ignore && e.target instanceof Element && e.target.closest(ignore));
  let timer = 0;
  /** @type {{ x: number, y: number } | null} */
  let start = null;
  let held = false;
  let opened = 0;
  const fire = (e) => {
    held = false;
    clearTimeout(opened);
    open(e);
  };
  const release = (e) => {
    clearTimeout(timer);
    start = null;
    if (held) opened = setTimeout(() => { if (held) fire(e); }, CLICK_WAIT_MS);
  };
  target.addEventListener('pointerdown', (e) => {
    held = false;
    if (e.pointerType !== 'touch' || !e.isPrimary || ignored(e)) return;
    start = { x: e.clientX, y: e.clientY };
    clearTimeout(timer);
    timer = setTimeout(() => { held = true; }, LONG_PRESS_MS);
  });
  target.addEventListener('pointermove', (e) => {
    if (start && !held && Math.hypot(e.clientX - start.x, e.clientY - start.y) > STILL_PX) {
      clearTimeout(timer);
      start = null;
    }
  });
  target.addEventListener('contextmenu', (e) => {
    if (/** @type {PointerEvent} */ (e).pointerType !== 'touch' || ignored(e)) return;
    e.preventDefault();
    held = true;
  });
  target.addEventListener('pointerup', release);
  target.addEventListener('pointercancel', release);
  target.addEventListener('click', (e) => {
    if (!held) return;
    e.preventDefault();
    e.stopPropagation();
    fire(e);
  }, true);
}

/** Where a back swipe must start, and how far it must go. */
const EDGE_PX = 24;
const SWIPE_PX = 60;

/**
 * A finger that starts at the left edge of `target` and moves right (more across than down)
 * calls back(): the phone layout's back gesture, as an installed app has no browser's.
 * @param {HTMLElement} target
 * @param {() => void} back
 */
export function onEdgeSwipe(target, back) {
  /** @type {{ x: number, y: number } | null} */
  let start = null;
  target.addEventListener('touchstart', (e) => {
    const touch = e.touches[0];
    start = e.touches.length === 1 && touch.clientX <= EDGE_PX ? { x: touch.clientX, y: touch.clientY } : null;
  }, { passive: true });
  target.addEventListener('touchmove', (e) => {
    if (!start) return;
    const touch = e.touches[0];
    const across = touch.clientX - start.x;
    const down = Math.abs(touch.clientY - start.y);
    if (down > Math.max(across, STILL_PX)) start = null;
    else if (across > SWIPE_PX) {
      start = null;
      back();
    }
  }, { passive: true });
  const end = () => { start = null; };
  target.addEventListener('touchend', end, { passive: true });
  target.addEventListener('touchcancel', end, { passive: true });
}

/**
 * The page's height follows the visual viewport: Chromium shrinks the page for the on-screen
 * keyboard by itself (the viewport's interactive-widget=resizes-content), iOS Safari does not,
 * and there the composer would sit under the keyboard. The height goes to the CSS variable
 * --app-height through the CSSOM (which the page CSP allows; no style attribute is written). Not
 * while the page is zoomed in, when the visual viewport is smaller for another reason.
 */
export function fitVisualViewport() {
  const viewport = window.visualViewport;
  if (!viewport) return;
  const fit = () => {
    if (Math.abs(viewport.scale - 1) < 0.01) document.documentElement.style.setProperty('--app-height', `${Math.round(viewport.height)}px`);
  };
  viewport.addEventListener('resize', fit);
  fit();
}
