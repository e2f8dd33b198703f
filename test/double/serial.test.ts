import { afterEach, expect, test } from "vitest";
import { perfect, startRealisticDouble, type RealisticDouble } from "../support/double/index.js";
import { chat, executorBody } from "../support/double/client.js";

const open: RealisticDouble[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((d) => d.close()));
});

async function burst(serial: boolean): Promise<{ d: RealisticDouble; ms: number; answers: string[] }> {
  const d = await startRealisticDouble({ quirks: { ...perfect, serial, latencyMs: 40 } });
  open.push(d);
  const t0 = performance.now();
  const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(d.url, executorBody(`Question number ${i}?`)).then((a) => a.content)));
  return { d, ms: performance.now() - t0, answers };
}

test("serial: 8 concurrent requests are served one at a time, like a single local GPU", async () => {
  const { d, ms, answers } = await burst(true);
  expect(d.maxInFlight).toBe(1);
  expect(d.requests).toHaveLength(8);
  expect(answers.every((a) => a.length > 0)).toBe(true);
  expect(ms).toBeGreaterThanOrEqual(8 * 40 - 5);
});

test("without serial the same burst runs side by side", async () => {
  const { d } = await burst(false);
  expect(d.maxInFlight).toBeGreaterThan(1);
});
