import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globalSetup: ["test/helpers/temp-root.ts"],
    include: ["src/**/*.test.ts", "test/**/*.test.ts", "clients/*/test/**/*.test.ts"],
    exclude: ["test/resilience/**", "test/browser/**", "node_modules/**"],
    // Property tests at a tenth of their cases; `npm run test:resilience` runs them at full size.
    env: { PROPERTY_RUNS_SCALE: process.env.PROPERTY_RUNS_SCALE ?? "0.1" },
    pool: "forks",
    // Two files at a time. Vitest's default is one worker per core less one: a single worker on
    // the 2-core CI machine, idle whenever its test waits on a socket, a timer, PostgreSQL or a
    // child process, which most of the suite's wall time does.
    maxWorkers: 2,
    // One module registry per worker instead of one per test file: the app has no module-level
    // singletons (every test builds its own deps), so nothing leaks between files, and the test
    // files do not re-import hono, zod, kysely and the app each time. A file that needs a fresh
    // registry would go in a project with isolate: true.
    isolate: false,
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
