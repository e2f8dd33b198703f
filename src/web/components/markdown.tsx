import { useMemo } from "preact/hooks";
import { renderInline, renderMarkdown } from "../markdown.js";

/** A markdown artifact rendered safely (src/web/markdown.ts); `name` marks it for tests and screen readers. */
export function Markdown({ text, name, inline }: { text: string; name?: string; inline?: boolean }) {
  const html = useMemo(() => (inline ? renderInline(text) : renderMarkdown(text)), [text, inline]);
  if (inline) return <span class="md" data-artifact={name} dangerouslySetInnerHTML={{ __html: html }} />;
  return <div class="md panel" data-artifact={name} dangerouslySetInnerHTML={{ __html: html }} />;
}
