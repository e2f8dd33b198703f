import { describe, expect, it } from "vitest";
import { errorDetail, MAX_SERVER_TEXT, serverMessage } from "../../src/models/server-error.js";

describe("the server's own words in an error body", () => {
  it.each([
    ['{"error":"model \'x\' not found"}', "model 'x' not found"], // Ollama
    ['{"object":"error","message":"The model `x` does not exist.","type":"NotFoundError","param":null,"code":404}', "The model `x` does not exist."], // vLLM
    ['{"error":{"message":"Unsupported parameter","type":"invalid_request_error"}}', "Unsupported parameter"], // OpenAI
    ['{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', "Overloaded"], // Anthropic
    ['{"detail":[{"loc":["body","model"],"msg":"field required","type":"value_error.missing"}]}', "field required"], // FastAPI
    ['{"detail":"Not authenticated"}', "Not authenticated"],
    [
      "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>",
      "502 Bad Gateway",
    ],
    [
      "upstream connect error or disconnect/reset before headers.\r\n reset reason: connection failure",
      "upstream connect error or disconnect/reset before headers. reset reason: connection failure",
    ],
  ])("%s", (body, expected) => {
    expect(serverMessage(body)).toBe(expected);
  });

  it("nothing to say: an empty body, or JSON without a message", () => {
    expect(serverMessage("")).toBeUndefined();
    expect(serverMessage("  \n")).toBeUndefined();
    expect(serverMessage('{"ok":false}')).toBeUndefined();
    expect(serverMessage(undefined)).toBeUndefined();
  });

  it("is bounded, with control characters removed", () => {
    const said = serverMessage(`\u001b[31mbad\u0007 ${"x".repeat(10_000)}`) ?? "";
    expect(said.length).toBe(MAX_SERVER_TEXT);
    expect(said.startsWith("[31mbad x")).toBe(true);
    expect(said.endsWith("…")).toBe(true);
  });

  it("keeps the SDK's message when it already is the server's, and adds the status when it was only the status text", () => {
    expect(errorDetail("Unsupported parameter", 400, '{"error":{"message":"Unsupported parameter"}}')).toBe("Unsupported parameter");
    expect(errorDetail("Not Found", 404, '{"error":"model \'x\' not found"}')).toBe("model 'x' not found (404 Not Found)");
    expect(errorDetail("Bad Request", 400, "")).toBe("Bad Request");
  });
});
