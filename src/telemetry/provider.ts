import type { Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { messageOf } from "../errors.js";
import { SCHEMA_URL } from "./conventions.js";

/** Where and how spans go. */
export interface ExportOptions {
  /** The collector's OTLP/HTTP base URL (traces go to `{endpoint}/v1/traces`), or the traces URL itself. */
  endpoint: string;
  serviceName: string;
  serviceVersion: string;
  /** Told once, the first time an export fails: the run goes on without its spans. */
  warn: (message: string) => void;
  /** How long one export may take (default 5 s). */
  timeoutMs?: number;
}

/** The URL spans are posted to: OTEL_EXPORTER_OTLP_ENDPOINT is a base URL; a URL ending in /v1/traces is used as it is. */
export function tracesUrl(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, "");
  return base.endsWith("/v1/traces") ? base : `${base}/v1/traces`;
}

/** A URL (or a message holding URLs) fit to print: `user:password@` removed. */
export function withoutCredentials(text: string): string {
  return text.replace(/(\/\/)[^/@\s]*@/g, "$1");
}

/** An exporter that reports failures through `onFailure` (which warns once), and never throws into a run. */
class ReportingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly onFailure: (message: string) => void,
  ) {}
  export(spans: ReadableSpan[], done: Parameters<SpanExporter["export"]>[1]): void {
    this.inner.export(spans, (result) => {
      // ExportResultCode.SUCCESS is 0 (@opentelemetry/core); anything else lost these spans.
      if (result.code !== 0) this.onFailure(result.error?.message ?? "export failed");
      done(result);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** A tracer provider exporting over OTLP/HTTP (JSON), batched; `shutdown` flushes, bounded in time. */
export function exportingTracer(o: ExportOptions): { tracer: Tracer; shutdown(): Promise<void> } {
  const url = tracesUrl(o.endpoint);
  const shown = withoutCredentials(url);
  // A collector that does not answer costs one warning for the whole process (docs/serve.md).
  let warned = false;
  const failed = (m: string) => {
    if (!warned) o.warn(`telemetry: sending traces to ${shown} failed (${withoutCredentials(m)}); the run goes on without them`);
    warned = true;
  };
  const exporter = new ReportingExporter(new OTLPTraceExporter({ url, timeoutMillis: o.timeoutMs ?? 5_000 }), failed);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": o.serviceName, "service.version": o.serviceVersion }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1_000, exportTimeoutMillis: o.timeoutMs ?? 5_000 })],
  });
  const tracer = provider.getTracer("dissent", o.serviceVersion, { schemaUrl: SCHEMA_URL });
  return {
    tracer,
    async shutdown() {
      // Spans are flushed before the CLI exits; a collector that does not answer delays the exit by at most this long.
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, (o.timeoutMs ?? 5_000) + 1_000);
        timer.unref();
      });
      await Promise.race([provider.shutdown().then(undefined, (e: unknown) => failed(messageOf(e))), limit]);
      clearTimeout(timer);
    },
  };
}
