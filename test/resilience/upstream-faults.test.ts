import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeClassifierProvider } from "../fakes/classifier-provider.js";
import { fakeOpenMeteo } from "../fakes/open-meteo.js";
import { fakePostcodesIo } from "../fakes/postcodes-io.js";
import { FakeUnkey } from "../fakes/unkey.js";
import type { UpstreamFake } from "../fakes/upstream-fake.js";
import { tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnServer, stop } from "../helpers/process.js";
import { type SmtpTestServer, startSmtpServer } from "../support/smtp-server.js";
import {
  type Answer,
  expectErrorShape,
  FaultFront,
  fdsOf,
  HTTP_DRIP_HEAD,
  SMTP_DRIP_HEAD,
  send,
  settle,
} from "./support.js";

const FAULTS = ["hang", "reset", "drip", "500", "garbage"] as const;
type FaultName = (typeof FAULTS)[number];
/** Faulted requests per upstream and fault, sent together. */
const PARALLEL = 4;
/** What the test allows beyond a configured deadline: scheduling on a loaded 2-core machine. */
const SLACK_MS = 2000;
const TIMEOUTS = { UNKEY_TIMEOUT_MS: 300, UPSTREAM_TIMEOUT_MS: 500, MAIL_TIMEOUT_MS: 800 };

let unkey: FakeUnkey;
let classifier: FakeClassifierProvider;
let postcodes: UpstreamFake;
let meteo: UpstreamFake;
let smtp: SmtpTestServer;
const fronts: Record<string, FaultFront> = {};
let server: ServerProcess;
let key = "";

interface Target {
  name: string;
  deadlineMs: number;
  expected: { status: number; code: string };
  call(): Promise<Answer>;
  fault(f: FaultName | null): void;
}

const classify = (limitMs: number) =>
  send(`${server.url}/v1/vibe/classify`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: JSON.stringify(["a good day", "a bad day"]),
    limitMs,
  });

/** hang/reset/500/garbage through the fake's own switch; drip through the TCP front. */
function httpFault(fake: { fault: unknown }, front: FaultFront) {
  return (f: FaultName | null) => {
    front.mode = f === "drip" ? "drip" : "pass";
    fake.fault = f === "drip" ? null : f;
  };
}

const targets = (): Target[] => [
  {
    name: "Unkey",
    deadlineMs: TIMEOUTS.UNKEY_TIMEOUT_MS,
    expected: { status: 503, code: "unkey_unavailable" },
    call: () => classify(TIMEOUTS.UNKEY_TIMEOUT_MS + SLACK_MS),
    fault: httpFault(unkey, fronts.unkey as FaultFront),
  },
  {
    name: "classifier",
    deadlineMs: TIMEOUTS.UPSTREAM_TIMEOUT_MS,
    expected: { status: 502, code: "upstream_error" },
    // Unkey answers first (healthy), then the provider: both deadlines may be spent.
    call: () => classify(TIMEOUTS.UNKEY_TIMEOUT_MS + TIMEOUTS.UPSTREAM_TIMEOUT_MS + SLACK_MS),
    fault: httpFault(classifier, fronts.classifier as FaultFront),
  },
  {
    name: "postcodes.io",
    deadlineMs: TIMEOUTS.UPSTREAM_TIMEOUT_MS,
    expected: { status: 502, code: "upstream_error" },
    call: () =>
      send(`${server.url}/v1/postcode?postcode=SW1A%202AA`, { limitMs: TIMEOUTS.UPSTREAM_TIMEOUT_MS + SLACK_MS }),
    fault: httpFault(postcodes, fronts.postcodes as FaultFront),
  },
  {
    name: "Open-Meteo",
    deadlineMs: TIMEOUTS.UPSTREAM_TIMEOUT_MS,
    expected: { status: 502, code: "upstream_error" },
    // EH1 1YZ's place is cached by the warm-up, so only Open-Meteo is called.
    call: () =>
      send(`${server.url}/v1/weather?postcode=EH1%201YZ`, { limitMs: TIMEOUTS.UPSTREAM_TIMEOUT_MS + SLACK_MS }),
    fault: httpFault(meteo, fronts.meteo as FaultFront),
  },
  {
    name: "SMTP",
    deadlineMs: TIMEOUTS.MAIL_TIMEOUT_MS,
    expected: { status: 502, code: "upstream_error" },
    call: () =>
      send(`${server.url}/v1/mail/contact`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ name: "Ada", email: "ada@example.com", message: "Is the reduced rate included?" }),
        limitMs: TIMEOUTS.MAIL_TIMEOUT_MS + SLACK_MS,
      }),
    fault: (f) => {
      const front = fronts.smtp as FaultFront;
      front.mode = f === "drip" ? "drip" : f === "garbage" ? "garbage" : "pass";
      smtp.setMode(f === "hang" ? "hang" : f === "reset" ? "drop" : f === "500" ? "reject" : "accept");
    },
  },
];

