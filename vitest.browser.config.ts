import { defineConfig } from "vitest/config";

/** Browser tests: Chromium (Debian's /usr/bin/chromium) driven by playwright-core. `npm run test:browser`. */
export default defineConfig({
  test: {
    globalSetup: ["test/helpers/temp-root.ts"],
    include: ["test/browser/**/*.test.ts"],
    pool: "forks",
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
