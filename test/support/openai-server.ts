/** The OpenAI-compatible test server now ships in `dissent/testing`; the suite keeps its old names. */
export {
  startOpenAIServer,
  type ChatRequest,
  type OpenAIServer as FakeOpenAI,
  type ServerHandler as Handler,
  type ServerReply as Reply,
} from "../../src/testing/openai-server.js";
