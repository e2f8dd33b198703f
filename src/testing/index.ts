/** `dissent/testing`: scripted models and an OpenAI-compatible model server for your own tests, offline. */
export {
  auditReply,
  messageText,
  scriptedModel,
  textResult,
  textStreamParts,
  type ScriptedAnswer,
  type ScriptedConcern,
  type ScriptedOptions,
  type ScriptedUsage,
} from "./mock-model.js";
export { startOpenAIServer, type ChatRequest, type OpenAIServer, type ServerHandler, type ServerReply } from "./openai-server.js";
