import { defineConfig } from "vitest/config";

/**
 * The property tests: `npm test` runs each at a tenth of its cases (PROPERTY_RUNS_SCALE=0.1 in
 * vitest.config.ts); `npm run test:resilience` runs them here at full size. Every file that calls
 * `propertyRuns` is listed (test/suites.test.ts holds the list to that).
 */
export const PROPERTY_TESTS = [
  "src/features/moon/moon-sky.test.ts",
  "src/features/moon/moon.test.ts",
  "src/features/shared/geo-time.test.ts",
  "test/adapters/classifier/readable.test.ts",
  "test/contact/injection.test.ts",
  "test/openapi/fuzz-declared.test.ts",
  "test/openapi/fuzz-two-way.test.ts",
  "test/vibe/vader-tokens.test.ts",
];

/** `npm run test:resilience`: faults, fuzzing, slow clients and shutdown, and the property tests at full size. */
export default defineConfig({
  test: {
    globalSetup: ["test/helpers/temp-root.ts"],
    include: ["test/resilience/**/*.test.ts", ...PROPERTY_TESTS],
    env: { PROPERTY_RUNS_SCALE: process.env.PROPERTY_RUNS_SCALE ?? "1" },
    pool: "forks",
    // One file at a time: these suites time drains, deadlines and restarts on a 2-core host, and
    // a neighbour (the fuzzers, 200 dribbling sockets) can make one of them miss its deadline.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // better-auth logs every refused fuzz request at ERROR level: noise here, the answer is what is tested.
    onConsoleLog: (log) => !log.includes("[Better Auth]"),
  },
});
