// /vendor/markdown-it.js (src/core/http/static.ts VENDOR_FILES): markdown-it publishes no types of
// its own, and its parser's rule API is used in static/js/markdown.js only.
declare const MarkdownIt: any;
export default MarkdownIt;
