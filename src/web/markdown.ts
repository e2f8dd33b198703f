import DOMPurify from "dompurify";
import { Marked, type Tokens } from "marked";

/**
 * Artifacts are markdown a model wrote from untrusted text (an issue body, a wiki entry), so the
 * page treats them as hostile (ADR-024): marked renders them with raw HTML shown as text and images
 * as their alt text (a remote image is a beacon: loading it tells its server the page was read),
 * then DOMPurify keeps only the tags markdown produces. A link stays clickable only to an http(s)
 * or mailto address, opening a new tab with no opener and no referrer; any other link is inert text.
 */
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const marked = new Marked({
  gfm: true,
  renderer: {
    // Raw HTML in the markdown is shown, never rendered.
    html: ({ text }: Tokens.HTML | Tokens.Tag) => escapeHtml(text),
    image: ({ text }: Tokens.Image) => escapeHtml(`[image: ${text}]`),
  },
});

/** The tags marked produces from markdown (GFM tables and task lists included); nothing else survives. */
const TAGS = ["a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "input", "li", "ol", "p", "pre", "strong"];
const TABLE_TAGS = ["table", "thead", "tbody", "tr", "th", "td"];
const ATTRS = ["href", "title", "class", "start", "align", "type", "checked", "disabled"];
const SAFE_LINK = /^(https?:|mailto:)/i;

let hooked = false;
function hook(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A") {
      const href = node.getAttribute("href") ?? "";
      if (SAFE_LINK.test(href)) {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer nofollow");
      } else node.removeAttribute("href"); // relative, javascript:, data: … — kept as text
    }
    if (node.tagName === "INPUT") {
      // Only a task list's box, and never one to type into.
      node.setAttribute("type", "checkbox");
      node.setAttribute("disabled", "");
    }
    const cls = node.getAttribute("class");
    if (cls !== null && !/^language-[\w+-]+$/.test(cls)) node.removeAttribute("class"); // no dressing up as the page's own badges
  });
}

const sanitize = (html: string): string => {
  hook();
  return DOMPurify.sanitize(html, { ALLOWED_TAGS: [...TAGS, ...TABLE_TAGS], ALLOWED_ATTR: ATTRS, ALLOW_DATA_ATTR: false, ALLOW_ARIA_ATTR: false });
};

/** A markdown document (a plan, a brief, an issue body, a wiki entry) as safe HTML. */
export function renderMarkdown(text: string): string {
  return sanitize(marked.parse(text, { async: false }));
}

/** One line of markdown (an acceptance criterion) as safe inline HTML. */
export function renderInline(text: string): string {
  return sanitize(marked.parseInline(text, { async: false }));
}
