import { defineConfig } from "vitest/config";

/** `npm run test:resilience`: faults, fuzzing, slow clients and shutdown (not part of `npm test`). */
export default defineConfig({
  test: {
    globalSetup: ["test/helpers/temp-root.ts"],
    include: ["test/resilience/**/*.test.ts"],
    pool: "forks",
    // Two cores are shared: a couple of files at a time keeps each one's deadlines meaningful.
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // better-auth logs every refused fuzz request at ERROR level: noise here, the answer is what is tested.
    onConsoleLog: (log) => !log.includes("[Better Auth]"),
  },
});
