import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // e2e tests spawn the CLI; two cores, so keep the fan-out modest.
    maxWorkers: 2,
    // One PostgreSQL for the run, started only if a test calls freshDatabase().
    globalSetup: ["test/support/pg-global-setup.ts"],
  },
});
