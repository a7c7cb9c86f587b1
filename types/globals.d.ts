// What the pages find on `window` from classic scripts.

interface Window {
  /** qrcode's browser build (/vendor/qrcode.js), which the account page loads to draw the two-factor QR code. */
  QRCode: {
    create(
      text: string,
      options: { errorCorrectionLevel: 'L' | 'M' | 'Q' | 'H' },
    ): { modules: { size: number; get(row: number, col: number): number | boolean } };
  };
}
