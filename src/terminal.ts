/**
 * Text that reaches a terminal (docs/errors.md "Model text on a terminal"). A model's answer, a
 * concern, an issue's title or an event's detail may hold what a terminal acts on rather than shows:
 * an ESC sequence that retitles the window or hides text, BEL, an OSC 52 write to the clipboard, a
 * carriage return that overwrites the line. Every such character is made visible instead.
 */

/**
 * C0 controls but tab and newline (and a carriage return right before a newline: a CRLF line end
 * shows as one), DEL, and the C1 controls (CSI, OSC and the rest, as single code points).
 */
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)/g;

/** DEL and the C1 controls, which JSON.stringify leaves raw in a string. */
const RAW_IN_JSON = /[\x7f-\x9f]/g;

/**
 * What dissent itself writes to clear its status line on a terminal (`\r`, then ESC [2K): the one
 * control sequence the CLI's stderr lets through, and only at the start of a write.
 */
export const CLEAR_LINE = "\r\x1b[2K";

const hex = (c: string) => c.charCodeAt(0).toString(16).padStart(2, "0");

/**
 * `text` with every control character but newline and tab made visible as `\xHH` (ESC → `\x1b`, BEL
 * → `\x07`), so a model's ESC sequence, BEL or OSC 52 clipboard write reaches the reader as text,
 * never as an action. Printable text, newlines and tabs are untouched; applying it twice changes
 * nothing more.
 */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, (c) => `\\x${hex(c)}`);
}

/**
 * A value as one line of JSON that holds no raw control character: JSON.stringify escapes C0 (ESC
 * becomes `\u001b`); DEL and the C1 controls, which it leaves raw, are escaped the same way. Parsed
 * back, the text is exactly the model's.
 */
export function jsonLine(value: unknown): string {
  return (JSON.stringify(value) ?? "null").replace(RAW_IN_JSON, (c) => `\\u00${hex(c)}`);
}
