import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';

/**
 * The installed app's icons, made by `make build` (scripts/build-static.mjs) from one source
 * image, the site's favicon, with sharp: the web app manifest's plain and maskable icons and the
 * Apple touch icon. The server serves what the build left in ICONS_DIR under /icons/ (static.ts);
 * nothing is drawn while it runs.
 */
export const ICON_SOURCE = path.join(__dirname, '..', '..', '..', 'static', 'favicon.svg');
export const ICONS_DIR = path.join(__dirname, '..', '..', '..', 'dist', 'icons');
/** Behind a maskable icon and the Apple touch icon, which a phone shows on no background of its own. */
export const ICON_BACKGROUND = '#ffffff';

export interface IconSpec {
  file: string;
  size: number;
  /**
   * any: the image as it is, on no background. maskable: on a full background, the image within
   * the middle 60 %, so a launcher's mask (a circle of 80 %, a squircle) never cuts into it.
   * apple: on a full background (iOS shows transparency as black), the image at 80 %.
   */
  purpose: 'any' | 'maskable' | 'apple';
}

export const ICONS: IconSpec[] = [
  { file: 'icon-192.png', size: 192, purpose: 'any' },
  { file: 'icon-512.png', size: 512, purpose: 'any' },
  { file: 'icon-maskable-192.png', size: 192, purpose: 'maskable' },
  { file: 'icon-maskable-512.png', size: 512, purpose: 'maskable' },
  { file: 'apple-touch-icon.png', size: 180, purpose: 'apple' },
];

const SCALE = { any: 1, maskable: 0.6, apple: 0.8 };

/** One icon as PNG bytes, drawn from an SVG at the resolution it needs. */
export async function renderIcon(svg: Buffer, spec: IconSpec): Promise<Buffer> {
  const inner = Math.round(spec.size * SCALE[spec.purpose]);
  // librsvg draws an SVG at 72 dpi by default: ask for the density that gives `inner` pixels.
  const { width = 32 } = await sharp(svg).metadata();
  const image = await sharp(svg, { density: (72 * inner) / width })
    .resize(inner, inner, { fit: 'contain', background: { r: 0, g: 0, b: 0, alpha: 0 } })
    .png()
    .toBuffer();
  const background = spec.purpose === 'any' ? { r: 0, g: 0, b: 0, alpha: 0 } : ICON_BACKGROUND;
  return sharp({ create: { width: spec.size, height: spec.size, channels: 4, background } })
    .composite([{ input: image, gravity: 'centre' }])
    .png({ compressionLevel: 9, palette: true })
    .toBuffer();
}

/**
 * Draws every icon into `dir` (the build's ICONS_DIR by default). Each file is written whole
 * under a temporary name and renamed, so a server starting meanwhile never reads half of one.
 */
export async function writeIcons(dir = ICONS_DIR, source = ICON_SOURCE): Promise<void> {
  const svg = fs.readFileSync(source);
  fs.mkdirSync(dir, { recursive: true });
  for (const spec of ICONS) {
    const target = path.join(dir, spec.file);
    const temporary = path.join(dir, `.${spec.file}.${process.pid}.tmp`); // a dotfile: never served
    fs.writeFileSync(temporary, await renderIcon(svg, spec));
    fs.renameSync(temporary, target);
  }
}

/** Whether the build made every icon (a server started from a fresh checkout, before `make build`, has none). */
export const iconsBuilt = (dir = ICONS_DIR): boolean => ICONS.every((spec) => fs.existsSync(path.join(dir, spec.file)));
