/** Replaces every known secret (and anything shaped like a provider key) with `[redacted]`. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secrets) {
    if (s && s.length >= 4) out = out.split(s).join("[redacted]");
  }
  // Providers echo partial keys in 401 messages ("Incorrect API key provided: sk-ab***cd").
  return out.replace(/\b(sk|pk|rk|ghp|gho|ghs|github_pat|xox[bap])[-_][A-Za-z0-9_*.-]{6,}/g, "[redacted]");
}
