/**
 * Reads `path` (`.env` in the working directory) into process.env when the file exists; a variable
 * already set in the environment wins. Node's own reader (Node ≥ 20.12), not the dotenv package.
 */
export function loadDotenvFile(path = ".env"): void {
  try {
    process.loadEnvFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}
