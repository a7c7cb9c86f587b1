// @ts-check
// Touch gestures of the phone layout (docs/ui.md "The installed app"), loaded on touch screens
// only: a long press that opens a message's menu, a swipe in from the left edge that goes back
// to the lists, and a page that keeps the composer above the on-screen keyboard.

const LONG_PRESS_MS = 500;
/** A finger that moves farther than this is scrolling, not pressing. */
const STILL_PX = 10;
/** A click the release makes comes within this; without one the menu opens anyway. */
const CLICK_WAIT_MS = 100;
/** What keeps the browser's own menu under a long press: links, pictures, players, fields. */
const OWN_MENU = 'a, img, video, audio, textarea, input';
/** Where a back swipe must start, and how far it must go. */
const EDGE_PX = 24;
const SWIPE_PX = 60;

/**
 * @param {{ messages: HTMLElement, main: HTMLElement, back: () => void }} parts the room's message
 *   list, the main column, and what going back to the lists does
 */
export function initTouch({ messages, main, back }) {
  onLongPress(messages, (item) => /** @type {HTMLButtonElement | null} */ (item.querySelector('.more-button'))?.click());
  onEdgeSwipe(main, back);
  fitVisualViewport();
}

/**
 * A touch held still for LONG_PRESS_MS on a message of `list` opens its menu (what its "…" does)
 * when the finger lifts: a popup opened while the finger is still down would be closed by the
 * release (the popover API's light dismiss), and the click that ends the press does nothing
 * else. iOS Safari fires no contextmenu for a long press; Chromium does, and then it counts as one
 * (taken here, before the message's own right-click handler). A finger that moves, or that the
 * browser takes for a scroll (pointercancel), presses nothing; nor does one on a link or a
 * picture, which keeps the browser's menu.
 * @param {HTMLElement} list
 * @param {(item: HTMLElement) => void} open
 */
function onLongPress(list, open) {
  let timer = 0;
  let opening = 0;
  /** @type {{ x: number, y: number } | null} */
  let start = null;
  /** @type {HTMLElement | null} the message a finger is on */
  let touched = null;
  /** @type {HTMLElement | null} the message held long enough */
  let held = null;
  const itemOf = (e) => {
    const target = /** @type {Element} */ (e.target);
    return target.closest(OWN_MENU) ? null : /** @type {HTMLElement | null} */ (target.closest('li.msg'));
  };
  const fire = () => {
    clearTimeout(opening);
    const item = held;
    held = null;
    if (item?.isConnected) open(item);
  };
  const release = () => {
    clearTimeout(timer);
    start = null;
    if (held) opening = setTimeout(fire, CLICK_WAIT_MS);
  };
  list.addEventListener('pointerdown', (e) => {
    held = null;
    touched = e.pointerType === 'touch' && e.isPrimary ? itemOf(e) : null;
    if (!touched) return;
    start = { x: e.clientX, y: e.clientY };
    clearTimeout(timer);
    timer = setTimeout(() => {
      held = touched;
    }, LONG_PRESS_MS);
  });
  list.addEventListener('pointermove', (e) => {
    if (start && !held && Math.hypot(e.clientX - start.x, e.clientY - start.y) > STILL_PX) {
      clearTimeout(timer);
      start = null;
    }
  });
  list.addEventListener(
    'contextmenu',
    (e) => {
      if (/** @type {PointerEvent} */ (e).pointerType !== 'touch') return;
      const item = itemOf(e);
      if (!item) return;
      e.preventDefault();
      e.stopPropagation();
      held = item;
    },
    true,
  );
  list.addEventListener('pointerup', release);
  list.addEventListener('pointercancel', release);
  list.addEventListener(
    'click',
    (e) => {
      if (!held) return;
      e.preventDefault();
      e.stopPropagation();
      fire();
    },
    true,
  );
}

/**
 * A finger that starts at the left edge of `target` and moves right (more across than down)
 * calls back(): the phone layout's back gesture, as an installed app has no browser's.
 * @param {HTMLElement} target
 * @param {() => void} back
 */
function onEdgeSwipe(target, back) {
  /** @type {{ x: number, y: number } | null} */
  let start = null;
  target.addEventListener(
    'touchstart',
    (e) => {
      const touch = e.touches[0];
      start = e.touches.length === 1 && touch.clientX <= EDGE_PX ? { x: touch.clientX, y: touch.clientY } : null;
    },
    { passive: true },
  );
  target.addEventListener(
    'touchmove',
    (e) => {
      if (!start) return;
      const touch = e.touches[0];
      const across = touch.clientX - start.x;
      const down = Math.abs(touch.clientY - start.y);
      if (down > Math.max(across, STILL_PX)) start = null;
      else if (across > SWIPE_PX) {
        start = null;
        back();
      }
    },
    { passive: true },
  );
  const end = () => {
    start = null;
  };
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
function fitVisualViewport() {
  const viewport = window.visualViewport;
  if (!viewport) return;
  const fit = () => {
    if (Math.abs(viewport.scale - 1) < 0.01) document.documentElement.style.setProperty('--app-height', `${Math.round(viewport.height)}px`);
  };
  viewport.addEventListener('resize', fit);
  fit();
}
