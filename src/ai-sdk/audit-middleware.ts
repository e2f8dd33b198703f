import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
  LanguageModelV3Middleware,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";
import type { LanguageModel } from "ai";
import type { CallRecord, ShownConcern } from "../contracts/audit.js";
import { auditDraft, metaOf, PassLimits, type AuditStepResult, type Revision } from "../gate/audit-gate.js";
import type { CallDoor } from "../models/call.js";
import { libraryCall } from "../gate/run-audit.js";
import type { ReplyCache } from "../models/cache.js";
import { notAnAnswer } from "../models/answer-rule.js";
import { answerOf } from "../models/call.js";
import { formatLimit } from "../files/format-limit.js";
import { DEFAULT_MAX_REPLY_BYTES, ReplyTooLarge } from "../models/reply-cap.js";
import { dissentMetadata, type AuditReport, type AuditSkipReason } from "./audit-report.js";
import { promptHoldsTools, promptText } from "./prompt-text.js";
import { revisionParams } from "./revision.js";
import { errorOfParts, finalParts, readAll, textOfParts, unauditableParts, usageOfParts, withText } from "./stream-parts.js";
import { addUsage, usageOfRecord, wrappedRecord } from "./usage.js";

/** Options of `auditMiddleware`. */
export interface AuditMiddlewareOptions {
  /** The model that audits every answer: any AI SDK model, best of another family than the wrapped one. */
  challenger: LanguageModel;
  /** Constraints every answer must follow, given to the challenger (ADR-009 §2). */
  constraints?: readonly string[];
  /** Policies every answer must follow, given to the challenger (ADR-009 §2). */
  policies?: readonly string[];
  /** Told of every call's audit; when given, a challenger that failed open is reported here (`challenger_status: "failed"`) instead of as a process warning. */
  onAudit?: (report: AuditReport) => void;
  /** A cache for the challenger's replies (none unless given). */
  cache?: ReplyCache;
  /** The challenger's seed. Default 7. */
  seed?: number;
  /** Bounds each attempt of a challenger call. Default 120 000 ms. */
  timeoutMs?: number;
  /**
   * The most bytes of a draft (or revision) the middleware holds to audit — the text as it streams,
   * UTF-8 — like `max_reply_bytes` for the CLI's calls. Default 8 MiB. A larger draft is passed
   * through unaudited (`skipped: "too_large"`, never sent to the challenger); a larger revision fails.
   */
  maxReplyBytes?: number;
}

type Text = Extract<LanguageModelV3Content, { type: "text" }>;
const textOfContent = (content: readonly LanguageModelV3Content[]) =>
  content
    .filter((p): p is Text => p.type === "text")
    .map((p) => p.text)
    .join("");

/** The revision's content with its text replaced by the final text, when they differ (a stripped preamble). */
function contentWithText(content: readonly LanguageModelV3Content[], text: string): LanguageModelV3Content[] {
  if (textOfContent(content) === text) return [...content];
  const out: LanguageModelV3Content[] = [];
  let placed = false;
  for (const p of content) {
    if (p.type !== "text") out.push(p);
    else if (!placed) {
      out.push({ ...p, text });
      placed = true;
    }
  }
  return out;
}

/**
 * An AI SDK language-model middleware that puts every answer of the wrapped model through the
 * ADR-008 audit gate (docs/library.md): the reply is the draft, the challenger audits it, and a
 * `needs_work` verdict gets at most one revision through the wrapped model. `pass` returns the reply
 * unchanged; the audit is in `providerMetadata.dissent`; a failed challenger returns the draft, visibly.
 */
