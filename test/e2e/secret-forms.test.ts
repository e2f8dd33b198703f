/**
 * Issue 32: a key written another way — with spaces between its characters, base64-encoded or
 * URL-encoded — is redacted wherever redaction runs: the output, `--json`, the events and the store,
 * as an exact match is (src/redact.ts). The model echoes the key it was sent in all three forms.
 */
import { afterEach, describe, expect, it } from "vitest";
import { audit, byRole, filesUnder, world, type World } from "../support/e2e.js";

const KEY_ENV = "LOCAL_API_KEY";
const KEY = "hunter2-correct-horse-battery";
const FORMS = {
  spaced: KEY.split("").join(" "),
  base64: Buffer.from(`user:${KEY}`).toString("base64"),
  url: [...Buffer.from(KEY)].map((b) => `%${b.toString(16).toUpperCase()}`).join(""),
};
const draft = `Call it with the key ${FORMS.spaced}, or the header Basic ${FORMS.base64}, or ?key=${FORMS.url}.`;

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe("a key echoed spaced out, in base64 and URL-encoded", () => {
  it.each([
    ["text", ["run", "--audit", "--verbose"]],
    ["--json", ["run", "--audit", "--json", "--verbose"]],
  ])("never reaches the output (%s), the events or the store", async (_name, args) => {
    w = await world(byRole({ executor: { content: draft }, challenger: { content: audit("pass") } }), { apiKeyEnv: KEY_ENV });
    const r = await w.run([...args, "Which key do I use?"], { env: { [KEY_ENV]: KEY } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("[redacted]");
    const events = await w.run(["events", "--json"], { env: { [KEY_ENV]: KEY } });
    const files = filesUnder(w.home);
    for (const [form, text] of Object.entries(FORMS)) {
      expect(r.stdout + r.stderr, form).not.toContain(text);
      expect(events.stdout, form).not.toContain(text);
      for (const f of files) expect(f.bytes.includes(Buffer.from(text)), `${f.path} holds the ${form} key`).toBe(false);
    }
  });
});