beforeAll(async () => {
  unkey = await new FakeUnkey().start();
  classifier = await new FakeClassifierProvider().start();
  postcodes = await fakePostcodesIo();
  meteo = await fakeOpenMeteo();
  smtp = await startSmtpServer();
  fronts.unkey = await FaultFront.forUrl(unkey.url, HTTP_DRIP_HEAD).start();
  fronts.classifier = await FaultFront.forUrl(classifier.url, HTTP_DRIP_HEAD).start();
  fronts.postcodes = await FaultFront.forUrl(postcodes.url, HTTP_DRIP_HEAD).start();
  fronts.meteo = await FaultFront.forUrl(meteo.url, HTTP_DRIP_HEAD).start();
  fronts.smtp = await FaultFront.forUrl(smtp.url, SMTP_DRIP_HEAD).start();
  const created = await fetch(`${unkey.url}/v2/keys.createKey`, {
    method: "POST",
    headers: { Authorization: `Bearer ${unkey.rootKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ apiId: unkey.apiId, prefix: "alm", permissions: ["vibe.classify"] }),
  });
  key = ((await created.json()) as { data: { key: string } }).data.key;
  server = await spawnServer({
    DATA_DIR: tempDir(),
    LOG_LEVEL: "silent",
    DEMO_HOURLY_LIMIT: "1000000",
    CONTACT_HOURLY_LIMIT: "1000000",
    CONTACT_DAILY_CAP: "10000000",
    UNKEY_ROOT_KEY: unkey.rootKey,
    UNKEY_API_ID: unkey.apiId,
    UNKEY_BASE_URL: (fronts.unkey as FaultFront).url,
    CLASSIFIER_URL: `${(fronts.classifier as FaultFront).url}/models/cardiffnlp/twitter-roberta-base-sentiment-latest`,
    POSTCODES_BASE_URL: (fronts.postcodes as FaultFront).url,
    OPEN_METEO_BASE_URL: (fronts.meteo as FaultFront).url,
    MAIL_URL: (fronts.smtp as FaultFront).url,
    MAIL_FROM: "almanac@example.test",
    CONTACT_TO: "desk@example.test",
    UNKEY_TIMEOUT_MS: String(TIMEOUTS.UNKEY_TIMEOUT_MS),
    UPSTREAM_TIMEOUT_MS: String(TIMEOUTS.UPSTREAM_TIMEOUT_MS),
    MAIL_TIMEOUT_MS: String(TIMEOUTS.MAIL_TIMEOUT_MS),
  });
});

afterAll(async () => {
  await stop(server);
  for (const f of Object.values(fronts)) await f.close();
  await Promise.all([unkey?.close(), classifier?.close(), postcodes?.close(), meteo?.close(), smtp?.close()]);
});

/** Every upstream answering normally: the answers a healthy round gives. */
async function healthyRound(): Promise<number[]> {
  for (const t of targets()) t.fault(null);
  const answers = [
    await classify(10_000),
    await send(`${server.url}/v1/postcode?postcode=EH1%201YZ`),
    await send(`${server.url}/v1/weather?postcode=EH1%201YZ`),
    await (targets()[4] as Target).call(),
  ];
  return answers.map((a) => a.status);
}

describe("upstream faults through a real server process", () => {
  it("every fault of every upstream answers within its deadline with the spec's code; sockets return to baseline", async () => {
    // Warm-up: the place for EH1 1YZ is cached and pools to each upstream are open.
    await send(`${server.url}/v1/postcode?postcode=EH1%201YZ`);
    await classify(10_000);
    const pid = server.proc.pid as number;
    const baseline = fdsOf(pid);
    const worst: Record<string, number> = {};
    let faulted = 0;

    for (const target of targets()) {
      for (const fault of FAULTS) {
        target.fault(fault);
        const answers = await Promise.all(Array.from({ length: PARALLEL }, () => target.call()));
        faulted += answers.length;
        for (const a of answers) {
          const label = `${target.name} ${fault}`;
          expect({ label, status: a.status }).toEqual({ label, status: target.expected.status });
          const code = expectErrorShape(a.status, a.body, a.headers["x-request-id"] as string);
          expect({ label, code }).toEqual({ label, code: target.expected.code });
          worst[label] = Math.max(worst[label] ?? 0, Math.round(a.ms));
        }
      }
      target.fault(null);
    }

    // Every upstream recovers for the next call, with no restart.
    expect(await healthyRound()).toEqual([200, 200, 200, 200]);
    // Connections the faults opened are gone once their deadlines (and keep-alive pools) lapse.
    const after = await settle(
      () => fdsOf(pid),
      (v) => v.fds <= baseline.fds + 6,
    );
    console.info(
      `upstream faults: ${faulted} faulted requests; slowest answer per upstream/fault (ms): ${JSON.stringify(worst)}; ` +
        `fds ${baseline.fds} → ${after.fds} (sockets ${baseline.sockets} → ${after.sockets})`,
    );
    expect(after.fds).toBeLessThanOrEqual(baseline.fds + 6);
    expect(after.sockets).toBeLessThanOrEqual(baseline.sockets + 6);
  });
});
