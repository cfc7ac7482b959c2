import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globalSetup: ["test/helpers/temp-root.ts"],
    include: ["src/**/*.test.ts", "test/**/*.test.ts", "clients/*/test/**/*.test.ts"],
    exclude: ["test/resilience/**", "test/browser/**", "node_modules/**"],
    pool: "forks",
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