export function auditMiddleware(options: AuditMiddlewareOptions): LanguageModelV3Middleware {
  const constraints = options.constraints ?? [];
  const policies = options.policies ?? [];
  const callOptions = {
    ...(options.cache ? { cache: options.cache } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  };
  const unsignalled = libraryCall({ challenger: options.challenger }, callOptions);
  const challengerCall = (signal: AbortSignal | undefined): CallDoor =>
    signal ? libraryCall({ challenger: options.challenger }, { ...callOptions, signal }) : unsignalled;
  const warn = (message: string) => {
    if (!options.onAudit) process.emitWarning(message, { code: "DISSENT_AUDIT" });
  };
  const skipped = (operation: AuditReport["operation"], why: AuditSkipReason, calls: CallRecord[] = []) =>
    options.onAudit?.({ audit_meta: metaOf(undefined, false), concerns: [], calls, skipped: why, operation });
  const maxBytes = options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
  /** A draft past the cap: fail-open, never silent — onAudit is told, else a process warning. */
  const tooLarge = (operation: AuditReport["operation"], calls: CallRecord[]) => {
    skipped(operation, "too_large", calls);
    warn(`the draft is larger than ${formatLimit(maxBytes)} (maxReplyBytes): passed through unaudited`);
  };

  /** The one audit step, the same for both operations: challenger, then at most one revision. */
  const audit = <R>(
    params: LanguageModelV3CallOptions,
    draft: string,
    revise: (concerns: ShownConcern[]) => Promise<Revision<R>>,
  ): Promise<AuditStepResult<R>> =>
    auditDraft(
      new PassLimits(),
      { prompt: promptText(params.prompt), draft, constraints, policies },
      { call: challengerCall(params.abortSignal), revise, warn },
    );

  /** The usage of every call made: the draft's, the challenger's and the revision's (when one was asked for). */
  const totalUsage = (draft: LanguageModelV3Usage, step: AuditStepResult<unknown>, revision: LanguageModelV3Usage | undefined) => {
    let usage = draft;
    for (const c of step.calls) if (c.role === "challenger") usage = addUsage(usage, usageOfRecord(c));
    return revision ? addUsage(usage, revision) : usage;
  };

  const report = (operation: AuditReport["operation"], draftRecord: CallRecord, step: AuditStepResult<unknown>): AuditReport => {
    const r: AuditReport = { audit_meta: step.audit_meta, concerns: step.concerns, calls: [draftRecord, ...step.calls], operation };
    options.onAudit?.(r);
    return r;
  };

  return {
    specificationVersion: "v3",

    async wrapGenerate({ doGenerate, params, model }) {
      if (promptHoldsTools(params.prompt)) {
        skipped("generate", "tool_results");
        return doGenerate();
      }
      const started = performance.now();
      const draft = await doGenerate();
      const draftRecord = wrappedRecord("executor", model, started, draft.usage);
      const text = answerOf(textOfContent(draft.content)); // the answer: a reasoning block is not audited (docs/configuration.md)
      // The call door's own rule for what is an answer: a draft cut off at its length limit is not audited as one.
      const why = draft.content.some((p) => p.type === "tool-call")
        ? "tool_calls"
        : notAnAnswer({ text: textOfContent(draft.content), finishReason: draft.finishReason.unified, rawFinishReason: draft.finishReason.raw });
      if (why) {
        skipped("generate", why, [draftRecord]);
        return draft;
      }
      if (Buffer.byteLength(text) > maxBytes) {
        tooLarge("generate", [draftRecord]);
        return draft;
      }
      let revisionUsage: LanguageModelV3Usage | undefined;
      const step = await audit<LanguageModelV3GenerateResult>(params, text, async (concerns) => {
        const t = performance.now();
        const reply = await model.doGenerate(revisionParams(params, text, concerns));
        revisionUsage = reply.usage;
        // A revision cut off at its length limit is no revision: the gate keeps the draft, with a warning.
        const cut = notAnAnswer({ text: textOfContent(reply.content), finishReason: reply.finishReason.unified }) === "truncated";
        return { answer: cut ? "" : answerOf(textOfContent(reply.content)), record: wrappedRecord("revision", model, t, reply.usage), reply };
      });
      const metadata = dissentMetadata(report("generate", draftRecord, step));
      const usage = totalUsage(draft.usage, step, revisionUsage);
      if (!step.revision) return { ...draft, usage, providerMetadata: { ...draft.providerMetadata, ...metadata } };
      const revised = step.revision;
      return {
        ...revised,
        content: contentWithText(revised.content, step.final_output),
        usage,
        warnings: [...draft.warnings, ...revised.warnings],
        providerMetadata: { ...revised.providerMetadata, ...metadata },
      };
    },

    async wrapStream({ doStream, params, model }) {
      if (promptHoldsTools(params.prompt)) {
        skipped("stream", "tool_results");
        return doStream();
      }
      const started = performance.now();
      const first = await doStream();
      let reading: ReadableStreamDefaultReader<LanguageModelV3StreamPart> | undefined;
      let cancelled = false;
      /** The rest of a draft past the cap, streamed through as it comes (pull: the consumer's pace). */
      let passing: ReadableStreamDefaultReader<LanguageModelV3StreamPart> | undefined;
      const hold = (r: ReadableStreamDefaultReader<LanguageModelV3StreamPart>) => {
        reading = r;
      };
      // The call's abort stops what the middleware reads too (a model that ignores it, a draft streaming through).
      params.abortSignal?.addEventListener("abort", () => void reading?.cancel(params.abortSignal?.reason).catch(() => undefined), { once: true });

      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        start: async (controller) => {
          try {
            const read = await readAll(first.stream, maxBytes, hold);
            const parts = read.parts;
            if (read.rest) {
              // Past the cap: what was read goes out as it came, the rest streams through, and nothing is audited.
              tooLarge("stream", [wrappedRecord("executor", model, started, undefined)]);
              for (const p of parts) controller.enqueue(p);
              passing = read.rest;
              return;
            }
            const draftUsage = usageOfParts(parts);
            const draftRecord = wrappedRecord("executor", model, started, draftUsage);
            const why = unauditableParts(parts);
            if (why || !draftUsage) {
              skipped("stream", why ?? "error", [draftRecord]);
              for (const p of parts) controller.enqueue(p);
              controller.close();
              return;
            }
            const text = answerOf(textOfParts(parts));
            let revisionUsage: LanguageModelV3Usage | undefined;
            const step = await audit<LanguageModelV3StreamPart[]>(params, text, async (concerns) => {
              const t = performance.now();
              const revision = await model.doStream(revisionParams(params, text, concerns));
              const revisionRead = await readAll(revision.stream, maxBytes, hold);
              if (revisionRead.rest) {
                await revisionRead.rest.cancel().catch(() => undefined);
                throw new ReplyTooLarge(maxBytes, "maxReplyBytes", "the revision");
              }
              const revisionParts = revisionRead.parts;
              const failed = errorOfParts(revisionParts);
              if (failed) throw failed.error;
              revisionUsage = usageOfParts(revisionParts);
              const cut = unauditableParts(revisionParts) === "truncated";
              return {
                answer: cut ? "" : answerOf(textOfParts(revisionParts)),
                record: wrappedRecord("revision", model, t, revisionUsage),
                reply: revisionParts,
              };
            });
            if (cancelled) return;
            const metadata = dissentMetadata(report("stream", draftRecord, step));
            const usage = totalUsage(draftUsage, step, revisionUsage);
            const out = step.revision
              ? finalParts(withText(step.revision, step.final_output), [...parts, ...step.revision], usage, metadata)
              : finalParts(parts, parts, usage, metadata);
            for (const p of out) controller.enqueue(p);
            controller.close();
          } catch (e) {
            if (!cancelled) controller.error(e);
          }
        },
        pull: async (controller) => {
          if (!passing) return;
          const { done, value } = await passing.read();
          if (done) {
            passing.releaseLock();
            passing = undefined;
            controller.close();
          } else controller.enqueue(value);
        },
        cancel: async (reason) => {
          cancelled = true;
          await reading?.cancel(reason);
        },
      });
      return { ...first, stream };
    },
  };
}
