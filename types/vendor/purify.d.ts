// /vendor/purify.js (src/core/http/static.ts VENDOR_FILES): DOMPurify, with its own types.
import DOMPurify from 'dompurify';
export default DOMPurify;
