/** The scripted models now ship in `dissent/testing`. */
export { auditReply, messageText, scriptedModel, textResult, textStreamParts } from "../../src/testing/mock-model.js";
