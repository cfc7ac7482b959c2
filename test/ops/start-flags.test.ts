import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { startFlags } from "../../bench/servers.js";

/** Churns short-lived objects, then prints the young generation's size in MB. */
const CHURN = `
let keep = [];
for (let i = 0; i < 3e6; i++) { keep.push({ i, s: "x" + i }); if (keep.length > 20000) keep = []; }
const young = require("node:v8").getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
console.log(young.space_size / 2 ** 20);
`;

describe("the Node flags the server starts with", () => {
  it("npm start caps the young generation at 16 MB under load (two semi-spaces of 8 MB)", () => {
    const mb = Number(execFileSync(process.execPath, [...startFlags(), "-e", CHURN], { encoding: "utf8" }));
    expect(mb).toBeGreaterThan(0);
    expect(mb).toBeLessThanOrEqual(16);
  });

  it("the Docker image starts the server with the same flags as npm start", () => {
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync("Dockerfile", "utf8"))?.[1];
    expect(JSON.parse(cmd ?? "null")).toEqual(["node", ...startFlags(), "bin/almanac.js", "serve"]);
  });
});
