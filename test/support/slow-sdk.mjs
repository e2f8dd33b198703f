// Preloaded with `--import` (NODE_OPTIONS): delays the AI SDK's first load by DISSENT_TEST_SLOW_SDK_MS,
// as a cold disk would, so a test can tell a timer that covers module loading from one that does not.
import { register } from "node:module";

register("./slow-sdk-hooks.mjs", import.meta.url, { data: { ms: Number(process.env.DISSENT_TEST_SLOW_SDK_MS ?? 0) } });
