// What the bench scripts (bench/*.mjs) share: small statistics, how a figure is recorded, and the
// body of a scripted chat-completions reply.

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The median of numbers (the mean of the middle two for an even count). */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** `x` to `d` decimals; null stays null (a figure that was not measured). */
export const round = (x, d = 3) => (x === null ? null : Math.round(x * 10 ** d) / 10 ** d);

/**
 * Figures as the bench scripts keep them: `results[key]` for the JSON file, and a table row (label,
 * value to `digits` decimals, goal, ok / MISSED) for the console. Returns the two and `record`.
 */
export function recorder(results = {}, { digits = 2 } = {}) {
  const rows = [];
  const record = (key, label, value, unit, goal, pass) => {
    results[key] = { value: round(value), unit, ...(goal !== undefined ? { goal } : {}), ...(pass !== undefined ? { pass } : {}) };
    rows.push([label, value === null ? "n/a" : `${round(value, digits)} ${unit}`, goal ?? "", pass === undefined ? "" : pass ? "ok" : "MISSED"]);
  };
  return { results, rows, record };
}

/** An OpenAI-compatible chat-completions reply (JSON text): one assistant message, and its token counts. */
export const chatCompletion = (model, content, { prompt_tokens, completion_tokens }) =>
  JSON.stringify({
    id: "bench",
    object: "chat.completion",
    created: 1,
    model,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens },
  });
