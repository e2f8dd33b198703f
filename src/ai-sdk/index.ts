/** `dissent/ai-sdk`: the ADR-008 audit gate as an AI SDK language-model middleware (docs/library.md, ADR-014). */
export { auditMiddleware, type AuditMiddlewareOptions } from "./audit-middleware.js";
export { auditOf, type AuditReport, type AuditSkipReason, type DissentMetadata } from "./audit-report.js";
export type { AuditMeta, CallRecord, ShownConcern } from "../contracts/audit.js";
