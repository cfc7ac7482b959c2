import { describe, expect, it } from "vitest";
import { CLIENT_LATE_LIMIT_MS, type LoadResult, takeResponses } from "../../bench/load.js";
import { halfCheck, halfP99 } from "../../bench/report.js";

const response = (status: string, body: string, header = "content-length") =>
  `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\n${header}: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe("the paced client's response framing", () => {
  it("takes every complete response in a chunk and keeps the partial one", () => {
    const statuses: number[] = [];
    const whole = response("200 OK", '{"hello":"world"}') + response("404 Not Found", "{}", "Content-Length");
    const partial = response("200 OK", '{"a":1}');
    const rest = takeResponses(Buffer.from(whole + partial.slice(0, 60)), (s) => statuses.push(s));
    expect(statuses).toEqual([200, 404]);
    expect(rest.toString()).toBe(partial.slice(0, 60));
    const end = takeResponses(Buffer.concat([rest, Buffer.from(partial.slice(60))]), (s) => statuses.push(s));
    expect(statuses).toEqual([200, 404, 200]);
    expect(end.length).toBe(0);
  });

  it("waits for a body that has not fully arrived", () => {
    const statuses: number[] = [];
    const r = response("200 OK", '{"hello":"world"}');
    const rest = takeResponses(Buffer.from(r.slice(0, -3)), (s) => statuses.push(s));
    expect(statuses).toEqual([]);
    expect(rest.toString()).toBe(r.slice(0, -3));
  });
});

describe("p99 at ½ max when the client falls behind its schedule", () => {
  const run = (p99: number, clientLateP99: number): LoadResult => ({
    rps: 23_000,
    p50: 0.4,
    p99,
    non2xx: 0,
    errors: 0,
    total: 115_000,
    clientLateP99,
  });

  it("shows the client's lateness, not the p99, and does not judge the goal", () => {
    const late = run(28.14, CLIENT_LATE_LIMIT_MS + 2);
    expect(halfP99(late)).toContain("client late");
    expect(halfP99(late)).not.toContain("28.14");
    expect(halfCheck(late, 5).met).toBeNull();
  });

  it("shows the p99 and judges the goal when the client kept its schedule", () => {
    expect(halfP99(run(3.2, 0.3))).toBe("3.2 ms");
    expect(halfCheck(run(3.2, 0.3), 5).met).toBe(true);
    expect(halfCheck(run(7.5, 0.3), 5).met).toBe(false);
  });

  it("does not judge a run in which the server answered anything but 2xx (a spent demo budget's 429s)", () => {
    const spent = { ...run(480, 0.3), non2xxRuns: [0, 0, 7_596] };
    expect(halfP99(spent)).toContain("7596 non-2xx");
    expect(halfCheck(spent, 5).met).toBeNull();
  });

  it("does not trust a run that did not measure the client's lateness", () => {
    const { clientLateP99: _, ...unmeasured } = run(3.2, 0);
    expect(halfCheck(unmeasured, 5).met).toBeNull();
  });
});
