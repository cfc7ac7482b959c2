import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { collectDefaultMetrics, Registry } from "prom-client";

// The yardstick: the least a Node HTTP JSON server can do. Almanac's figures are ratios to this.
// It keeps prom-client's default metrics (the event-loop monitor and GC observer Almanac also
// runs) so that the bench can read the yardstick's own stalls the way it reads Almanac's.
const registry = new Registry();
collectDefaultMetrics({ register: registry });
const body = JSON.stringify({ hello: "world" });
const server = createServer((req, res) => {
  if (req.url === "/metrics") {
    void registry.metrics().then((text) => res.end(text));
    return;
  }
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
});
server.keepAliveTimeout = 5000;
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.once("SIGTERM", () => server.close(() => process.exit(0)));
